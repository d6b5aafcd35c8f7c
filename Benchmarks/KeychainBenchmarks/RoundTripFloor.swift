import Foundation
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// The floor under every request through keychaind: a round trip between two processes on a
/// Unix stream socket, 128 bytes each way, to `cat` (C, which writes back what it reads and does
/// nothing else). A read through keychaind is this round trip and the daemon's own work; what
/// one round trip costs on this machine (two wake-ups of a process, often on the other core) is
/// what no request through a daemon can go under.
final class RoundTripFloor: Sendable {
    static let shared = RoundTripFloor()

    private let descriptor: Int32
    private let child: pid_t

    /// `cat`, started clean (``CleanSpawn``), its standard input and output the far end of a
    /// socket pair whose ends close on exec.
    private init() {
        var ends: [Int32] = [-1, -1]
        precondition(
            socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0,
            "socketpair failed")
        let spawned = CleanSpawn.spawn(
            "/bin/cat", arguments: ["cat"], environment: [:],
            standardStreams: (.descriptor(ends[1]), .descriptor(ends[1]), .null))
        close(ends[1])
        guard case .success(let pid) = spawned else { preconditionFailure("cannot start /bin/cat: \(spawned)") }
        descriptor = ends[0]
        child = pid
        // The process's end ends cat too: its socket closes, and cat is ended by its pid.
        atexit { RoundTripFloor.shared.stop() }
    }

    /// One request and its reply: 128 bytes to cat and the same 128 back.
    func roundTrip() {
        var message = [UInt8](repeating: 0x5a, count: 128)
        let sent = message.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        precondition(sent == 128, "write to cat failed")
        var received = 0
        while received < 128 {
            let count = message.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + received, 128 - received) }
            precondition(count > 0, "cat stopped answering")
            received += count
        }
    }

    private func stop() {
        close(descriptor)
        kill(child, SIGKILL)
        var status: Int32 = 0
        waitpid(child, &status, 0)
    }
}
