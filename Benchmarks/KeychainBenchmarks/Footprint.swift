import Foundation

/// What keychaind and the database cost in memory and disk.
enum Footprint {
    /// The most memory the process has had resident (`VmHWM`), in KiB; 0 when unknown.
    static func residentKiB(pid: Int32?) -> Int {
        guard let pid, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// The keychain folder's files (database, its log, keybag, state) over its items.
    static func bytesPerItem(_ fixture: Fixture) -> Int {
        let folder = fixture.dataHome.appendingPathComponent("keychain")
        let files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: [.fileSizeKey])) ?? []
        let bytes = files.reduce(0) { $0 + ((try? $1.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) }
        return bytes / (fixture.count + Fixture.queryItems)
    }
}
