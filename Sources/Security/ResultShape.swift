import Foundation
import KeychainProtocol

/// Shapes returned items as iOS does: one `kSecReturn…` key gives that value, several give a
/// dictionary, and a limit above one gives an array of either.
///
/// Every value is the Foundation object Core Foundation's would bridge to (`NSData`,
/// `NSDictionary` with `NSString` keys, `NSArray`, `NSString`, `NSNumber`, `NSDate`), so
/// `result as? Data`, `as? [String: Any]` and `as? [[String: Any]]` work as on Apple platforms.
enum ResultShape {
    /// - Parameter asDictionary: a dictionary per item even for one return key (`kSecReturnRef`
    ///   was asked for too).
    static func value(_ items: [ItemResult], returns: ReturnSelection, limit: MatchLimit, asDictionary: Bool) -> CFTypeRef? {
        let shaped = items.map { single($0, returns, asDictionary: asDictionary) }
        return limit.returnsArray ? NSArray(array: shaped) : shaped.first
    }

    private static func single(_ item: ItemResult, _ returns: ReturnSelection, asDictionary: Bool) -> AnyObject {
        switch returns {
        case .data where !asDictionary: return secret(item)
        case .persistentRef where !asDictionary: return NSData(data: item.persistentRef ?? Data())
        default:
            var entries = FoundationDictionary(capacity: (item.attributes?.count ?? 0) + 4)
            if returns.contains(.attributes) { addAttributes(of: item, to: &entries) }
            if returns.contains(.data) { entries.add(kSecValueData, secret(item)) }
            if returns.contains(.persistentRef) { entries.add(kSecValuePersistentRef, NSData(data: item.persistentRef ?? Data())) }
            return entries.dictionary
        }
    }

    /// The item's data, copied once into the object handed to the app (as iOS hands its own).
    private static func secret(_ item: ItemResult) -> NSData {
        guard let secret = item.secret else { return NSData() }
        return secret.withUnsafeBytes { NSData(bytes: $0.baseAddress, length: $0.count) }
    }

    /// Attribute values as Foundation objects, with `class` added as iOS does.
    private static func addAttributes(of item: ItemResult, to entries: inout FoundationDictionary) {
        entries.add(kSecClass, item.itemClass.rawValue as NSString)
        for (name, value) in item.attributes ?? [:] {
            entries.add(name as NSString, foundationObject(value))
        }
        if let accessControl = item.accessControl { entries.add(kSecAttrAccessControl, SecAccessControl(accessControl)) }
    }

    /// Keys and objects gathered for one `NSDictionary(objects:forKeys:)`, the cheapest way to
    /// make one here (half the instructions of `NSDictionary(dictionary:)` from a Swift dictionary).
    private struct FoundationDictionary {
        var keys: [NSString] = []
        var objects: [AnyObject] = []

        init(capacity: Int) {
            keys.reserveCapacity(capacity)
            objects.reserveCapacity(capacity)
        }

        mutating func add(_ key: NSString, _ object: AnyObject) {
            keys.append(key)
            objects.append(object)
        }

        var dictionary: NSDictionary { NSDictionary(objects: objects, forKeys: keys) }
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
