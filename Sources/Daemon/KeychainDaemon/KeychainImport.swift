import Enclave
import Foundation
import KeychainProtocol
import KeychainServer
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One connection's move of its user's per-user keychain into the system daemon
/// (`keychainctl daemon migrate-to-system`). The client sends the keychain's files, which the
/// daemon cannot read itself (they are in the user's home, out of its reach); they land in a
/// staging directory inside the user's own directory, `<state>/<uid>/.import-<connection>/`
/// (a worker can write nowhere else: ``SystemFront``), are checked there as the keychain they
/// claim to be, and are then moved into `<state>/<uid>/`, the keybag last.
///
/// The keybag is the commit: before it is in place the user has no system keychain, after it
/// the keychain is whole. A marker (`.import-committing`) stands while the files move; a worker
/// that finds it when it starts (it was killed in the middle) keeps the keychain when the keybag
/// made it, and otherwise removes the files that moved, so nothing is lost on a crash at any
/// point: until the keybag moves the user's per-user files are untouched (the client removes
/// them only after the daemon answered). A staging directory left by a crash is removed by the
/// next import of that user and when the worker starts.
///
/// The files keep every property of the keychain: its device secret, passcode, attempt
/// counter (a lockout carries over), fingers' state and row ledger. The device secret was
/// readable by the user's programs before the move, so a copy taken then still opens a copy of
/// the old files taken then; the move protects what is written afterwards (Docs/SystemMode.md
/// says so).
final class KeychainImport: Sendable {
    /// The files a keychain directory holds that are moved; anything else is refused.
    static let fileNames = Set(KeychainRequest.importedFileNames)
    /// The file whose arrival makes the moved keychain the user's.
    static let committingFile = "keybag"
    /// The most bytes one import may stage.
    static let maximumBytes = 1 << 30
    static let stagingPrefix = ".import-"
    /// Stands in the user's directory while the checked files move into it.
    static let marker = ".import-committing"

    private let state: URL
    private let uid: uid_t
    private let connection: UInt64
    private let staged = Mutex<(directory: URL, bytes: Int)?>(nil)

    init(state: URL, uid: uid_t, connection: UInt64) {
        self.state = state
        self.uid = uid
        self.connection = connection
    }

    private var target: URL { state.appendingPathComponent(String(uid)) }

    /// Finishes or undoes what a killed import left in the directory of `uid` (every user's
    /// when nil) under `state`: a move that stopped before the keybag moved is undone, one after
    /// it is kept, and staging directories are removed.
    static func removeLeftovers(in state: URL, uid: uid_t?) {
        let users =
            uid.map { [String($0)] }
            ?? ((try? FileManager.default.contentsOfDirectory(atPath: state.path)) ?? []).filter { UInt32($0) != nil }
        for user in users {
            let directory = state.appendingPathComponent(user)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            if names.contains(marker) {
                if !names.contains(committingFile) {
                    for name in names where fileNames.contains(name) {
                        unlink(directory.appendingPathComponent(name).path)
                    }
                }
                unlink(directory.appendingPathComponent(marker).path)
            }
            for name in names where name.hasPrefix(stagingPrefix) && name != marker {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            }
        }
    }

    /// One step of the move: `beginImport`, `importChunk` or `finishImport` (answered with how
    /// many items the keychain holds).
    func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        switch request {
        case .beginImport: try begin()
        case .importChunk(let file, let offset, let bytes): try append(file: file, offset: offset, bytes: bytes)
        case .finishImport(let passcode): return .count(try finish(passcode: passcode))
        default: throw KeychainError(.errSecInternalComponent, "\(request.kind) is not a step of a keychain's move")
        }
        return .done
    }

    /// Starts an import: an empty staging directory (0700) in the user's directory, after
    /// removing what an earlier import of this user left.
    ///
    /// - Throws: `errSecDuplicateItem` when the user already has a system keychain.
    func begin() throws(KeychainError) {
        try refuseExistingKeychain()
        guard mkdir(target.path, 0o700) == 0 || errno == EEXIST else {
            throw KeychainError(.errSecIO, "cannot make \(target.path): \(String(cString: strerror(errno)))")
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: target.path)) ?? []
        for name in names where name.hasPrefix(Self.stagingPrefix) && name != Self.marker {
            try? FileManager.default.removeItem(at: target.appendingPathComponent(name))
        }
        let directory = target.appendingPathComponent("\(Self.stagingPrefix)\(connection)")
        guard mkdir(directory.path, 0o700) == 0 else {
            throw KeychainError(
                .errSecIO, "cannot make the staging directory \(directory.path): \(String(cString: strerror(errno)))")
        }
        staged.withLock { $0 = (directory, 0) }
    }

    /// Writes `bytes` at `offset` of the staged file `file`; parts come in order.
    func append(file: String, offset: Int, bytes: SecretBytes) throws(KeychainError) {
        guard Self.fileNames.contains(file) else {
            throw KeychainError(
                .errSecParam,
                "\(file) is not a file of a keychain; a keychain directory holds "
                    + "\(Self.fileNames.sorted().joined(separator: ", "))"
            )
        }
        let result: Result<Void, KeychainError> = staged.withLock { staged in
            guard let current = staged else {
                return .failure(KeychainError(.errSecParam, "no import was begun on this connection"))
            }
            guard current.bytes + bytes.count <= Self.maximumBytes else {
                return .failure(
                    KeychainError(
                        .errSecDataTooLarge, "the keychain being moved is over \(Self.maximumBytes >> 20) MiB"))
            }
            let path = current.directory.appendingPathComponent(file).path
            let descriptor = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                return .failure(KeychainError(.errSecIO, "cannot write \(path): \(String(cString: strerror(errno)))"))
            }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, Int(info.st_size) == offset else {
                return .failure(KeychainError(.errSecParam, "the parts of \(file) came out of order"))
            }
            let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            guard written == bytes.count else {
                return .failure(KeychainError(.errSecIO, "cannot write \(path): \(String(cString: strerror(errno)))"))
            }
            staged = (current.directory, current.bytes + bytes.count)
            return .success(())
        }
        try result.get()
    }

    /// Checks the staged keychain and makes it the user's system keychain; returns how many
    /// items it holds.
    ///
    /// - Throws: `errSecAuthFailed` when the keychain has a passcode and `passcode` is missing
    ///   or wrong (the staging stays, for another try on this connection; each wrong one counts
    ///   in the moved keychain's attempts); `errSecDecode` when the files are not a whole
    ///   keychain; `errSecDuplicateItem` when the user has a system keychain by now.
    func finish(passcode: SecretBytes?) throws(KeychainError) -> Int {
        guard let directory = staged.withLock({ $0?.directory }) else {
            throw KeychainError(.errSecParam, "no import was begun on this connection")
        }
        let count = try check(directory, passcode: passcode)
        for name in Self.fileNames { try sync(directory.appendingPathComponent(name), ifPresent: true) }
        try sync(directory, ifPresent: false)
        try refuseExistingKeychain()
        try commit(directory)
        staged.withLock { $0 = nil }
        try? FileManager.default.removeItem(at: directory)
        return count
    }

    /// Moves the checked files of `directory` into the user's, the keybag last, under the marker.
    private func commit(_ directory: URL) throws(KeychainError) {
        let marker = target.appendingPathComponent(Self.marker).path
        let fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw KeychainError(.errSecIO, "cannot begin the move at \(marker): \(String(cString: strerror(errno)))")
        }
        close(fd)
        try sync(target, ifPresent: false)
        let present = Self.fileNames.filter {
            FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path)
        }
        let order = present.filter { $0 != Self.committingFile }.sorted() + [Self.committingFile]
        var moved: [String] = []
        for name in order {
            // Every other file is in place, on disk, before the keybag makes them a keychain.
            if name == Self.committingFile { try sync(target, ifPresent: false) }
            guard rename(directory.appendingPathComponent(name).path, target.appendingPathComponent(name).path) == 0
            else {
                let reason = String(cString: strerror(errno))
                for name in moved { unlink(target.appendingPathComponent(name).path) }
                unlink(marker)
                throw KeychainError(.errSecIO, "cannot put \(name) in place in \(target.path): \(reason)")
            }
            moved.append(name)
        }
        unlink(marker)
        try sync(target, ifPresent: false)
    }

    /// Removes the staging of an import that did not finish (the connection closed).
    func abandon() {
        guard
            let directory = staged.withLock({ current -> URL? in
                defer { current = nil }
                return current?.directory
            })
        else { return }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Opens the staged keychain as the daemon will: it must open, its passcode (when it has
    /// one) must be given, and every row of every class must pass its ledger and open.
    private func check(_ directory: URL, passcode: SecretBytes?) throws(KeychainError) -> Int {
        let server = try KeychainServer(directory: directory, cache: ProcessClassKeyCache(), creating: false)
        let owner = CallerIdentity(accessGroups: ["keychaind"], actsForOwner: true)
        guard case .status(let status) = try server.handle(.deviceStatus, caller: owner) else {
            throw KeychainError.errSecInternalComponent
        }
        if status.passcodeSet {
            guard let passcode else {
                throw KeychainError(
                    .errSecAuthFailed, "the keychain being moved has a passcode: give it to move the keychain")
            }
            _ = try server.handle(.unlock(passcode: passcode), caller: owner)
        }
        for itemClass in ItemClass.allCases where itemClass.isImplemented {
            do {
                _ = try server.handle(
                    .copyMatching(
                        ItemQuery(itemClass: itemClass, synchronizable: .any, limit: .all, returns: .attributes)),
                    caller: owner)
            } catch KeychainError.errSecItemNotFound {
                continue
            }
        }
        guard case .count(let count) = try server.handle(.countItems(accessibility: nil), caller: owner) else {
            throw KeychainError.errSecInternalComponent
        }
        _ = try? server.handle(.lock, caller: owner)
        return count
    }

    /// A user directory that holds none of a keychain's files (empty, or a staging directory
    /// and a lock) is no keychain.
    private func refuseExistingKeychain() throws(KeychainError) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: target.path)) ?? []
        guard !names.contains(where: Self.fileNames.contains) else {
            throw KeychainError(
                .errSecDuplicateItem,
                "this user already has a keychain in the system daemon; nothing was moved (erase that one first "
                    + "with `keychainctl erase` to move the per-user keychain in its place)"
            )
        }
    }

    private func sync(_ url: URL, ifPresent: Bool) throws(KeychainError) {
        let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if ifPresent && errno == ENOENT { return }
            throw KeychainError(.errSecIO, "cannot open \(url.path) to sync it: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw KeychainError(.errSecIO, "cannot sync \(url.path): \(String(cString: strerror(errno)))")
        }
    }
}
