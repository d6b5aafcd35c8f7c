import CKeychainSupport
import Foundation
import KeychainProtocol
import ProcessBoundSockets
import Synchronization

/// A prompt agent's connection, as the system daemon uses it: the authentications of the agent's
/// user send it ``PromptAgentCommand``s, one sheet at a time, and read its ``PromptAgentEvent``s.
///
/// Every event is read from the agent's own process (``ClientSocket``): a byte another process
/// writes on the connection breaks the channel. So does a malformed event, a silence of
/// ``ClientSocket/stallTimeout`` seconds where an answer is due, and the agent's exit; a broken
/// channel draws no more sheets, and an authentication in progress ends as if cancelled.
final class PromptAgentChannel: Sendable {
    private let socket: ClientSocket
    private let pid: Int32
    private let pidfd: Int32
    /// Held for one command and its event: commands of two sheets never interleave.
    private let exchanges = Mutex(false)
    private let broken = Atomic(false)
    /// One sheet at a time: a second app's authentication waits until the first sheet closes.
    private let sheetSlot = DispatchSemaphore(value: 1)

    /// The agent on `socket`, run by process `pid` (whose pidfd the connection keeps open).
    init(socket: ClientSocket, pid: Int32, pidfd: Int32) {
        self.socket = socket
        self.pid = pid
        self.pidfd = pidfd
    }

    /// True while the agent runs and its connection has not failed.
    var isAlive: Bool { !broken.load(ordering: .acquiring) && kc_pidfd_is_alive(pidfd) == 1 }

    /// Breaks the channel and waits for an exchange under way to end, so that the connection
    /// can be closed under nobody.
    func close() {
        markBroken()
        exchanges.withLock { _ in }
    }

    /// Waits until no other sheet is shown through this agent; pair with ``endSheet()``.
    func beginSheet() { sheetSlot.wait() }

    /// Lets the next sheet be shown.
    func endSheet() { sheetSlot.signal() }

    /// Sends `command` and returns the agent's event; nil once the channel is broken.
    func exchange(_ command: PromptAgentCommand) -> PromptAgentEvent? {
        exchanges.withLock { _ in
            guard send(command) else { return nil }
            var none = false
            return awaitEvent(stopping: nil, stopSent: &none)
        }
    }

    /// Asks for the passcode and waits for it, sending ``PromptAgentCommand/stopReading`` once
    /// `shouldStop` turns true; nil when the entry ended without one, or the channel broke. A
    /// stop sent is answered after the entry's event, whichever ended it.
    func readPasscode(shouldStop: () -> Bool) -> SecretBytes? {
        exchanges.withLock { _ in
            var stopSent = false
            let event = withoutActuallyEscaping(shouldStop) { stop in
                send(.readPasscode) ? awaitEvent(stopping: stop, stopSent: &stopSent) : nil
            }
            guard case .passcode(let passcode)? = event else { return nil }
            if stopSent {
                var none = false
                guard case .done? = awaitEvent(stopping: nil, stopSent: &none) else {
                    markBroken()
                    return nil
                }
            }
            return passcode
        }
    }

    private func send(_ command: PromptAgentCommand) -> Bool {
        guard isAlive else { return false }
        var body = PromptAgentCoder.encode(command)
        guard socket.send(&body) else {
            markBroken()
            return false
        }
        return true
    }

    /// The next event; with `stopping`, waits in tenths of a second, and tells the agent to stop
    /// the entry once `stopping` says so.
    private func awaitEvent(stopping: (() -> Bool)?, stopSent: inout Bool) -> PromptAgentEvent? {
        while true {
            let wait: Int32? = stopping == nil ? ClientSocket.stallTimeout * 1000 : 100
            switch socket.receive(from: pid, idleMilliseconds: wait) {
            case .frame(.body(var body)):
                defer { body.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
                guard let event = try? PromptAgentCoder.event(body) else {
                    markBroken()
                    return nil
                }
                return event
            case .timedOut where stopping != nil && isAlive:
                if !stopSent, stopping?() == true {
                    guard send(.stopReading) else { return nil }
                    stopSent = true
                }
            default:
                markBroken()
                return nil
            }
        }
    }

    private func markBroken() {
        broken.store(true, ordering: .releasing)
    }
}
