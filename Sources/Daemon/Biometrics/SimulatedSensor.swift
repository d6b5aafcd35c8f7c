import Foundation
import KeychainProtocol

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
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let name = String(format: "%020llu-%@", UInt64(Date().timeIntervalSince1970 * 1e6), UUID().uuidString)
            let temporary = directory.appendingPathComponent(".\(name)")
            try sample.write(to: temporary)
            try FileManager.default.moveItem(at: temporary, to: directory.appendingPathComponent("\(name).touch"))
        } catch {
            throw KeychainError(
                .errSecIO, "cannot reach the simulated sensor at \(directory.path): \(error.localizedDescription)")
        }
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
        try? FileManager.default.removeItem(at: waitingMarker)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasSuffix(".touch") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    private var waitingMarker: URL { directory.appendingPathComponent("waiting-\(getpid())") }

    /// Says (again) that a prompt of this process waits for a touch now.
    private func markWaiting() {
        try? FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = FileManager.default.createFile(
            atPath: waitingMarker.path, contents: Data(), attributes: [.posixPermissions: 0o600])
    }

    private func isPromptWaiting() -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.contains { name in
            guard name.hasPrefix("waiting-") else { return false }
            let modified =
                (try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[
                    .modificationDate] as? Date) ?? .distantPast
            return Date().timeIntervalSince(modified) <= Self.freshness
        }
    }

    private func takeOldestFreshTouch() -> Data? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return nil }
        for name in names.filter({ $0.hasSuffix(".touch") }).sorted() {
            let url = directory.appendingPathComponent(name)
            let data = try? Data(contentsOf: url)
            let modified =
                (try? FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date)
                ?? .distantPast
            // Taking a touch removes it; when another prompt took it first, look further.
            guard (try? FileManager.default.removeItem(at: url)) != nil else { continue }
            if let data, Date().timeIntervalSince(modified) <= Self.freshness { return data }
        }
        return nil
    }
}
