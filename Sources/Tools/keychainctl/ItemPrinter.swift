import Foundation
import Keychain

/// Prints an item's class and attributes in the manner of Apple's `security` tool; never the
/// secret.
enum ItemPrinter {
    static func render(_ item: ItemResult) -> String {
        var lines = ["class: \"\(item.itemClass.rawValue)\"", "attributes:"]
        for (name, value) in (item.attributes ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines.append("    \"\(name)\"\(render(value))")
        }
        return lines.joined(separator: "\n")
    }

    private static func render(_ value: AttributeValue) -> String {
        switch value {
        case .string(let string): "<blob>=\"\(string)\""
        case .data(let data): "<blob>=0x" + data.map { String(format: "%02X", $0) }.joined()
        case .number(let number): "<sint32>=\(number)"
        case .bool(let flag): "<bool>=\(flag ? 1 : 0)"
        case .date(let date): "<timedate>=\"\(ISO8601DateFormatter().string(from: date))\""
        }
    }
}
