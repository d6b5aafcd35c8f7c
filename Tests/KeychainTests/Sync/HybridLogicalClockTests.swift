import Foundation
import Testing

@testable import Enclave

/// The conflict rule's clock (Docs/Sync.md, "Conflicts"): it follows the wall clock, never goes
/// back when the wall clock does, and orders a change after every change it has seen, so that
/// every machine agrees which of two changes is the later.
@Suite struct HybridLogicalClockTests {
    static let (laptop, desktop) = (Data(repeating: 0x11, count: 16), Data(repeating: 0x22, count: 16))

    @Test func itFollowsTheWallClockAndNeverGoesBack() {
        var clock = HybridLogicalClock(device: Self.laptop)
        let first = clock.tick(now: 1_000)
        #expect(first == SyncTimestamp(milliseconds: 1_000, counter: 0, device: Self.laptop))
        // The same millisecond, then a wall clock set back: the counter goes on.
        let second = clock.tick(now: 1_000)
        let third = clock.tick(now: 400)
        #expect(second == SyncTimestamp(milliseconds: 1_000, counter: 1, device: Self.laptop))
        #expect(third == SyncTimestamp(milliseconds: 1_000, counter: 2, device: Self.laptop))
        #expect(first < second && second < third)
        // The wall clock moves on: the counter starts over.
        #expect(clock.tick(now: 1_001) == SyncTimestamp(milliseconds: 1_001, counter: 0, device: Self.laptop))
    }

    @Test func aChangeMadeAfterSeeingAnotherIsLaterWhateverTheClocksSay() {
        var desktop = HybridLogicalClock(device: Self.desktop)
        // The desktop's wall clock runs an hour ahead.
        let seen = desktop.tick(now: 3_600_000 + 5_000)
        var laptop = HybridLogicalClock(device: Self.laptop)
        _ = laptop.tick(now: 5_000)
        laptop.observe(seen, now: 5_001)
        let change = laptop.tick(now: 5_002)
        #expect(change > seen)
        #expect(change.milliseconds == seen.milliseconds && change.counter == seen.counter + 1)
    }

    @Test func equalTimesAreOrderedByTheDeviceAndAClockResumesWhereItWas() {
        let a = SyncTimestamp(milliseconds: 7, counter: 3, device: Self.laptop)
        let b = SyncTimestamp(milliseconds: 7, counter: 3, device: Self.desktop)
        #expect(a < b && !(b < a))
        // A counter at its end moves time on rather than wrapping.
        var full = HybridLogicalClock(
            device: Self.laptop, last: SyncTimestamp(milliseconds: 9, counter: .max, device: Self.laptop))
        #expect(full.tick(now: 9) == SyncTimestamp(milliseconds: 10, counter: 0, device: Self.laptop))
        // The encoding is 24 bytes and reads back.
        let encoded = b.encoded
        #expect(encoded.count == 24 && SyncTimestamp(encoded) == b)
        #expect(encoded.prefix(8) == Data([0, 0, 0, 0, 0, 7, 0, 3]))
    }
}
