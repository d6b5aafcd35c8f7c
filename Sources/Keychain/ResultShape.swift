import Foundation

/// Shapes returned items as iOS does: one `kSecReturn…` key gives that value, several give a
/// dictionary, and a limit above one gives an array of either.
enum ResultShape {
    static func value(_ items: [ItemResult], returns: ReturnSelection, limit: MatchLimit) -> CFTypeRef? {
        let shaped = items.map { single($0, returns) }
        return limit.returnsArray ? shaped : shaped.first
    }

    private static func single(_ item: ItemResult, _ returns: ReturnSelection) -> Any {
        switch returns {
        case .data: return item.secret?.copyData() ?? Data()
        case .persistentRef: return item.persistentRef ?? Data()
        case .attributes: return attributes(item)
        default:
            var dictionary = returns.contains(.attributes) ? attributes(item) : [:]
            if returns.contains(.data) { dictionary[kSecValueData] = item.secret?.copyData() ?? Data() }
            if returns.contains(.persistentRef) { dictionary[kSecValuePersistentRef] = item.persistentRef ?? Data() }
            return dictionary
        }
    }

    /// Attribute values as Foundation types, with `class` added as iOS does.
    static func attributes(_ item: ItemResult) -> [String: Any] {
        var dictionary = [String: Any](minimumCapacity: (item.attributes?.count ?? 0) + 2)
        dictionary[kSecClass] = item.itemClass.rawValue
        for (name, value) in item.attributes ?? [:] {
            dictionary[name] = foundationValue(value)
        }
        if let accessControl = item.accessControl { dictionary[kSecAttrAccessControl] = SecAccessControl(accessControl) }
        return dictionary
    }

    static func foundationValue(_ value: AttributeValue) -> Any {
        switch value {
        case .string(let string): string
        case .data(let data): data
        case .number(let number): Int(number)
        case .bool(let flag): flag
        case .date(let date): date
        }
    }
}
