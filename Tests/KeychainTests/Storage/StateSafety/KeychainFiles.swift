import Foundation
import GRDB

/// The files of a keychain directory, for byte-for-byte comparisons: what a refused open must
/// leave exactly as it found. The SQLite shared-memory index (`-shm`), an empty write-ahead log
/// (SQLite's read-only inspection creates one where none was) and the lock file hold no data
/// and are left out.
struct KeychainFiles: Equatable, CustomStringConvertible {
    let contents: [String: Data]

    init(_ directory: URL) throws {
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where !name.hasSuffix("-shm") && name != "enclave.lock" && name != "sensor" {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            if name.hasSuffix("-wal") && data.isEmpty { continue }
            contents[name] = data
        }
        self.contents = contents
    }

    var description: String {
        contents.keys.sorted().map { "\($0): \(contents[$0]!.count) bytes" }.joined(separator: ", ")
    }

    /// Copies the directory as a file-level backup would, optionally leaving files out.
    static func copy(_ directory: URL, leavingOut: Set<String> = []) throws -> URL {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("keychain-copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: copy, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where !leavingOut.contains(name) && name != "sensor" {
            try FileManager.default.copyItem(
                at: directory.appendingPathComponent(name), to: copy.appendingPathComponent(name))
        }
        return copy
    }

    /// Runs SQL on a keychain database as an attacker or a careless tool would.
    static func edit(_ database: URL, _ sql: String) throws {
        let queue = try DatabaseQueue(path: database.path)
        try queue.write { try $0.execute(sql: sql) }
    }
}
