import Foundation
import KeychainProtocol
import Testing

@testable import Enclave

/// An item's associated data (``ItemBinding/associatedData(_:)``) must stay the bytes of the
/// length-prefixed list it was defined as, whatever builds it, or no stored item would open
/// again.
@Suite struct AssociatedDataFormatTests {
    /// The definition: the label, then each field with its 32-bit big-endian length.
    func defined(_ binding: ItemBinding, _ purpose: String) -> Data {
        var fields = [
            Data(purpose.utf8), binding.rowIdentity, Data(binding.itemClass.utf8),
            Data(binding.accessibility.rawValue.utf8),
            binding.accessGroupTag, Data([binding.synchronizable ? 1 : 0]), binding.accessControl?.encoded() ?? Data(),
        ]
        if binding.version != 0 {
            fields.append(withUnsafeBytes(of: UInt64(bitPattern: binding.version).bigEndian) { Data($0) })
        }
        return LengthPrefixed.encode(label: "swift-keychain item v1", fields)
    }

    @Test(arguments: ["metadata", "item-key", "secret", "application-password", ""])
    func theAssociatedDataIsTheLengthPrefixedListOfTheBindingsFields(purpose: String) throws {
        let control = StoredAccessControl(
            control: try AccessControl(protection: .whenPasscodeSetThisDeviceOnly, flags: .userPresence),
            enrolledState: Data([9, 8, 7]))
        let bindings = [
            ItemBinding(
                rowIdentity: Data(repeating: 0xA5, count: 16), version: 1, itemClass: "genp",
                accessibility: .whenUnlocked,
                accessGroupTag: Data(repeating: 0x3C, count: 32), synchronizable: false),
            ItemBinding(
                rowIdentity: Data(repeating: 0x01, count: 16), version: 0, itemClass: "inet",
                accessibility: .afterFirstUnlockThisDeviceOnly,
                accessGroupTag: Data(), synchronizable: true),
            ItemBinding(
                rowIdentity: Data((0..<16).map { UInt8($0) }), version: Int64.max, itemClass: "keys",
                accessibility: .whenPasscodeSetThisDeviceOnly,
                accessGroupTag: Data([1, 2, 3]), synchronizable: false, accessControl: control),
        ]
        for binding in bindings {
            #expect(binding.associatedData(purpose) == defined(binding, purpose))
        }
    }

    @Test func theFirstBytesAreTheLabelThenThePurposesLength() {
        let binding = ItemBinding(
            rowIdentity: Data(count: 16), version: 3, itemClass: "genp", accessibility: .whenUnlocked,
            accessGroupTag: Data(count: 32), synchronizable: false)
        let data = binding.associatedData("secret")
        #expect(data.prefix(22) == Data("swift-keychain item v1".utf8))
        #expect(Array(data.dropFirst(22).prefix(10)) == [0, 0, 0, 6] + Array("secret".utf8))
    }
}
