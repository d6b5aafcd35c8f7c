import Crypto
import Foundation
import KeychainProtocol
import KeychainServer
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// An app is known by its executable's path, so two copies of one program are two apps: items
/// added with `~/.local/bin/keychainctl` are "not found" by `/usr/local/bin/keychainctl`
/// (issue 53). When a search by a per-user app finds nothing, this looks for a copy of the same
/// program — the same file name, the same bytes — in a directory of the client's `PATH` or a
/// usual one, whose own items match, and says where it is.
///
/// It tells a program only of a copy of itself: the same code, which the person can run from
/// that path to read those items anyway. A program of another name, or other bytes, learns
/// nothing of anyone's items.
enum AnotherCopyHint {
    /// The most directories looked in.
    static let maximumDirectories = 32

    /// The hint for `client`, whose search `query` found nothing; nil when no copy of it has
    /// matching items.
    static func hint(for query: ItemQuery, _ client: KeychainDaemon.Client) -> String? {
        guard client.app.registeredGroups == nil, let server = client.keychain.onDemand.openedServer else {
            return nil
        }
        let mine = client.app.identifier
        let name = (mine as NSString).lastPathComponent
        guard mine.hasPrefix("/"), !name.isEmpty, let size = fileSize(mine) else { return nil }
        var ownHash: Data?
        for directory in directories(client) {
            let copy = directory + "/" + name
            guard copy != mine, fileSize(copy) == size else { continue }
            let asCopy = CallerIdentity(accessGroups: [copy], app: copy)
            guard case .items(let found)? = try? server.handle(.copyMatching(query), caller: asCopy), !found.isEmpty
            else { continue }
            if ownHash == nil { ownHash = digest(mine) }
            guard let ownHash, digest(copy) == ownHash else { continue }
            return "a copy of this program at \(copy) has matching items: an app is known by its path, so each copy "
                + "sees its own (Docs/Apps.md); use that one, or keep one copy"
        }
        return nil
    }

    /// The client's `PATH` directories, then the usual ones, each once.
    private static func directories(_ client: KeychainDaemon.Client) -> [String] {
        var found: [String] = []
        if var environment = ProcessFiles.environmentBlock(client.peer.pid) {
            defer { ProcessFiles.wipe(&environment) }
            for entry in environment.split(separator: 0) where entry.starts(with: Array("PATH=".utf8)) {
                found += String(decoding: entry.dropFirst(5), as: UTF8.self).split(separator: ":").map(String.init)
            }
        }
        found += ["/usr/local/bin", "/usr/bin", "/bin"]
        if let home = getpwuid(client.peer.uid)?.pointee.pw_dir.map({ String(cString: $0) }) {
            found.append(home + "/.local/bin")
        }
        var seen = Set<String>()
        return found.filter { $0.hasPrefix("/") && seen.insert($0).inserted }.prefix(maximumDirectories).map { $0 }
    }

    private static func fileSize(_ path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(status.st_size)
    }

    /// SHA-256 of the file at `path`, read in blocks.
    private static func digest(_ path: String) -> Data? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        var hash = SHA256()
        while let block = try? file.read(upToCount: 1 << 20), !block.isEmpty { hash.update(data: block) }
        return Data(hash.finalize())
    }
}
