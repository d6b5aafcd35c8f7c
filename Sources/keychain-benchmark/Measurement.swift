import Foundation

/// Timings of one operation, in microseconds.
struct Timings {
    var samples: [Double] = []

    /// Times `body` once and records it.
    mutating func measure(_ body: () throws -> Void) rethrows {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
    }

    func percentile(_ p: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
    }

    var median: Double { percentile(0.5) }
}

func format(_ microseconds: Double) -> String {
    microseconds >= 1000 ? String(format: "%.1f ms", microseconds / 1000) : String(format: "%.0f µs", microseconds)
}
