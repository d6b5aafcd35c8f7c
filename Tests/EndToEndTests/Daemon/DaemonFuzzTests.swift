#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KeychainProtocol
import Synchronization
import Testing

/// The daemon takes anything a client sends: random, mutated, oversized and truncated messages
/// from many connections at once, while a well-behaved client keeps being served.
///
/// Each hostile message costs the daemon a connection (it answers the first bad message and
/// closes): about 0.65 ms in a debug build here, so the million takes some 11 minutes. The daemon
/// and the senders run at the lowest priority (nice 19): the other suites run beside it at full
/// speed, and the fuzzing takes the processor they leave. `KEYCHAIN_FUZZ_MESSAGES` sets another
/// count (a quick local run: 20000).
@Suite struct DaemonFuzzTests {
    /// How many hostile messages: `KEYCHAIN_FUZZ_MESSAGES`, or a million.
    static let messages = ProcessInfo.processInfo.environment["KEYCHAIN_FUZZ_MESSAGES"].flatMap(Int.init) ?? 1_000_000

    @Test func hostileMessagesNeitherCrashNorStallTheDaemon() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        #expect(try daemon.shell.script("nice -n 19 \"$KEYCHAINCTL\" daemon start").status == 0)
        let pid = try #require(try daemon.daemonPID())
        let context = AuthenticationContextID.random()
        let valid = [
            KeychainRequest.add(
                NewItem(
                    itemClass: .genericPassword, attributes: ["svce": .string("s"), "acct": .string("a")],
                    secret: SecretBytes(utf8: "x"))),
            .copyMatching(
                ItemQuery(
                    itemClass: .genericPassword, attributes: ["svce": .string("s")], returns: [.data, .attributes])),
            .verifyPasscode(SecretBytes(utf8: "1234"), context: context),
            .authenticateOwner(
                OwnerAuthentication(
                    factors: .biometry, reason: "fuzz", cancelTitle: "Cancel", fallbackTitle: "Enter Password",
                    context: context)),
            .update(ItemQuery(itemClass: .internetPassword), ItemChanges(attributes: ["labl": .string("l")])),
            .deviceStatus,
        ].map(RequestCoder.encode)
        let sent = Atomic<Int>(0)
        let served = Atomic<Int>(0)
        let refusedWellBehaved = Atomic<Int>(0)
        let socket = daemon.socket
        let senders = 4
        // The well-behaved client: one connection, a status request again and again.
        let wellBehaved = Thread {
            guard let client = try? RawDaemonClient(socket: socket) else {
                refusedWellBehaved.add(1, ordering: .relaxed)
                return
            }
            while sent.load(ordering: .relaxed) < Self.messages {
                if case .success? = client.exchange(.deviceStatus) {
                    served.add(1, ordering: .relaxed)
                } else {
                    refusedWellBehaved.add(1, ordering: .relaxed)
                }
                usleep(10_000)
            }
        }
        wellBehaved.start()
        // Threads of their own, so that lowering their priority leaves the shared pools alone.
        let hostile = (0..<senders).map { _ in
            Thread {
                // On Linux the nice value is per thread, and `who` 0 is the calling thread.
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
                var generator = SystemRandomNumberGenerator()
                while sent.add(HostileMessages.perConnection, ordering: .relaxed).newValue <= Self.messages
                    + HostileMessages.perConnection
                {
                    guard let client = try? RawDaemonClient(socket: socket) else { continue }
                    client.send(HostileMessages.batch(valid, using: &generator))
                    client.finishSending()
                    _ = client.isClosedByDaemon
                }
            }
        }
        hostile.forEach { $0.start() }
        while !wellBehaved.isFinished || hostile.contains(where: { !$0.isFinished }) { usleep(10_000) }
        #expect(sent.load(ordering: .relaxed) >= Self.messages)
        #expect(served.load(ordering: .relaxed) > 0)
        #expect(refusedWellBehaved.load(ordering: .relaxed) == 0, "the well-behaved client was refused or dropped")
        #expect(try daemon.daemonPID() == pid, "the daemon did not survive")
    }
}

/// Hostile bytes for the daemon.
enum HostileMessages {
    /// Messages in one connection: the daemon answers the first bad one and closes it.
    static let perConnection = 1

    /// `perConnection` frames: random bytes, valid requests with bytes changed, lengths over
    /// the limit, and frames cut short.
    static func batch(_ valid: [[UInt8]], using generator: inout SystemRandomNumberGenerator) -> [UInt8] {
        var stream: [UInt8] = []
        for _ in 0..<perConnection {
            var body: [UInt8]
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                body = (0..<Int.random(in: 0...48, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                if !body.isEmpty && Bool.random(using: &generator) { body[0] = WireFrame.version }
            case 1:
                body = valid[Int.random(in: 0..<valid.count, using: &generator)]
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    body[Int.random(in: 0..<body.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
                // Never a request the fuzzer means to be obeyed: a changed tag byte stays unknown.
                if body.count > 1 && body[1] != 5 && body[1] != 14 { body[1] = 200 }
            case 2:
                stream += WireFrame.header(WireFrame.maximumRequest + Int.random(in: 1...1 << 20, using: &generator))
                continue
            default:
                body = valid[Int.random(in: 0..<valid.count, using: &generator)]
                stream += WireFrame.header(body.count + 10) + body
                continue
            }
            stream += WireFrame.header(body.count) + body
        }
        return stream
    }
}
