import Foundation
import Keychain
import KeychainEmbedded
import Synchronization

/// How a benchmark reaches the keychain: in process, or through keychaind's socket.
enum Mode: String, CaseIterable {
    case embedded
    case daemon
}

/// A keychain filled for the benchmarks, kept on disk between runs.
///
/// ordo-one/benchmark runs every benchmark in a process of its own, so a keychain of 100,000
/// items is filled once (16 writers at once, so that group commit shares the fsyncs) and reused
/// by every later process and run. It holds `count` generic passwords in service `bench`
/// (accounts `account-0`…, secrets `secret-0`…), 100 more in service `bench-query`, and has the
/// passcode ``Fixture/passcode``. Fixtures live in `$KEYCHAIN_BENCHMARK_DIR`, by default
/// `$TMPDIR/swift-keychain-benchmarks-<uid>`; delete that folder to fill them anew (after a
/// change of the keychain's format, for example). A daemon fixture is refilled for a benchmark
/// executable at another path, which keychaind takes for another app.
///
/// Each process opens the fixture it needs and unlocks it; in daemon mode it starts keychaind
/// (from beside the benchmark executable) on the fixture, with a runtime directory of its own,
/// and stops it when the process exits.
struct Fixture {
    static let passcode = "correct horse"
    /// Items in service `bench-query`, all returned by the 100-item query.
    static let queryItems = 100

    let mode: Mode
    let count: Int
    /// The fixture's data folder: the keychain is its `keychain` folder.
    let dataHome: URL
    /// For daemon mode: the environment keychaind and its clients share.
    let environment: [String: String]

    /// The folder holding every fixture.
    static let root: URL = {
        let environment = ProcessInfo.processInfo.environment
        if let chosen = environment["KEYCHAIN_BENCHMARK_DIR"], !chosen.isEmpty { return URL(fileURLWithPath: chosen) }
        return FileManager.default.temporaryDirectory.appendingPathComponent("swift-keychain-benchmarks-\(getuid())")
    }()

    /// This benchmark executable, as keychaind names the app it is.
    private static let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""

    /// Opens (filling it first if it does not exist yet) the fixture of `count` items for
    /// `mode`, unlocks it, and makes it the transport of the SecItem functions.
    static func open(_ mode: Mode, count: Int) throws -> Fixture {
        let dataHome = root.appendingPathComponent("\(mode.rawValue)-\(count)")
        let runtime = root.appendingPathComponent("run-\(getpid())-\(mode.rawValue)-\(count)")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = dataHome.path
        environment["XDG_RUNTIME_DIR"] = runtime.path
        let fixture = Fixture(mode: mode, count: count, dataHome: dataHome, environment: environment)
        // keychaind names an app by its executable, so a daemon fixture's items are those of the
        // benchmark executable that filled it: one built elsewhere (another scratch path) sees
        // none of them, and fills its own fixture.
        let filled = dataHome.appendingPathComponent("filled")
        let filler = Data((mode == .daemon ? Self.executable : "").utf8)
        let isFilled = (try? Data(contentsOf: filled)) == filler
        if !isFilled {
            try? FileManager.default.removeItem(at: dataHome)
            try FileManager.default.createDirectory(at: dataHome, withIntermediateDirectories: true)
        }
        try FileManager.default.createDirectory(
            at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        RunningDaemons.register(fixture)
        ProcessKeychain.transport = fixture.transport()
        if isFilled {
            try KeychainDevice.unlock(passcode: SecretBytes(utf8: passcode))
        } else {
            try KeychainDevice.setPasscode(current: nil, new: SecretBytes(utf8: passcode))
            try fixture.fill()
            try filler.write(to: filled)
        }
        return fixture
    }

    /// A new connection to the fixture: the keychain in this process, or a connection to the
    /// fixture's keychaind (started on the first request).
    func transport() -> any KeychainTransport {
        switch mode {
        case .embedded:
            EmbeddedTransport(directory: dataHome.appendingPathComponent("keychain"), accessGroups: ["bench"])
        case .daemon:
            DaemonTransport(environment: environment, daemonArguments: ["--idle-lock", "0"])
        }
    }

    /// keychaind's process, in daemon mode.
    func daemonPID() throws -> Int32? {
        guard mode == .daemon else { return nil }
        return try DaemonControl.status(starting: false, environment: environment)?.pid
    }

    private func fill() throws {
        let total = count + Fixture.queryItems
        let failures = Atomic<Int>(0)
        // In daemon mode each writer has its own connection, as separate apps would.
        let embedded = mode == .embedded ? ProcessKeychain.transport : nil
        DispatchQueue.concurrentPerform(iterations: 16) { writer in
            let connection = embedded ?? transport()
            for i in stride(from: writer, to: total, by: 16) {
                let item = i < count ? Fixture.item(i) : Fixture.queryItem(i - count)
                if (try? connection.perform(.add(item))) == nil { failures.add(1, ordering: .relaxed) }
            }
        }
        guard failures.load(ordering: .relaxed) == 0 else {
            throw KeychainError(
                .errSecIO, "\(failures.load(ordering: .relaxed)) of \(total) adds failed while filling \(dataHome.path)"
            )
        }
    }

    static func item(_ index: Int) -> NewItem {
        NewItem(
            itemClass: .genericPassword, attributes: ["svce": .string("bench"), "acct": .string("account-\(index)")],
            secret: SecretBytes(utf8: "secret-\(index)"))
    }

    static func queryItem(_ index: Int) -> NewItem {
        NewItem(
            itemClass: .genericPassword,
            attributes: [
                "svce": .string("bench-query"), "acct": .string("query-\(index)"),
                "labl": .string("Query item \(index)"),
            ],
            secret: SecretBytes(utf8: "query-secret-\(index)"))
    }
}

/// The daemons this process started, stopped when it exits, and their runtime folders removed.
enum RunningDaemons {
    private static let started = Mutex<[Fixture]>([])

    static func register(_ fixture: Fixture) {
        let first = started.withLock { fixtures in
            fixtures.append(fixture)
            return fixtures.count == 1
        }
        if first { atexit { RunningDaemons.stopAll() } }
    }

    static func stopAll() {
        for fixture in started.withLock({ $0 }) {
            if fixture.mode == .daemon { _ = try? DaemonControl.stop(environment: fixture.environment) }
            if let runtime = fixture.environment["XDG_RUNTIME_DIR"] {
                try? FileManager.default.removeItem(atPath: runtime)
            }
        }
    }
}
