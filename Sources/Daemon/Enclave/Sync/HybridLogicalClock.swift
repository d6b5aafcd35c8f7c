import Foundation

/// A hybrid logical clock (Kulkarni, Demirbas et al., "Logical Physical Clocks", 2014), one per
/// device: its timestamps follow the wall clock, never go backwards when the wall clock does,
/// and are always later than every timestamp the device has seen from others, so that a change
/// made after seeing another is ordered after it on every machine, whatever their clocks say.
public struct HybridLogicalClock: Sendable {
    /// This device's id (16 bytes), the last part of each timestamp.
    public let device: Data
    /// The latest timestamp made or seen.
    public private(set) var last: SyncTimestamp

    /// A clock that has made nothing yet, or that resumes from `last` (kept durably, so that a
    /// restart never goes back).
    public init(device: Data, last: SyncTimestamp? = nil) {
        self.device = device
        self.last = last ?? SyncTimestamp(milliseconds: 0, counter: 0, device: device)
    }

    /// The timestamp of a change made now, at wall-clock `now` (milliseconds): later than any
    /// timestamp made or seen before.
    public mutating func tick(now: UInt64) -> SyncTimestamp {
        advance(past: last.milliseconds, now: now)
    }

    /// Takes in a timestamp seen in another device's record, so that this device's next change
    /// is ordered after it.
    public mutating func observe(_ seen: SyncTimestamp, now: UInt64) {
        guard seen > last else { return }
        let physical = max(last.milliseconds, seen.milliseconds, now)
        let counter: UInt16
        if physical == last.milliseconds && physical == seen.milliseconds {
            counter = max(last.counter, seen.counter)
        } else if physical == seen.milliseconds {
            counter = seen.counter
        } else if physical == last.milliseconds {
            counter = last.counter
        } else {
            counter = 0
        }
        last = SyncTimestamp(milliseconds: physical, counter: counter, device: device)
    }

    private mutating func advance(past milliseconds: UInt64, now: UInt64) -> SyncTimestamp {
        if now > milliseconds {
            last = SyncTimestamp(milliseconds: now, counter: 0, device: device)
        } else if last.counter == .max {
            // 65,536 changes in one millisecond, or the wall clock far behind: move time on.
            last = SyncTimestamp(milliseconds: milliseconds + 1, counter: 0, device: device)
        } else {
            last = SyncTimestamp(milliseconds: milliseconds, counter: last.counter + 1, device: device)
        }
        return last
    }
}
