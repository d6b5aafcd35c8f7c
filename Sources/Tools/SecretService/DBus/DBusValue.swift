/// A D-Bus value with its wire type: what the Secret Service reads from a call and writes in a
/// reply, a property or a signal (``DBusMessage`` carries them through libdbus).
///
/// Only the types the Secret Service and the portal use are here; a call carrying another
/// (a double, a 16-bit integer) is answered `org.freedesktop.DBus.Error.InvalidArgs`.
indirect enum DBusValue: Sendable, Equatable {
    case string(String)
    case objectPath(String)
    case signature(String)
    case boolean(Bool)
    case byte(UInt8)
    case int32(Int32)
    case uint32(UInt32)
    case uint64(UInt64)
    /// `ay`, kept as bytes (a secret's parameters and value).
    case bytes([UInt8])
    /// An array of `element`-typed values (`element` is their signature, for an empty array).
    case array(element: String, [DBusValue])
    /// `a{KV}`: entries in order, with the key's and the value's signatures.
    case dictionary(key: String, value: String, [DBusDictionaryEntry])
    case structure([DBusValue])
    case variant(DBusValue)
    /// `h`: a descriptor this process owns (received: a duplicate it must close).
    case unixFD(Int32)

    /// The value's D-Bus signature.
    var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .boolean: "b"
        case .byte: "y"
        case .int32: "i"
        case .uint32: "u"
        case .uint64: "t"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        case .unixFD: "h"
        }
    }

    /// `a{ss}` from a string dictionary, in key order.
    static func stringDictionary(_ entries: [String: String]) -> DBusValue {
        .dictionary(
            key: "s", value: "s",
            entries.sorted { $0.key < $1.key }.map {
                DBusDictionaryEntry(key: .string($0.key), value: .string($0.value))
            })
    }

    /// `ao` from object paths.
    static func objectPaths(_ paths: [String]) -> DBusValue {
        .array(element: "o", paths.map(DBusValue.objectPath))
    }

    /// Every descriptor held, at any depth.
    var unixFDs: [Int32] {
        switch self {
        case .unixFD(let descriptor): [descriptor]
        case .array(_, let values), .structure(let values): values.flatMap(\.unixFDs)
        case .dictionary(_, _, let entries): entries.flatMap { $0.key.unixFDs + $0.value.unixFDs }
        case .variant(let value): value.unixFDs
        default: []
        }
    }

    /// The string or object path held; nil for any other value.
    var text: String? {
        switch self {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    /// The `a{ss}` held, as a dictionary; nil for any other value (a later duplicate key wins).
    var stringDictionary: [String: String]? {
        guard case .dictionary("s", "s", let entries) = self else { return nil }
        var result: [String: String] = [:]
        for entry in entries {
            guard let key = entry.key.text, let value = entry.value.text else { return nil }
            result[key] = value
        }
        return result
    }

    /// The `a{sv}` held, as a dictionary of the variants' contents; nil for any other value.
    var variantDictionary: [String: DBusValue]? {
        guard case .dictionary("s", "v", let entries) = self else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.text, case .variant(let value) = entry.value else { return nil }
            result[key] = value
        }
        return result
    }

    /// The object paths of an `ao`; nil for any other value.
    var objectPaths: [String]? {
        guard case .array("o", let elements) = self else { return nil }
        return elements.compactMap { if case .objectPath(let path) = $0 { path } else { nil } }
    }
}

/// One entry of a D-Bus dictionary (`{KV}`).
struct DBusDictionaryEntry: Sendable, Equatable {
    var key: DBusValue
    var value: DBusValue
}
