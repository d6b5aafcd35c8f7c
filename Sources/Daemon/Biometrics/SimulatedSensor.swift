import Foundation
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// The iOS Simulator's Touch ID menu, for Linux: touches are Enclave-sealed samples dropped as
/// files in a directory (`sensor/` in the keychain directory) by `keychainctl biometry touch`
/// from another terminal, or by tests. The sensor hands them to the Enclave unopened; it never
/// sees a template.
///
/// A touch answers only a prompt that is waiting: a waiting prompt keeps a marker file
/// (`waiting-PID`) fresh while it waits, a touch with no fresh marker is refused, and a prompt
/// that ends throws away the touches it did not take. A touch older than ``freshness`` seconds
/// is stale and thrown away too, so no touch can approve a later prompt.
///
/// The directory is a ``KeychainDirectory``: checked as the keychain's own, and every file in it
/// opened beneath it without following a link.
public struct SimulatedSensor: BiometricSensor {
    /// Where touches are dropped.
    public let directory: URL
    /// How old a touch may be and still count.
    public static let freshness: Double = 2

    public var kind: SensorKind { .simulated }

    /// A sensor whose touches land in `directory` (created with mode 0700).
    public init(directory: URL) {
        self.directory = directory
    }

    /// Drops a touch for the waiting prompt.
    ///
    /// - Throws: `errSecBadReq` when no prompt is waiting for a touch (after a second's grace,
    ///   for a sheet that is just opening).
    public func post(_ sample: Data) throws(KeychainError) {
        let deadline = Date().addingTimeInterval(1)
        while !isPromptWaiting() {
            guard Date() < deadline else {
                throw KeychainError(
                    .errSecBadReq,
                    "no prompt is waiting for a touch: a touch answers a sheet that is showing now (keychainctl "
                        + "authenticate, or an app's); nothing was sent"
                )
            }
            usleep(50_000)
        }
        let name = String(format: "%020llu-%@", UInt64(Date().timeIntervalSince1970 * 1e6), UUID().uuidString)
        try files().writeAtomically(sample, to: "\(name).touch")
    }

    /// The directory, made (0700) when absent.
    private func files() throws(KeychainError) -> KeychainDirectory {
        try KeychainDirectory(directory, creating: true)
    }

    public func awaitTouch(timeout: Double) throws(KeychainError) -> SensorReading {
        markWaiting()
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let sample = takeOldestFreshTouch() { return .sample(sample) }
            usleep(10_000)
        } while Date() < deadline
        return .none
    }

    /// The prompt closed: its marker goes, and so do touches it did not take.
    public func endWait() {
        guard let files = try? files() else { return }
        try? files.remove(waitingMarker)
        for name in files.names() where name.hasSuffix(".touch") { try? files.remove(name) }
    }

    private var waitingMarker: String { "waiting-\(getpid())" }

    /// Says (again) that a prompt of this process waits for a touch now.
    private func markWaiting() {
        try? files().writeAtomically(Data(), to: waitingMarker)
    }

    private func isPromptWaiting() -> Bool {
        guard let files = try? files() else { return false }
        return files.names().contains { name in
            guard name.hasPrefix("waiting-"), let stamp = files.stamp(name) else { return false }
            return Date().timeIntervalSince(Self.date(stamp)) <= Self.freshness
        }
    }

    private func takeOldestFreshTouch() -> Data? {
        guard let files = try? files() else { return nil }
        for name in files.names().filter({ $0.hasSuffix(".touch") }).sorted() {
            let data = try? files.read(name)
            let modified = files.stamp(name).map(Self.date) ?? .distantPast
            // Taking a touch removes it; when another prompt took it first, look further.
            guard files.take(name) else { continue }
            if let data, Date().timeIntervalSince(modified) <= Self.freshness { return data }
        }
        return nil
    }

    private static func date(_ stamp: FileStamp) -> Date {
        Date(timeIntervalSince1970: Double(stamp.modified) + Double(stamp.modifiedNanoseconds) / 1e9)
    }
}
