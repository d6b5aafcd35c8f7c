import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The benchmark suite in its smoke mode (small keychains, three rounds each): every benchmark
/// runs, and every operation it times gives the answer it checks (a wrong one crashes the run).
@Suite struct BenchmarkSmokeTests {
    @Test func everyBenchmarkRunsAndItsOperationsAnswerRight() throws {
        let fixtures = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keychain-benchmark-smoke-\(UUID().uuidString)")
        defer {
            // A run that crashed left its daemons: each fixture's runtime folder names one.
            for run in (try? FileManager.default.contentsOfDirectory(atPath: fixtures.path))?.filter({
                $0.hasPrefix("run-")
            }) ?? [] {
                var environment = ProcessInfo.processInfo.environment
                environment["XDG_RUNTIME_DIR"] = fixtures.appendingPathComponent(run).path
                _ = try? CommandRunner(environment: environment).run(["daemon", "stop"])
            }
            try? FileManager.default.removeItem(at: fixtures)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["KEYCHAIN_BENCHMARK_SMOKE"] = "1"
        environment["KEYCHAIN_BENCHMARK_DIR"] = fixtures.path
        let process = try SpawnedProgram(
            CommandRunner.binary.deletingLastPathComponent().appendingPathComponent("KeychainBenchmarks").path, [],
            environment: environment, capturingOutput: true, capturingErrors: true)
        let printed = String(decoding: process.readOutputToEnd(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(Self.crashReport(in: printed))")

        let ran = Set(
            printed.split(separator: "\n").compactMap { line -> String? in
                guard let range = line.range(of: "Debug results for ") else { return nil }
                return String(line[range.upperBound...].dropLast())
            })
        var expected: Set<String> = [
            "durable adds · daemon · 1 client", "durable adds · daemon · 4 clients",
            "durable adds · daemon · 16 clients",
            "passcode KDF (one unlock)", "fsync of one 4 KiB write (the floor)", "read · plain SQLite · 50",
            "read · sealed floor · 50",
            "round trip to another process, 128 bytes each way (the floor)",
            "touch to evaluatePolicy reply (simulated sensor)", "footprint · daemon · 200",
            "bridge of the 100 items to [[String: Any]] (Foundation, the caller's) · embedded · 50",
            "backup · embedded · 200", "restore · embedded · 200 into an empty keychain",
            "copy of the database file (the floor of a backup) · 200",
            "sync · first sync of 20 items · the first device publishes them",
            "sync · first sync of 20 items · a joining device applies them",
            "sync · one changed item reaches another device · 20 items",
            "git · a fetch and push of one file, and a fetch by another clone · 20 items",
        ]
        for count in ["50", "200"] {
            expected.insert("first read after opening · embedded · \(count)")
            for mode in ["embedded", "daemon"] {
                for operation in ["read", "miss", "add", "update", "delete", "query 100 items' attributes"] {
                    expected.insert("\(operation) · \(mode) · \(count)")
                }
            }
        }
        #expect(ran == expected)
        // The footprint benchmark found the daemon and the database.
        let resident = Self.firstValue(of: "daemon RSS (KiB)", in: printed) ?? 0
        #expect(resident > 1000)
        #expect((Self.firstValue(of: "daemon peak RSS, with the unlock's scrypt (KiB)", in: printed) ?? 0) >= resident)
        #expect((Self.firstValue(of: "database bytes per item", in: printed) ?? 0) > 100)
        // The backup benchmark wrote a file of its 300 items (200, and the query's 100).
        #expect((Self.firstValue(of: "backup bytes", in: printed) ?? 0) > 300 * 100)
    }

    /// What a crashed run said about its crash: the lines before the backtracer's banner (a
    /// `Fatal error`, or the C library's own message such as a heap check's), the crashed
    /// thread's frames, and the benchmark that was running; a run that ended otherwise, its tail.
    static func crashReport(in printed: String) -> String {
        let lines = printed.split(separator: "\n", omittingEmptySubsequences: false)
        guard
            let banner = lines.firstIndex(where: { $0.hasPrefix("*** Signal") || $0.hasPrefix("*** Program crashed") })
        else {
            return String(printed.suffix(2000))
        }
        let running =
            lines[..<banner].last { $0.contains("ETA:") }.map { "running: \($0.split(separator: "|").last ?? "")" }
            ?? ""
        let before = lines[max(0, banner - 4)..<banner]
        let crashed = lines[banner...].drop { !$0.contains(" crashed:") }.prefix(40)
        return ([Substring(running)] + before + crashed).joined(separator: "\n")
    }

    /// The first value of `metric`'s histogram in a run's output (its lowest sample).
    static func firstValue(of metric: String, in printed: String) -> Double? {
        let lines = printed.split(separator: "\n", omittingEmptySubsequences: false)
        guard let header = lines.firstIndex(where: { $0 == "\(metric):" }) else { return nil }
        return lines[(header + 1)...].lazy.compactMap { Double($0.split(separator: " ").first ?? "") }.first
    }
}
