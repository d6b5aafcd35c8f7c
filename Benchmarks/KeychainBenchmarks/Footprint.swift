import Foundation

/// What keychaind and the database cost in memory and disk.
enum Footprint {
    /// The memory process `pid` has resident now (`VmRSS`) or had at most (`VmHWM`), in KiB;
    /// 0 when unknown.
    static func residentKiB(pid: Int32?, peak: Bool) -> Int {
        guard let pid, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            return 0
        }
        let field = peak ? "VmHWM:" : "VmRSS:"
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// The keychain folder's files (database, its log, keybag, state) over its items.
    static func bytesPerItem(_ fixture: Fixture) -> Int {
        let folder = fixture.dataHome.appendingPathComponent("keychain")
        let files =
            (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: [.fileSizeKey])) ?? []
        let bytes = files.reduce(0) { $0 + ((try? $1.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) }
        return bytes / (fixture.count + Fixture.queryItems)
    }
}
