import Benchmark
import Foundation
import Keychain
import KeychainEmbedded

/// A backup of the largest embedded fixture and its restore into an empty keychain, with the
/// file's size; and, in the same run, a floor: a copy of the fixture's database file. Both
/// operations include one derivation of the backup password (scrypt N = 2^17, r = 8).
func backupBenchmarks(count: Int, scale: Scale) {
    let size = BenchmarkMetric.custom("backup bytes", useScalingFactor: false)
    let label = Scale.label(count)
    let file = Fixture.root.appendingPathComponent("backup-\(getpid())-\(count).kcbackup")
    let password = SecretBytes(utf8: "a backup password")
    /// The fixture, opened as its owner would: a backup holds every app's items.
    func openAsOwnerNow() throws {
        let fixture = try Fixture.open(.embedded, count: count)
        CurrentFixture.set(fixture)
        ProcessKeychain.transport = EmbeddedTransport(
            directory: fixture.dataHome.appendingPathComponent("keychain"), accessGroups: ["bench"],
            actsForOwner: true)
    }
    let openAsOwner = failLoudly { try openAsOwnerNow() }
    Benchmark(
        "backup · embedded · \(label)", configuration: scale.configuration(rounds: 5, metrics: [.wallClock, size]),
        closure: { benchmark in
            do {
                _ = try KeychainDevice.backup(to: file, password: password)
            } catch {
                preconditionFailure("backup: \(error)")
            }
            let bytes = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
            benchmark.measurement(size, bytes)
        }, setup: openAsOwner, teardown: { try? FileManager.default.removeItem(at: file) })
    Benchmark(
        "restore · embedded · \(label) into an empty keychain", configuration: scale.configuration(rounds: 5),
        closure: { _ in
            let fresh = Fixture.root.appendingPathComponent("restored-\(getpid())-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: fresh) }
            ProcessKeychain.transport = EmbeddedTransport(
                directory: fresh, accessGroups: ["bench"], actsForOwner: true, sharedUnlock: false)
            guard let report = try? KeychainDevice.restore(from: file, password: password),
                report.added == count + Fixture.queryItems
            else { preconditionFailure("restore failed") }
        },
        setup: failLoudly {
            try openAsOwnerNow()
            _ = try KeychainDevice.backup(to: file, password: password)
        }, teardown: { try? FileManager.default.removeItem(at: file) })
    Benchmark(
        "copy of the database file (the floor of a backup) · \(label)", configuration: scale.configuration(rounds: 5),
        closure: { _ in
            let database = CurrentFixture.get().dataHome.appendingPathComponent("keychain/keychain.db")
            try? FileManager.default.removeItem(at: file)
            guard (try? FileManager.default.copyItem(at: database, to: file)) != nil else {
                preconditionFailure("the database could not be copied")
            }
        }, setup: openAsOwner, teardown: { try? FileManager.default.removeItem(at: file) })
}
