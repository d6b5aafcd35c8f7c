import Foundation

/// An item's access control as the row keeps it: the flags and, for biometryCurrentSet, the
/// enrolled set (domain state) at creation. It is part of the item's AAD, so editing it in the
/// database makes the item fail to open rather than weakening it.
public struct StoredAccessControl: Sendable, Hashable, Codable {
    /// The validated access control.
    public var control: AccessControl
    /// The domain state when the item was made (biometryCurrentSet only).
    public var enrolledState: Data?

    /// Creates the stored form.
    public init(control: AccessControl, enrolledState: Data?) {
        self.control = control
        self.enrolledState = enrolledState
    }

    /// The canonical bytes kept in the row and bound into the AAD.
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// Reads the row's bytes.
    public static func decode(_ data: Data) throws(KeychainError) -> StoredAccessControl {
        guard let stored = try? JSONDecoder().decode(StoredAccessControl.self, from: data) else {
            throw KeychainError(
                .errSecDecode, "an item's access control could not be decoded: the database was altered")
        }
        return stored
    }
}
