import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real sshd on a free loopback port, ended by its pid: its host key, its authorized keys and
/// its configuration in a directory of the test's. Spawned directly, not with Foundation's
/// `Process`: sshd closes every inherited descriptor, which Foundation takes for its exit and
/// then waits on it, blocking every other `Process` of the test.
final class SSHServer {
    let port: Int
    private let pid: pid_t

    /// Starts sshd with `settings` added to its configuration, as `runAs` (an unprivileged sshd,
    /// which can only log in as itself) or as root, under the program name `name`: sshd names
    /// its PAM service after the name it was started by, so a test's service file in /etc/pam.d
    /// is its own.
    init(
        directory: URL, authorizedKeys: String, settings: [String], runAs user: LocalUser? = nil,
        name: String = "sshd"
    ) throws {
        let fileManager = FileManager.default
        // sshd wants its privilege-separation directory even when it cannot use it.
        try? fileManager.createDirectory(
            atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let hostKey = directory.appendingPathComponent("host_key")
        try SpawnedProgram(
            "/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", hostKey.path],
            environment: ProcessInfo.processInfo.environment
        ).waitUntilExit()
        let authorized = directory.appendingPathComponent("authorized_keys")
        try authorizedKeys.write(to: authorized, atomically: true, encoding: .utf8)
        port = try Self.freePort()
        let config = directory.appendingPathComponent("sshd_config")
        try
            ([
                "Port \(port)", "ListenAddress 127.0.0.1", "HostKey \(hostKey.path)",
                "AuthorizedKeysFile \(authorized.path)", "StrictModes no", "PidFile none",
            ] + settings).joined(separator: "\n").appending("\n").write(to: config, atomically: true, encoding: .utf8)
        if let user {
            for file in [hostKey, config, authorized] { chown(file.path, user.uid, user.gid) }
        }
        chmod(directory.path, 0o755)
        // sshd re-executes itself by the path it was started with: a link named `name` keeps it.
        var program = "/usr/sbin/sshd"
        if name != "sshd" {
            program = directory.appendingPathComponent(name).path
            try fileManager.createSymbolicLink(atPath: program, withDestinationPath: "/usr/sbin/sshd")
        }
        let command = (user?.setpriv ?? []) + [program, "-D", "-e", "-f", config.path]
        pid = try ChildSpawn.spawn(command[0], Array(command.dropFirst()), environment: [:], stdio: (nil, nil, nil))
        let deadline = Date().addingTimeInterval(10)
        while !Self.accepts(port) && Date() < deadline { usleep(50_000) }
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
