import KeychainProtocol

/// What git's plumbing prints about the remote's state, read as hostile: the remote chose every
/// path, mode and size in it. Both readers are total: any bytes give entries within the bounds
/// or `errSecDecode`, never a trap (Docs/Sync.md, "The remote"; a fuzz target reads them).
public enum GitOutput {
    /// One file of a tree as `git ls-tree -r -z -l` lists it.
    public struct Entry: Sendable, Equatable {
        /// The path under the tree's root, as the remote wrote it.
        public var path: String
        /// The blob's object name (hex).
        public var object: String
        /// The blob's size in bytes.
        public var size: Int
    }

    /// The most files a tree may list.
    public static let maximumEntries = 1_000_000

    /// The regular files (`100644`, `100755`) of `git ls-tree -r -z -l` output whose path is
    /// one the circle could have written (``GitTransport/check(_:)``); links, submodules and
    /// other paths are left out, unread.
    ///
    /// - Throws: `errSecDecode` for output that is not ls-tree's, a file larger than
    ///   `maximumFile`, more than ``maximumEntries`` files, or more than `maximumTotal` bytes.
    public static func treeEntries(
        _ bytes: [UInt8], maximumFile: Int, maximumTotal: Int
    ) throws(KeychainError) -> [Entry] {
        var entries: [Entry] = []
        var total = 0
        var start = 0
        while start < bytes.count {
            guard let end = bytes[start...].firstIndex(of: 0) else {
                throw KeychainError(.errSecDecode, "git's list of the remote's files ends in the middle of an entry")
            }
            defer { start = end + 1 }
            guard let tab = bytes[start..<end].firstIndex(of: 9) else {
                throw KeychainError(.errSecDecode, "git's list of the remote's files has an entry without a path")
            }
            let fields = bytes[start..<tab].split(separator: 32)
            guard fields.count == 4 else {
                throw KeychainError(.errSecDecode, "git's list of the remote's files has an entry of \(fields.count) fields")
            }
            let mode = String(decoding: fields[0], as: UTF8.self)
            guard mode == "100644" || mode == "100755", fields[1].elementsEqual("blob".utf8) else { continue }
            let object = String(decoding: fields[2], as: UTF8.self)
            guard isObjectName(object) else {
                throw KeychainError(.errSecDecode, "git's list of the remote's files names an object that is not hex")
            }
            guard fields[3].count <= 12, fields[3].allSatisfy({ $0 >= 48 && $0 <= 57 }),
                let size = Int(String(decoding: fields[3], as: UTF8.self))
            else { throw KeychainError(.errSecDecode, "git's list of the remote's files has a size that is not a number") }
            guard let path = String(validating: bytes[(tab + 1)..<end], as: UTF8.self),
                (try? GitTransport.check(path)) != nil
            else { continue }
            guard size <= maximumFile else {
                throw KeychainError(.errSecDecode, "\(path) on the remote is larger than any file of the circle")
            }
            total += size
            guard total <= maximumTotal, entries.count < maximumEntries else {
                throw KeychainError(.errSecDecode, "the remote holds more than any circle writes")
            }
            entries.append(Entry(path: path, object: object, size: size))
        }
        return entries
    }

    /// The contents of `entries`, by path, from `git cat-file --batch` output given their object
    /// names in order: each must be the object asked for, a blob, of the size listed.
    ///
    /// - Throws: `errSecDecode` for anything else.
    public static func blobs(_ bytes: [UInt8], for entries: [Entry]) throws(KeychainError) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        files.reserveCapacity(entries.count)
        var position = 0
        for entry in entries {
            guard let lineEnd = bytes[position...].firstIndex(of: 10) else {
                throw KeychainError(.errSecDecode, "git's reading of the remote's files ends early")
            }
            let header = bytes[position..<lineEnd].split(separator: 32)
            guard header.count == 3, header[0].elementsEqual(entry.object.utf8), header[1].elementsEqual("blob".utf8),
                header[2].elementsEqual(String(entry.size).utf8)
            else {
                throw KeychainError(.errSecDecode, "git's reading of \(entry.path) on the remote is not the file listed")
            }
            let contentStart = lineEnd + 1
            guard entry.size < bytes.count - contentStart, bytes[contentStart + entry.size] == 10 else {
                throw KeychainError(.errSecDecode, "git's reading of \(entry.path) on the remote is cut off")
            }
            files[entry.path] = Array(bytes[contentStart..<contentStart + entry.size])
            position = contentStart + entry.size + 1
        }
        guard position == bytes.count else {
            throw KeychainError(.errSecDecode, "git's reading of the remote's files has more than was asked")
        }
        return files
    }

    /// A full object name: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits.
    static func isObjectName(_ text: String) -> Bool {
        (text.utf8.count == 40 || text.utf8.count == 64)
            && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
