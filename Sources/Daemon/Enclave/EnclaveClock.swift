import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The time source for passcode delays: a boot identity and a clock that only moves forward
/// within one boot. Changing the wall clock changes neither.
public protocol EnclaveClock: Sendable {
    /// An identifier that changes when the machine reboots.
    var bootID: String { get }
    /// Seconds since boot, including suspend; never goes back within one boot.
    func uptime() -> Double
}

/// The machine's clock: the kernel's boot id and `CLOCK_BOOTTIME`.
public struct SystemEnclaveClock: EnclaveClock {
    /// Creates the system clock.
    public init() {}

    public var bootID: String {
        let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
        return text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown-boot"
    }

    public func uptime() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
