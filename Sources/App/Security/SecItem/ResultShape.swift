import Foundation
import KeychainProtocol

/// Shapes returned items as iOS does: one `kSecReturn…` key gives that value, several give a
/// dictionary, and a limit above one gives an array of either.
///
/// Every value is the Foundation object Core Foundation's would bridge to (`NSData`,
/// `NSDictionary` with `NSString` keys, `NSArray`, `NSString`, `NSNumber`, `NSDate`), so
/// `result as? Data`, `as? [String: Any]` and `as? [[String: Any]]` work as on Apple platforms.
enum ResultShape {
    /// What a call asked to have returned.
    struct Request {
        /// `kSecReturnData`, `…Attributes`, `…PersistentRef` as the caller set them.
        var returns: ReturnSelection = []
        /// `kSecReturnRef`.
        var reference = Reference.none
        /// How the call authenticates: an Enclave key's `SecKey` keeps it for its uses, as a key
        /// found with `kSecUseAuthenticationContext` does on iOS.
        var authentication = AuthenticationOptions()

        /// How `kSecReturnRef` shows in the result.
        enum Reference {
            /// Not asked for.
            case none
            /// Asked for beside other keys of an item with no reference object (a password):
            /// left out, though it makes the result a dictionary, as iOS does.
            case leftOut
            /// A `SecCertificate`, made from the item's data.
            case certificate
            /// A `SecKey`, made from the item's data, class and type.
            case key
        }

        /// How many `kSecReturn…` keys were set: the bits of `returns` (data, attributes,
        /// persistent reference), and the reference.
        var keyCount: Int {
            returns.rawValue.nonzeroBitCount + (reference == .none ? 0 : 1)
        }
    }

    static func value(_ items: [ItemResult], _ request: Request, limit: MatchLimit) -> CFTypeRef? {
        let shaped = items.map { single($0, request) }
        return limit.returnsArray ? NSArray(array: shaped) : shaped.first
    }

    private static func single(_ item: ItemResult, _ request: Request) -> AnyObject {
        if request.keyCount == 1 {
            if request.reference != .none { return reference(item, request) }
            if request.returns == .data { return secret(item) }
            if request.returns == .persistentRef { return NSData(data: item.persistentRef ?? Data()) }
        }
        var entries = FoundationDictionary(capacity: (item.attributes?.count ?? 0) + 4)
        if request.returns.contains(.attributes) { addAttributes(of: item, to: &entries) }
        if request.returns.contains(.data) { entries.add(kSecValueData, secret(item)) }
        if request.returns.contains(.persistentRef) {
            entries.add(kSecValuePersistentRef, NSData(data: item.persistentRef ?? Data()))
        }
        if request.reference == .certificate || request.reference == .key {
            entries.add(kSecValueRef, reference(item, request))
        }
        return entries.dictionary
    }

    /// A certificate item's `SecCertificate` or a key item's `SecKey`; its data as is, should it
    /// not make one (a certificate did when it was added, through the same parser; a key item
    /// added with `kSecValueData` may hold a symmetric key or other bytes).
    private static func reference(_ item: ItemResult, _ request: Request) -> AnyObject {
        let data = item.secret?.withUnsafeBytes { Data($0) } ?? Data()
        let object: AnyObject? =
            switch request.reference {
            case .certificate: SecCertificate(der: data)
            case .key: SecKey.stored(data, attributes: item.attributes ?? [:], authentication: request.authentication)
            case .none, .leftOut: nil
            }
        return object ?? NSData(data: data)
    }

    /// The item's data, copied once into the object handed to the app (as iOS hands its own).
    private static func secret(_ item: ItemResult) -> NSData {
        guard let secret = item.secret else { return NSData() }
        return secret.withUnsafeBytes { NSData(bytes: $0.baseAddress, length: $0.count) }
    }

    /// Attribute values as Foundation objects, with `class` added as iOS does, and an access
    /// control for every item, as iOS 11.3 and later report one: an item added without one has
    /// its accessibility alone, with no constraint.
    private static func addAttributes(of item: ItemResult, to entries: inout FoundationDictionary) {
        entries.add(kSecClass, item.itemClass.rawValue as NSString)
        let attributes = item.attributes ?? [:]
        for (name, value) in attributes {
            entries.add(name as NSString, foundationObject(value))
        }
        if let accessControl = item.accessControl {
            entries.add(kSecAttrAccessControl, SecAccessControl(accessControl))
        } else if case .string(let raw)? = attributes[kSecAttrAccessible as String],
            let accessibility = Accessibility(rawValue: raw), let alone = accessibilityAlone[accessibility]
        {
            entries.add(kSecAttrAccessControl, alone)
        }
    }

    /// The access control of an item added without one, by accessibility: the accessibility
    /// alone, no constraint. Made once; an access control object is immutable, so every result
    /// shares it (a query of many items makes no object per item for it).
    private static let accessibilityAlone: [Accessibility: SecAccessControl] = Dictionary(
        uniqueKeysWithValues: Accessibility.allCases.compactMap { accessibility in
            (try? AccessControl(protection: accessibility, flags: [])).map { (accessibility, SecAccessControl($0)) }
        })

    /// Keys and objects gathered for one `NSDictionary(objects:forKeys:count:)`, the cheapest
    /// way to make one here: half the instructions of `NSDictionary(dictionary:)` from a Swift
    /// dictionary, and a fifth fewer than the array form, which casts every key and object.
    private struct FoundationDictionary {
        var keys: [NSObject] = []
        var objects: [AnyObject] = []

        init(capacity: Int) {
            keys.reserveCapacity(capacity)
            objects.reserveCapacity(capacity)
        }

        mutating func add(_ key: NSString, _ object: AnyObject) {
            keys.append(key)
            objects.append(object)
        }

        var dictionary: NSDictionary {
            objects.withUnsafeBufferPointer { objects in
                keys.withUnsafeBufferPointer { keys in
                    NSDictionary(objects: objects.baseAddress, forKeys: keys.baseAddress, count: keys.count)
                }
            }
        }
    }

    private static func foundationObject(_ value: AttributeValue) -> AnyObject {
        switch value {
        case .string(let string): string as NSString
        case .data(let data): NSData(data: data)
        case .number(let number): NSNumber(value: number)
        case .bool(let flag): NSNumber(value: flag)
        case .date(let date): date as NSDate
        }
    }
}
