import Foundation

/// Where the circle's files are on the remote (Docs/Sync.md, "The layout"): each device writes
/// its own files only, and the circle's list and key wraps.
enum SyncPaths {
    static let list = "circle/list"
    static let requests = "circle/requests/"
    static let answers = "circle/answers/"
    static let lists = "circle/lists/"
    static let devices = "devices/"

    static func request(_ device: Data) -> String { requests + hex(device) }
    /// Version `version` of the device list, kept so that a device that missed versions checks
    /// each step, and sees a fork.
    static func list(version: UInt64) -> String { lists + String(version) }
    /// The folder of the members' answers to `joining`'s request.
    static func answers(to joining: Data) -> String { answers + hex(joining) + "/" }
    static func answer(to joining: Data, from member: Data) -> String { answers(to: joining) + hex(member) }
    static func key(epoch: UInt32, _ device: Data) -> String { "circle/keys/\(epoch)/\(hex(device))" }
    static func folder(_ device: Data) -> String { devices + hex(device) + "/" }
    static func head(_ device: Data) -> String { folder(device) + "head" }
    static func record(_ device: Data, _ name: Data) -> String { folder(device) + hex(name) }

    static func hex(_ bytes: Data) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// The bytes `hex` names, or nil for anything but lower-case hex digits.
    static func bytes(_ hex: String) -> Data? {
        guard hex.count % 2 == 0, hex.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        var bytes = Data(capacity: hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
