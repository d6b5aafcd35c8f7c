import Foundation
import KeychainProtocol

/// The iOS Simulator's Touch ID menu, for Linux: touches are Enclave-sealed samples dropped as
/// files in a directory (`sensor/` in the keychain directory) by `keychainctl biometry touch`
/// from another terminal, or by tests. The sensor hands them to the Enclave unopened; it never
/// sees a template.
///
/// A touch older than ``freshness`` seconds is stale and thrown away, so a touch made while no
/// prompt was showing cannot approve a later one.
public struct SimulatedSensor: BiometricSensor {
    /// Where touches are dropped.
    public let directory: URL
    /// How old a touch may be and still count.
    public static let freshness: Double = 10

    public var kind: SensorKind { .simulated }

    /// A sensor whose touches land in `directory` (created with mode 0700).
    public init(directory: URL) {
        self.directory = directory
    }

    /// Drops a touch for the waiting prompt.
    public func post(_ sample: Data) throws(KeychainError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let name = String(format: "%020llu-%@", UInt64(Date().timeIntervalSince1970 * 1e6), UUID().uuidString)
            let temporary = directory.appendingPathComponent(".\(name)")
            try sample.write(to: temporary)
            try FileManager.default.moveItem(at: temporary, to: directory.appendingPathComponent("\(name).touch"))
        } catch {
            throw KeychainError(.errSecIO, "cannot reach the simulated sensor at \(directory.path): \(error.localizedDescription)")
        }
    }

    public func awaitTouch(timeout: Double) throws(KeychainError) -> SensorReading {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let sample = takeOldestFreshTouch() { return .sample(sample) }
            usleep(10_000)
        } while Date() < deadline
        return .none
    }

    public func endWait() {}

    private func takeOldestFreshTouch() -> Data? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return nil }
        for name in names.filter({ $0.hasSuffix(".touch") }).sorted() {
            let url = directory.appendingPathComponent(name)
            let data = try? Data(contentsOf: url)
            let modified = (try? FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date) ?? .distantPast
            // Taking a touch removes it; when another prompt took it first, look further.
            guard (try? FileManager.default.removeItem(at: url)) != nil else { continue }
            if let data, Date().timeIntervalSince(modified) <= Self.freshness { return data }
        }
        return nil
    }
}
