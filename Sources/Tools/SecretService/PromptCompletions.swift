import CKeychainSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Prompts whose sheets finished on their own threads, waiting for the bridge's loop to send
/// their `Completed` signals; posting one wakes the loop through a pipe.
final class PromptCompletions: Sendable {
    private let finished = Mutex<[FinishedPrompt]>([])
    private let pipe: (read: Int32, write: Int32)

    /// Nil when no pipe can be made.
    init?() {
        var ends: [Int32] = [-1, -1]
        guard kc_pipe_cloexec(&ends) == 0 else { return nil }
        pipe = (ends[0], ends[1])
    }

    deinit {
        close(pipe.read)
        close(pipe.write)
    }

    /// The descriptor the loop waits on.
    var descriptor: Int32 { pipe.read }

    /// Hands `prompt` to the loop.
    func post(_ prompt: FinishedPrompt) {
        finished.withLock { $0.append(prompt) }
        _ = write(pipe.write, "x", 1)
    }

    /// Every prompt posted since the last call; empties the pipe.
    func take() -> [FinishedPrompt] {
        var drained = [UInt8](repeating: 0, count: 64)
        var waiting = pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0)
        while poll(&waiting, 1, 0) > 0, read(pipe.read, &drained, drained.count) > 0 {}
        return finished.withLock { prompts in
            defer { prompts = [] }
            return prompts
        }
    }
}

/// A prompt whose sheet finished: to whom, and what its `Completed` signal says.
struct FinishedPrompt: Sendable {
    let client: String
    let prompt: String
    let dismissed: Bool
    let result: DBusValue
}
