import Foundation
import Keychain

/// Watches, while a signature waits for the owner, whether the client that asked is still there:
/// once it has exited or closed its connection, the context is invalidated, which takes the
/// sheet down (keychaind ends the authentication it shows for that context), and the reuse
/// window forgets it. Without it, the sheet of a client that died stayed on its dead terminal
/// until it timed out, and later sheets queued behind it.
final class ClientWatch: Sendable {
    /// How often the client is looked at, in seconds.
    static let interval = 0.1

    private let stop = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts watching for `context`.
    init(
        _ context: LAContext, authentications: SSHAgentAuthentications, clientHasGone: @escaping @Sendable () -> Bool
    ) {
        let thread = Thread { [stop, finished] in
            defer { finished.signal() }
            while stop.wait(timeout: .now() + Self.interval) == .timedOut {
                guard clientHasGone() else { continue }
                authentications.forget(context)
                context.invalidate()
                return
            }
        }
        thread.stackSize = 256 << 10
        thread.start()
    }

    /// Stops watching, once the signature is made or refused; returns when the watch has ended,
    /// so that nothing it looks at (the client's pidfd, its socket) is used after.
    func end() {
        stop.signal()
        finished.wait()
    }
}
