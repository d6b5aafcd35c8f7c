import Benchmark
import Foundation

/// How big the suite's keychains are and how long each benchmark runs. The full scale is for
/// figures; `KEYCHAIN_BENCHMARK_SMOKE=1` makes every benchmark run a few rounds on small
/// keychains, which CI uses to check that the suite and the operations it times still work.
struct Scale {
    /// The fixtures' item counts, smallest first.
    let itemCounts: [Int]
    /// Adds per round of the throughput benchmarks, shared among the clients.
    let addsPerThroughputRound: Int
    /// The synchronizable items of the sync benchmarks' first device.
    let syncItems: Int
    let isSmoke: Bool

    static let full = Scale(
        itemCounts: [1_000, 100_000], addsPerThroughputRound: 512, syncItems: 10_000, isSmoke: false)
    static let smoke = Scale(itemCounts: [50, 200], addsPerThroughputRound: 32, syncItems: 20, isSmoke: true)

    static var current: Scale {
        ProcessInfo.processInfo.environment["KEYCHAIN_BENCHMARK_SMOKE"].map { !$0.isEmpty && $0 != "0" } == true
            ? .smoke : .full
    }

    /// `KEYCHAIN_BENCHMARK_ROUNDS`: at most this many iterations of every benchmark, for a run
    /// under a profiler (`valgrind --tool=callgrind`, Benchmarks/README.md) where each round is slow.
    static let roundLimit = ProcessInfo.processInfo.environment["KEYCHAIN_BENCHMARK_ROUNDS"].flatMap { Int($0) }

    /// `1k`, `100k`.
    static func label(_ count: Int) -> String {
        count >= 1000 && count % 1000 == 0 ? "\(count / 1000)k" : "\(count)"
    }

    /// At most `rounds` iterations and 5 seconds (3 iterations in a smoke run), timed in
    /// microseconds. `metrics` nil: the wall clock and, in a full run, the allocations.
    ///
    /// A smoke run counts no allocations. The malloc interposer that counts them (1.6.1) frees a
    /// thread's counters when the thread ends but keeps using them for that thread's last
    /// allocations, which writes into freed memory: glibc then aborts ("tcache_thread_shutdown():
    /// unaligned tcache chunk detected"), as a third of smoke runs did on this 2-core machine
    /// under load, and CI once. Benchmarks whose threads end while they run never count them.
    func configuration(rounds: Int, metrics: [BenchmarkMetric]? = nil) -> Benchmark.Configuration {
        Benchmark.Configuration(
            metrics: metrics ?? (isSmoke ? [.wallClock] : [.wallClock, .mallocCountTotal]), timeUnits: .microseconds,
            warmupIterations: isSmoke ? 0 : min(10, rounds / 10),
            maxDuration: .seconds(isSmoke ? 60 : 5),
            maxIterations: min(isSmoke ? min(3, rounds) : rounds, Scale.roundLimit ?? .max))
    }
}
