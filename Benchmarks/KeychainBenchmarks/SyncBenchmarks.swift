import Benchmark
import Foundation
import Keychain
import KeychainEmbedded
import KeychainSupport
import KeychainSync
import Synchronization

/// Sync over a bare repository on this machine (git's own transport, no network; Docs/Sync.md):
/// the first sync of `count` synchronizable items, as the first device publishes them and as a
/// joining device applies them; one changed item reaching another device (the writer's sync,
/// then the reader's); and beside it git's own share of that, on the same remote: a fetch and a
/// push of one file by one clone, and a fetch by another.
func syncBenchmarks(count: Int, scale: Scale) {
    let label = Scale.label(count)
    Benchmark(
        "sync · first sync of \(label) items · the first device publishes them",
        configuration: scale.configuration(rounds: 5, metrics: [.wallClock]),
        closure: { benchmark in
            let circle = SyncCircle.current.withLock { $0! }
            circle.forgetLaptopsSync()
            let remote = circle.newRemote()
            benchmark.startMeasurement()
            let report = circle.sync(circle.laptop, .setUp(remote: remote, deviceName: "laptop"))
            benchmark.stopMeasurement()
            precondition(report.published == count, "published \(report.published) of \(count)")
        }, setup: failLoudly { try SyncCircle.start(count: count, joined: false) })
    Benchmark(
        "sync · first sync of \(label) items · a joining device applies them",
        configuration: scale.configuration(rounds: 5, metrics: [.wallClock]),
        closure: { benchmark in
            let circle = SyncCircle.current.withLock { $0! }
            let desktop = circle.newDevice()
            let code = circle.askToJoin(desktop)
            benchmark.startMeasurement()
            let report = circle.sync(desktop, .confirmJoin(code: code))
            benchmark.stopMeasurement()
            precondition(report.applied == count, "applied \(report.applied) of \(count)")
        }, setup: failLoudly { try SyncCircle.start(count: count, joined: false, setUp: true) })
    Benchmark(
        "sync · one changed item reaches another device · \(label) items",
        configuration: scale.configuration(rounds: 20, metrics: [.wallClock]),
        closure: { benchmark in
            let circle = SyncCircle.current.withLock { $0! }
            circle.changeOneItem()
            benchmark.startMeasurement()
            _ = circle.sync(circle.laptop, .now)
            let report = circle.sync(circle.desktop, .now)
            benchmark.stopMeasurement()
            precondition(report.applied == 1, "applied \(report.applied)")
        }, setup: failLoudly { try SyncCircle.start(count: count, joined: true) })
    Benchmark(
        "git · a fetch and push of one file, and a fetch by another clone · \(label) items",
        configuration: scale.configuration(rounds: 20, metrics: [.wallClock]),
        closure: { _ in
            let circle = SyncCircle.current.withLock { $0! }
            circle.gitAlone()
        }, setup: failLoudly { try SyncCircle.start(count: count, joined: false, setUp: true) })
}

/// Two embedded keychains (two device secrets) and a bare repository, in the fixtures' folder.
final class SyncCircle: Sendable {
    static let current = Mutex<SyncCircle?>(nil)

    let directory: URL
    let laptop: EmbeddedTransport
    let desktop: EmbeddedTransport
    private let remote = Mutex("")
    private let changes = Mutex(0)

    private init(directory: URL) {
        self.directory = directory
        laptop = Self.keychain(directory.appendingPathComponent("laptop"))
        desktop = Self.keychain(directory.appendingPathComponent("desktop"))
    }

    private static func keychain(_ directory: URL) -> EmbeddedTransport {
        EmbeddedTransport(directory: directory, accessGroups: ["bench"], actsForOwner: true, sharedUnlock: false)
    }

    /// A laptop of `count` synchronizable items; with `setUp`, its circle on a new remote; with
    /// `joined`, a desktop in the circle that has synced them too.
    static func start(count: Int, joined: Bool, setUp: Bool = false) throws {
        let directory = Fixture.root.appendingPathComponent("sync-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Fixture.root.appendingPathComponent("sync-\(getpid())")) }
        let circle = SyncCircle(directory: directory)
        for index in 0..<count {
            let item = NewItem(
                itemClass: .genericPassword,
                attributes: ["svce": .string("bench-sync"), "acct": .string("account-\(index)")], synchronizable: true,
                secret: SecretBytes(utf8: "secret-\(index)"))
            _ = try circle.laptop.perform(.add(item))
        }
        current.withLock { $0 = circle }
        guard setUp || joined else { return }
        _ = circle.sync(circle.laptop, .setUp(remote: circle.newRemote(), deviceName: "laptop"))
        if joined { _ = circle.sync(circle.desktop, .confirmJoin(code: circle.askToJoin(circle.desktop))) }
    }

    /// Runs `command` on `device`; a failure ends the benchmark.
    func sync(_ device: EmbeddedTransport, _ command: SyncCommand) -> SyncReport {
        do {
            guard case .sync(let report) = try device.perform(.sync(command)) else {
                preconditionFailure("sync \(command) answered out of turn")
            }
            return report
        } catch {
            fatalError("sync \(command) failed: \(error.message)")
        }
    }

    /// A new, empty bare repository, now the circle's remote.
    func newRemote() -> String {
        let path = directory.appendingPathComponent("remote-\(UUID().uuidString).git").path
        let spawned = CleanSpawn.spawn(
            "/usr/bin/git", arguments: ["git", "init", "-q", "--bare", "-b", "main", path],
            environment: ["PATH": "/usr/bin:/bin"], standardStreams: (.null, .null, .null))
        guard case .success(let pid) = spawned else { preconditionFailure("git init: \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        precondition(status == 0, "git init failed")
        remote.withLock { $0 = path }
        return path
    }

    /// Removes the laptop's sync state and clone, as if sync had never been set up on it.
    func forgetLaptopsSync() {
        let keychain = directory.appendingPathComponent("laptop")
        try? FileManager.default.removeItem(at: keychain.appendingPathComponent("sync-state"))
        try? FileManager.default.removeItem(at: keychain.appendingPathComponent("sync-remote"))
    }

    /// A new, empty keychain: another device.
    func newDevice() -> EmbeddedTransport {
        Self.keychain(directory.appendingPathComponent("device-\(UUID().uuidString)"))
    }

    /// `device` asks to join, the laptop answers, `device` shows the code and the laptop approves
    /// it with that code (Docs/Sync.md, "Joining"); returns the code it confirms.
    func askToJoin(_ device: EmbeddedTransport) -> String {
        _ = sync(device, .join(remote: remote.withLock { $0 }, deviceName: "device"))
        _ = sync(laptop, .answer(device: nil))
        let shown = sync(device, .showJoinCode)
        guard let code = shown.members.first(where: { $0.name == "laptop" })?.code else {
            preconditionFailure("no code")
        }
        _ = sync(laptop, .approve(code: code))
        return code
    }

    /// The laptop changes one item's secret.
    func changeOneItem() {
        let change = changes.withLock {
            $0 += 1
            return $0
        }
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: ["svce": .string("bench-sync"), "acct": .string("account-0")],
            synchronizable: .yes)
        guard (try? laptop.perform(.update(query, ItemChanges(secret: SecretBytes(utf8: "changed-\(change)"))))) != nil
        else { preconditionFailure("update failed") }
    }

    /// What git alone does in one change's sync: one clone fetches and pushes a file of a
    /// record's size, the other fetches.
    func gitAlone() {
        let path = remote.withLock { $0 }
        let (writer, reader) = (
            GitTransport(remote: path, directory: directory.appendingPathComponent("clone-a")),
            GitTransport(remote: path, directory: directory.appendingPathComponent("clone-b"))
        )
        do {
            let snapshot = try writer.fetch()
            let bytes = (0..<600).map { _ in UInt8.random(in: 0...255) }
            guard case .published = try writer.publish(["devices/bench/file": bytes], over: snapshot.token) else {
                preconditionFailure("the push was refused")
            }
            _ = try reader.fetch()
        } catch {
            preconditionFailure("git: \(error)")
        }
    }
}
