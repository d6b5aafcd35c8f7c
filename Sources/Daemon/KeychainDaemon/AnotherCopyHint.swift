import Crypto
import Foundation
import KeychainProtocol
import KeychainServer
import KeychainSupport
import Synchronization

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
/// that path to read those items anyway (per-user mode alone). A program of another name, or
/// other bytes, learns nothing of anyone's items.
enum AnotherCopyHint {
    /// The most directories looked in.
    static let maximumDirectories = 32
    /// The most file digests kept.
    static let maximumDigests = 64

    /// A file as the kernel names its contents: a file of the same key has the same bytes.
    private struct FileKey: Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int
        var modifiedNanoseconds: Int
    }

    /// The digests of the executables compared so far: a program whose lookups keep missing is
    /// not read whole again at each miss.
    private static let digests = Mutex<[FileKey: Data]>([:])

    /// The hint for `client`, whose search `query` found nothing; nil when no copy of it has
    /// matching items.
    static func hint(for query: ItemQuery, _ client: KeychainDaemon.Client) -> String? {
        guard client.app.registeredGroups == nil, let server = client.keychain.onDemand.openedServer else {
            return nil
        }
        let mine = client.app.identifier
        let name = (mine as NSString).lastPathComponent
        guard client.app.untrustedBecause == nil, mine.hasPrefix("/"), !name.isEmpty, let own = fileKey(mine) else {
            return nil
        }
        for directory in directories(client) {
            let copy = directory + "/" + name
            guard copy != mine, let other = fileKey(copy), other.size == own.size else { continue }
            let asCopy = CallerIdentity(accessGroups: [copy], app: copy)
            guard case .items(let found)? = try? server.handle(.copyMatching(query), caller: asCopy), !found.isEmpty,
                let ownDigest = digest(mine, own), digest(copy, other) == ownDigest
            else { continue }
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

    private static func fileKey(_ path: String) -> FileKey? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileKey(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            modified: status.st_mtim.tv_sec, modifiedNanoseconds: status.st_mtim.tv_nsec)
    }

    /// SHA-256 of the file at `path` (whose key is `key`), read in blocks, or as kept.
    private static func digest(_ path: String, _ key: FileKey) -> Data? {
        if let kept = digests.withLock({ $0[key] }) { return kept }
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        var hash = SHA256()
        while let block = try? file.read(upToCount: 1 << 20), !block.isEmpty { hash.update(data: block) }
        let digest = Data(hash.finalize())
        digests.withLock { digests in
            if digests.count >= maximumDigests { digests.removeAll() }
            digests[key] = digest
        }
        return digest
    }
}
