import Foundation
import Keychain
import Synchronization

/// keychaind against the embedded keychain in the same run: a one-item read's round trip, and
/// durable adds per second with 1, 4 and 16 clients (each its own connection). The daemon runs
/// on a keychain of its own in `scratch` and is stopped at the end.
func daemonFigures(scratch: URL, rounds: Int) throws {
    var settings = ProcessInfo.processInfo.environment
    settings["XDG_RUNTIME_DIR"] = scratch.appendingPathComponent("run").path
    settings["XDG_DATA_HOME"] = scratch.appendingPathComponent("daemon-data").path
    let environment = settings
    defer { _ = try? DaemonControl.stop(environment: environment) }
    let daemon = DaemonTransport(environment: environment, daemonArguments: ["--idle-lock", "0"])
    let embedded = EmbeddedTransport(directory: scratch.appendingPathComponent("embedded"), accessGroups: ["bench"], sharedUnlock: false)

    @Sendable func item(_ account: String) -> NewItem {
        NewItem(itemClass: .genericPassword, attributes: ["svce": .string("bench"), "acct": .string(account)], secret: SecretBytes(utf8: "secret-\(account)"))
    }
    let query = ItemQuery(itemClass: .genericPassword, attributes: ["svce": .string("bench"), "acct": .string("one")], returns: .data)
    var (throughDaemon, inProcess) = (Timings(), Timings())
    for transport in [daemon, embedded] as [any KeychainTransport] { _ = try transport.perform(.add(item("one"))) }
    for _ in 0..<rounds {
        try throughDaemon.measure { _ = try daemon.perform(.copyMatching(query)) }
        try inProcess.measure { _ = try embedded.perform(.copyMatching(query)) }
    }
    print("one-item read: keychaind median \(format(throughDaemon.median)) (p99 \(format(throughDaemon.percentile(0.99)))); embedded median \(format(inProcess.median)) (p99 \(format(inProcess.percentile(0.99)))); ratio \(String(format: "%.1f", throughDaemon.median / inProcess.median))x (n=\(rounds))")

    for clients in [1, 4, 16] {
        let perClient = 400 / clients
        let failures = Atomic<Int>(0)
        let start = DispatchTime.now().uptimeNanoseconds
        DispatchQueue.concurrentPerform(iterations: clients) { client in
            let connection = DaemonTransport(environment: environment)
            for i in 0..<perClient {
                do {
                    _ = try connection.perform(.add(item("c\(clients)-\(client)-\(i)")))
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let adds = clients * perClient
        print("durable adds through keychaind, \(clients) client\(clients == 1 ? "" : "s"): \(String(format: "%.0f", Double(adds) / seconds)) adds/s (\(adds) adds in \(String(format: "%.2f", seconds)) s, \(failures.load(ordering: .relaxed)) failed)")
    }
}
