import Foundation
import Keychain
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// `keychainctl daemon install --system`: the system daemon put in place, as root.
///
/// - the `keychaind` system user (no login shell, no home of its own), which owns every user's
///   keychain files in `/var/lib/keychain` (0700) and which no user can become;
/// - `keychaind` copied to `/usr/local/libexec/keychaind` (root's, 0755): systemd's
///   `ProtectHome=yes` hides home directories from the daemon, and the daemon's code must not be
///   a file its users could replace;
/// - `keychaind.socket` (`/run/keychain/socket`, 0666: every local user may connect, the
///   kernel says who they are) and `keychaind.service` in `/etc/systemd/system`, with the
///   hardening systemd offers: the daemon keeps `CAP_SYS_PTRACE` alone (to read its clients'
///   `/proc/PID`), writes nothing but its state directory, reaches no network and makes no
///   executable memory.
///
/// - the prompt agent (``PromptAgentInstall``), which draws each user's sheets;
/// - the polkit rule (``FingerprintPolkitRule``) that lets the daemon verify its users' fingers
///   through fprintd, where polkit is installed.
///
/// Enabling is left to the administrator (`systemctl enable --now keychaind.socket`), as a
/// package's postinst would do it.
enum SystemUnits {
    /// Where the daemon's executable is installed.
    static let daemonPath = "/usr/local/libexec/keychaind"
    /// Where the units are written.
    static let unitDirectory = "/etc/systemd/system"

    static func install() throws {
        guard geteuid() == 0 else {
            throw KeychainError(
                .errSecParam,
                "installing the system daemon creates a system user and writes to /etc and /usr/local: run it as root")
        }
        let source = try DaemonLocation.keychaind()
        try createUser()
        try InstalledFiles.copy(from: source, to: daemonPath, mode: 0o755)
        let state = KeychainPaths.systemStateDirectory
        try InstalledFiles.makeDirectory(state)
        guard let user = getpwnam(KeychainPaths.systemUserName)?.pointee else {
            throw KeychainError(.errSecIO, "the \(KeychainPaths.systemUserName) user was created but cannot be found")
        }
        guard chown(state, user.pw_uid, user.pw_gid) == 0, chmod(state, 0o700) == 0 else {
            throw KeychainError(
                .errSecIO,
                "cannot give \(state) to \(KeychainPaths.systemUserName): \(String(cString: strerror(errno)))")
        }
        do {
            try socketUnit.write(toFile: "\(unitDirectory)/keychaind.socket", atomically: true, encoding: .utf8)
            try serviceUnit(daemon: daemonPath, tpmGroup: getgrnam("tss") != nil ? "tss" : nil).write(
                toFile: "\(unitDirectory)/keychaind.service", atomically: true, encoding: .utf8)
        } catch {
            throw KeychainError(.errSecIO, "cannot write the units in \(unitDirectory): \(error.localizedDescription)")
        }
        let fingerprint = try installPolkitRule()
        let agent = try PromptAgentInstall.install()
        print(
            """
            installed the system keychain daemon: user \(KeychainPaths.systemUserName), \(daemonPath), \(state)/, \
            \(unitDirectory)/keychaind.socket and keychaind.service
            enable it: systemctl daemon-reload && systemctl enable --now keychaind.socket
            then every program of every user reaches it at \(KeychainPaths.systemSocket); a user's per-user keychain \
            stays where it was
            \(agent)
            \(fingerprint)
            """)
    }

    /// Writes ``FingerprintPolkitRule`` where polkit reads it; what became of the fingerprint,
    /// for the user.
    private static func installPolkitRule() throws -> String {
        let directory = FingerprintPolkitRule.directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            return "polkit is not installed (no \(directory)): the system keychain will use the passcode only"
        }
        let path = "\(directory)/\(FingerprintPolkitRule.fileName)"
        try InstalledFiles.write(FingerprintPolkitRule.text, at: path)
        return "\(path): keychaind may verify its users' fingers with fprintd (and do nothing else with it)"
    }

    /// The socket: every local user may connect; systemd creates it as the daemon's user.
    static let socketUnit = """
        [Unit]
        Description=swift-keychain system daemon socket

        [Socket]
        ListenStream=\(KeychainPaths.systemSocket)
        SocketUser=\(KeychainPaths.systemUserName)
        SocketGroup=\(KeychainPaths.systemUserName)
        SocketMode=0666
        DirectoryMode=0755

        [Install]
        WantedBy=sockets.target

        """

    /// The daemon, started by the socket's first connection, as its own user with
    /// `CAP_SYS_PTRACE` alone and every restriction that leaves it able to serve.
    ///
    /// The capability lets it read its clients' `/proc/PID` files and, with `process_vm_readv`,
    /// the environment they started with. It cannot change a process: `ptrace`,
    /// `process_vm_writev` and `pidfd_getfd` are denied here and again by keychaind itself as it
    /// starts (it is also started without systemd). Landlock's three calls are allowed besides
    /// `@system-service` (systemd 252 lists them in no group): each worker, and sync's git within
    /// it, is confined with them. `LimitNOFILE=` gives each user's connections room (64 each,
    /// two descriptors apiece).
    ///
    /// Not set, and why: `PrivateUsers=` (the kernel's uids and `CAP_SYS_PTRACE` must be those
    /// of the host to identify clients), `ProtectProc=invisible` (the daemon reads its clients'
    /// `/proc/PID`), `SystemCallFilter=~@privileged` (keychaind calls `capset` to empty its
    /// inheritable set before its first thread), `~@resources` and `ProcSubset=pid` (what the
    /// Swift runtime and Dispatch read and call there is not checked under systemd yet).
    /// `PrivateNetwork=` keeps the system bus: it is a Unix socket reached by path.
    ///
    /// The TPM: no `PrivateDevices=` (it would hide `/dev/tpmrm0`), but `DevicePolicy=closed` with
    /// the TPM's resource manager alone allowed, and, where the group exists, `tss`, which
    /// Debian's udev rules give the device to (Docs/TPM.md).
    static func serviceUnit(daemon: String, tpmGroup: String?) -> String {
        """
        [Unit]
        Description=swift-keychain system daemon (keychaind --system)
        Requires=keychaind.socket

        [Service]
        ExecStart=\(daemon) --system
        KillSignal=SIGTERM
        User=\(KeychainPaths.systemUserName)
        Group=\(KeychainPaths.systemUserName)
        AmbientCapabilities=CAP_SYS_PTRACE
        CapabilityBoundingSet=CAP_SYS_PTRACE
        NoNewPrivileges=yes
        StateDirectory=keychain
        StateDirectoryMode=0700
        UMask=0077
        ProtectSystem=strict
        ProtectHome=yes
        PrivateTmp=yes
        PrivateMounts=yes
        PrivateNetwork=yes
        DevicePolicy=closed
        DeviceAllow=/dev/tpmrm0 rw\(tpmGroup.map { "\nSupplementaryGroups=\($0)" } ?? "")
        ProtectKernelTunables=yes
        ProtectKernelModules=yes
        ProtectKernelLogs=yes
        ProtectControlGroups=yes
        ProtectClock=yes
        ProtectHostname=yes
        RestrictAddressFamilies=AF_UNIX
        IPAddressDeny=any
        RestrictNamespaces=yes
        RestrictRealtime=yes
        RestrictSUIDSGID=yes
        LockPersonality=yes
        MemoryDenyWriteExecute=yes
        RemoveIPC=yes
        KeyringMode=private
        SystemCallArchitectures=native
        SystemCallFilter=@system-service
        SystemCallFilter=landlock_create_ruleset landlock_add_rule landlock_restrict_self
        SystemCallFilter=~@obsolete @mount @swap @reboot @module @raw-io @cpu-emulation @debug
        SystemCallFilter=~ptrace process_vm_writev pidfd_getfd
        SystemCallErrorNumber=EPERM
        LimitCORE=0
        LimitNOFILE=65536

        [Install]
        Also=keychaind.socket

        """
    }

    /// Creates the system user unless it exists: no login shell, its home the state directory.
    private static func createUser() throws {
        guard getpwnam(KeychainPaths.systemUserName) == nil else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/useradd")
        process.arguments = [
            "--system", "--user-group", "--no-create-home", "--home-dir", KeychainPaths.systemStateDirectory,
            "--shell", "/usr/sbin/nologin", "--comment", "swift-keychain system daemon", KeychainPaths.systemUserName,
        ]
        do {
            try process.run()
        } catch {
            throw KeychainError(.errSecIO, "cannot run useradd: \(error.localizedDescription)")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw KeychainError(
                .errSecIO,
                "useradd could not create the \(KeychainPaths.systemUserName) user (exit \(process.terminationStatus))")
        }
    }
}
