import Foundation
import KeychainProtocol
import KeychainSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Users of this machine that the system-mode tests need, created on first use with `useradd`
/// (which takes root: CI runs as root): the system daemon's own user, and two people.
struct LocalUser: Sendable {
    let name: String
    let uid: uid_t
    let gid: gid_t
    /// The home directory the account names (it exists only for users created with one).
    let home: String

    /// The system daemon's user, as clients look it up.
    static func daemon() throws -> LocalUser { try ensure(KeychainPaths.systemUserName, system: true) }
    static func alice() throws -> LocalUser { try ensure("kc-test-alice", system: false) }
    static func bob() throws -> LocalUser { try ensure("kc-test-bob", system: false) }
    /// The user the SSH tests log in as, and run their sshd as: it has a shell, to run the
    /// command the login asks for.
    static func sshLogin() throws -> LocalUser { try ensure("kc-test-ssh", system: false, shell: "/bin/sh") }
    /// The SSH user, whose account root's sshd lets in by key: its password field `*` (no
    /// password, not locked) where useradd leaves `!`, which sshd without PAM takes for a
    /// locked account. Root's sshd, because only it can give a login a terminal.
    static func sshKeyLogin() throws -> LocalUser {
        let user = try sshLogin()
        let usermod = try SpawnedProgram(
            "/usr/sbin/usermod", ["-p", "*", user.name], environment: ProcessInfo.processInfo.environment)
        usermod.waitUntilExit()
        try #require(usermod.terminationStatus == 0, "usermod -p '*' \(user.name)")
        return user
    }
    /// The user the PAM tests log in as (`pamtester`, `sshd`, `su`, `passwd`): a shell, and a
    /// home, where the per-user keychain is.
    static func pamLogin() throws -> LocalUser {
        try ensure("kc-test-pam", system: false, shell: "/bin/sh", createHome: true)
    }

    /// `setpriv` arguments that run the rest of a command line as this user, with no
    /// supplementary group.
    var setpriv: [String] { ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"] }

    private static let creating = NSLock()

    /// The user `name`, created (no home unless `createHome`; no login shell unless `shell`)
    /// when absent.
    private static func ensure(
        _ name: String, system: Bool, shell: String = "/usr/sbin/nologin", createHome: Bool = false
    ) throws -> LocalUser {
        try #require(getuid() == 0, "creating users and running programs as them needs root (CI runs as root)")
        creating.lock()
        defer { creating.unlock() }
        if let user = lookUp(name) { return user }
        let useradd = try SpawnedProgram(
            "/usr/sbin/useradd",
            (system ? ["--system"] : [])
                + ["--user-group", createHome ? "--create-home" : "--no-create-home", "--shell", shell, name],
            environment: ProcessInfo.processInfo.environment)
        useradd.waitUntilExit()
        return try #require(lookUp(name), "useradd \(name) exited \(useradd.terminationStatus)")
    }

    private static func lookUp(_ name: String) -> LocalUser? {
        guard let entry = getpwnam(name)?.pointee else { return nil }
        return LocalUser(name: name, uid: entry.pw_uid, gid: entry.pw_gid, home: String(cString: entry.pw_dir))
    }
}
