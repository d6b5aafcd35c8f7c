import Benchmark
import Foundation
import Keychain
import Synchronization

/// The keychain's benchmark suite (ordo-one/benchmark). Benchmarks/README.md says how to run it:
///
///     swift package --disable-sandbox benchmark            # every benchmark, release build
///     swift package --disable-sandbox benchmark --filter 'read · embedded · .*'   # a whole-name match
///     KEYCHAIN_BENCHMARK_SMOKE=1 swift run KeychainBenchmarks   # CI: small keychains, few rounds
///
/// Item operations go through the public SecItem functions, embedded and through keychaind, on
/// keychains of 1,000 and 100,000 items (``Fixture``), with the caller's bridge of the 100-item
/// query's result timed apart, once; then durable adds with 1, 4 and 16
/// clients, the passcode KDF, the first read after opening (the row ledger's check), a touch's
/// way to the `evaluatePolicy` reply, keychaind's memory and the database's bytes per item, and
/// four floors measured in the same run: the same reads from plain SQLite, the work a sealed read
/// must do (``SealedReadFloor``), one fsync, and a round trip to another process
/// (``RoundTripFloor``); and a
/// backup of the largest keychain and its restore, beside a copy of its database file; and
/// sync's first sync of 10,000 items and one change reaching another device, beside git's share.
let benchmarks: @Sendable () -> Void = {
    let scale = Scale.current
    for count in scale.itemCounts {
        for mode in Mode.allCases {
            itemBenchmarks(mode: mode, count: count, scale: scale)
        }
        Benchmark(
            "first read after opening · embedded · \(Scale.label(count))",
            configuration: scale.configuration(rounds: 15),
            closure: { _ in
                // A keychain opened anew in this process: the row ledger is checked against every row.
                let reopened = CurrentFixture.get().transport()
                let query = ItemQuery(
                    itemClass: .genericPassword, attributes: ["svce": .string("bench"), "acct": .string("account-0")],
                    returns: .data)
                guard case .items(let found) = try? reopened.perform(.copyMatching(query)), found.count == 1 else {
                    preconditionFailure("first read failed")
                }
            }, setup: failLoudly { CurrentFixture.set(try Fixture.open(.embedded, count: count)) })
    }
    let smallest = scale.itemCounts[0]
    for clients in [1, 4, 16] {
        durableAdds(clients: clients, count: smallest, scale: scale)
    }
    Benchmark(
        "passcode KDF (one unlock)", configuration: scale.configuration(rounds: 15),
        closure: { _ in
            do { try KeychainDevice.unlock(passcode: SecretBytes(utf8: Fixture.passcode)) } catch {
                preconditionFailure("unlock: \(error)")
            }
        }, setup: failLoudly { CurrentFixture.set(try Fixture.open(.embedded, count: smallest)) })
    Benchmark("fsync of one 4 KiB write (the floor)", configuration: scale.configuration(rounds: 1000)) { _ in
        FsyncFloor.shared.writeAndSync()
    }
    Benchmark(
        "round trip to another process, 128 bytes each way (the floor)",
        configuration: scale.configuration(rounds: 5000)
    ) { _ in
        RoundTripFloor.shared.roundTrip()
    }
    Benchmark(
        "read · plain SQLite · \(Scale.label(smallest))", configuration: scale.configuration(rounds: 5000),
        closure: { _ in
            PlainSQLiteBaseline.current.read(Int.random(in: 0..<smallest))
        }, setup: failLoudly { PlainSQLiteBaseline.current = try PlainSQLiteBaseline.filled(count: smallest) })
    Benchmark(
        "read · sealed floor · \(Scale.label(smallest))", configuration: scale.configuration(rounds: 5000),
        closure: { _ in
            SealedReadFloor.current.read(Int.random(in: 0..<smallest))
        }, setup: failLoudly { SealedReadFloor.current = try SealedReadFloor.filled(count: smallest) })
    // Each evaluation's thread ends while the benchmark runs: no allocation counting (Scale).
    Benchmark(
        "touch to evaluatePolicy reply (simulated sensor)",
        configuration: scale.configuration(rounds: 25, metrics: [.wallClock]),
        closure: { benchmark in
            TouchToReply.shared.measureOne(benchmark)
        }, setup: failLoudly { try TouchToReply.shared.prepare() })
    footprint(count: scale.itemCounts.last ?? smallest, scale: scale)
    backupBenchmarks(count: scale.itemCounts.last ?? smallest, scale: scale)
    syncBenchmarks(count: scale.syncItems, scale: scale)
}

/// Durable adds through keychaind: `clients` connections adding at once, as many apps would;
/// each acknowledged add is committed and synced (group commit shares the fsyncs).
func durableAdds(clients: Int, count: Int, scale: Scale) {
    let addsPerRound = scale.addsPerThroughputRound
    let rate = BenchmarkMetric.custom("adds/s", polarity: .prefersLarger, useScalingFactor: false)
    Benchmark(
        "durable adds · daemon · \(clients) client\(clients == 1 ? "" : "s")",
        configuration: scale.configuration(rounds: 10, metrics: [.wallClock, rate]),
        closure: { benchmark in
            let connections = (0..<clients).map { _ in CurrentFixture.get().transport() }
            let round = UUID().uuidString
            let start = DispatchTime.now().uptimeNanoseconds
            // A thread per client: `concurrentPerform` runs only as many at once as there are
            // cores, which made 16 clients two.
            let finished = DispatchGroup()
            for client in 0..<clients {
                finished.enter()
                Thread {
                    defer { finished.leave() }
                    for i in 0..<(addsPerRound / clients) {
                        let item = NewItem(
                            itemClass: .genericPassword,
                            attributes: ["svce": .string("bench-added"), "acct": .string("\(round)-\(client)-\(i)")],
                            secret: SecretBytes(utf8: "added-secret"))
                        do { _ = try connections[client].perform(.add(item)) } catch {
                            preconditionFailure("add through keychaind: \(error)")
                        }
                    }
                }.start()
            }
            finished.wait()
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            benchmark.measurement(rate, Int(Double(addsPerRound) / seconds))
        },
        setup: failLoudly { CurrentFixture.set(try Fixture.open(.daemon, count: count)) },
        teardown: { ItemOperations.removeAdded() })
}

/// keychaind's resident memory after 2,000 reads on the largest fixture, its peak, and the
/// database's bytes per item. The peak is the resident memory plus the passcode's scrypt
/// (N=2^15, r=8: 32 MiB, for the unlock), which the keychain's floor on guessing work sets.
func footprint(count: Int, scale: Scale) {
    let resident = BenchmarkMetric.custom("daemon RSS (KiB)", useScalingFactor: false)
    let peak = BenchmarkMetric.custom("daemon peak RSS, with the unlock's scrypt (KiB)", useScalingFactor: false)
    let perItem = BenchmarkMetric.custom("database bytes per item", useScalingFactor: false)
    Benchmark(
        "footprint · daemon · \(Scale.label(count))",
        configuration: scale.configuration(rounds: 1, metrics: [resident, peak, perItem]),
        closure: { benchmark in
            let fixture = CurrentFixture.get()
            for _ in 0..<2000 { ItemOperations.read(Int.random(in: 0..<count)) }
            let pid = try? fixture.daemonPID()
            benchmark.measurement(resident, Footprint.residentKiB(pid: pid ?? nil, peak: false))
            benchmark.measurement(peak, Footprint.residentKiB(pid: pid ?? nil, peak: true))
            benchmark.measurement(perItem, Footprint.bytesPerItem(fixture))
        },
        setup: failLoudly { CurrentFixture.set(try Fixture.open(.daemon, count: count)) })
}

/// read, miss, add, update, delete and the 100-item query on one fixture; on the first embedded
/// one, also the caller's bridge of the query's result to Swift dictionaries.
func itemBenchmarks(mode: Mode, count: Int, scale: Scale) {
    let suffix = "\(mode.rawValue) · \(Scale.label(count))"
    let open = failLoudly { CurrentFixture.set(try Fixture.open(mode, count: count)) }
    let added = Atomic<Int>(0)
    func nextAccount() -> String { "\(getpid())-\(added.add(1, ordering: .relaxed).newValue)" }
    /// One operation, measured alone on the fixture `setup` opens.
    func measure(_ name: String, rounds: Int, _ operation: @escaping () -> Void) {
        Benchmark(
            "\(name) · \(suffix)", configuration: scale.configuration(rounds: rounds),
            closure: { _ in operation() }, setup: open)
    }
    measure("read", rounds: 5000) { ItemOperations.read(Int.random(in: 0..<count)) }
    measure("miss", rounds: 5000) { ItemOperations.miss(Int.random(in: 0..<count)) }
    Benchmark(
        "add · \(suffix)", configuration: scale.configuration(rounds: 1000),
        closure: { _ in ItemOperations.add(nextAccount()) }, setup: open, teardown: { ItemOperations.removeAdded() })
    measure("update", rounds: 1000) { ItemOperations.update(Int.random(in: 0..<count)) }
    Benchmark(
        "delete · \(suffix)", configuration: scale.configuration(rounds: 1000),
        closure: { benchmark in
            // The item to delete is added first, outside the measurement.
            let account = nextAccount()
            ItemOperations.add(account)
            benchmark.startMeasurement()
            ItemOperations.delete(account)
            benchmark.stopMeasurement()
        }, setup: open)
    measure("query 100 items' attributes", rounds: 2000) { ItemOperations.query100() }
    guard mode == .embedded, count == scale.itemCounts[0] else { return }
    // Foundation's share, once: the same wherever the result came from.
    Benchmark(
        "bridge of the 100 items to [[String: Any]] (Foundation, the caller's) · \(suffix)",
        configuration: scale.configuration(rounds: 2000),
        closure: { benchmark in
            let result = ItemOperations.query100()
            benchmark.startMeasurement()
            ItemOperations.bridge(result)
            benchmark.stopMeasurement()
        }, setup: open)
}

/// The fixture the running benchmark opened in its setup.
enum CurrentFixture {
    private static let current = Mutex<Fixture?>(nil)

    static func set(_ fixture: Fixture) { current.withLock { $0 = fixture } }

    static func get() -> Fixture {
        guard let fixture = current.withLock({ $0 }) else { preconditionFailure("no fixture opened") }
        return fixture
    }
}

/// `body` as a setup hook that ends the process with a message when it throws. (Run without the
/// benchmark plugin, as CI's smoke run does, the runner would end quietly with status 0.)
func failLoudly(_ body: @escaping () throws -> Void) -> Benchmark.BenchmarkSetupHook {
    {
        do { try body() } catch {
            FileHandle.standardError.write(Data("benchmark setup failed: \(error)\n".utf8))
            exit(1)
        }
    }
}
