import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A copy of this machine in which a test installs, upgrades and removes packages as an
/// administrator would (`apt-get`, `pam-auth-update`, `systemd-sysusers` in the maintainer
/// scripts): an overlay of `/` whose changes go to a tmpfs, in a mount namespace of its own,
/// entered with `chroot`: the machine's files show through (a test's files in /tmp among
/// them), and the machine's own files never change. Its processes are the machine's (one pid
/// namespace): a script inside ends its own by pid, never by name (`pkill keychaind` would end
/// other tests' daemons). A holder process keeps the
/// namespace; ``run(_:)`` runs a shell script inside it; ``cleanUp()`` ends, by pid, every
/// process in that namespace (daemons started inside among them), then the holder.
final class OverlayRoot {
    /// The test's directory: `root/` is the overlay, as the processes inside see `/`.
    let base: URL
    private let holder: SpawnedProgram
    /// The holder's mount namespace (`mnt:[…]`), which every process inside shares.
    private let namespace: String

    var root: URL { base.appendingPathComponent("root") }

    init() throws {
        base = URL(fileURLWithPath: "/tmp/kc-overlay-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: false)
        let layers = base.appendingPathComponent("layers").path
        let root = base.appendingPathComponent("root").path
        let setUp = """
            set -e
            mkdir -p '\(layers)' '\(root)'
            mount -t tmpfs -o mode=0755 tmpfs '\(layers)'
            mkdir '\(layers)/upper' '\(layers)/work'
            mount -t overlay overlay -o lowerdir=/,upperdir='\(layers)/upper',workdir='\(layers)/work' '\(root)'
            mount -t proc proc '\(root)/proc'
            mount --rbind /dev '\(root)/dev'
            mount --rbind /sys '\(root)/sys'
            mount -t tmpfs -o mode=0755 tmpfs '\(root)/run'
            echo ready
            exec sleep 86400
            """
        holder = try SpawnedProgram(
            "/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", setUp],
            environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"], capturingOutput: true, capturingErrors: true)
        var namespace: String?
        for _ in 0..<200 {
            if let link = try? FileManager.default.destinationOfSymbolicLink(
                atPath: "/proc/\(holder.processIdentifier)/ns/mnt"),
                link != (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/mnt")),
                FileManager.default.fileExists(atPath: "/proc/\(holder.processIdentifier)/root/\(root)/usr/bin")
            {
                namespace = link
                break
            }
            guard holder.isRunning else { break }
            usleep(50_000)
        }
        guard let namespace else {
            let output = String(decoding: holder.readOutputToEnd(), as: UTF8.self)
            holder.end()
            try? FileManager.default.removeItem(at: base)
            Issue.record("the overlay did not start: \(output)")
            throw POSIXError(.EIO)
        }
        self.namespace = namespace
    }

    /// Runs `script` with `/bin/sh` as root inside the overlay, in a plain environment (and
    /// `environment`), with `input` on its standard input.
    func run(
        _ script: String, input: String = "", environment: [String: String] = [:]
    ) throws
        -> CommandRunner.Output
    {
        var variables = [
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8",
            "DEBIAN_FRONTEND": "noninteractive",
        ]
        variables.merge(environment) { $1 }
        let command = try SpawnedProgram(
            "/usr/bin/nsenter",
            [
                "--target", String(holder.processIdentifier), "--mount", "--", "/usr/sbin/chroot", root.path, "/bin/sh",
                "-c", script,
            ],
            environment: variables, input: input, capturingOutput: true, capturingErrors: true)
        let output = String(decoding: command.readOutputToEnd(), as: UTF8.self)
        return CommandRunner.Output(status: command.terminationStatus, stdout: output, stderr: "")
    }

    /// Ends every process inside (by pid, SIGKILL), then the holder; the tmpfs goes with it.
    func cleanUp() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for name in names {
            guard let pid = pid_t(name), pid != holder.processIdentifier,
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(name)/ns/mnt")) == namespace
            else { continue }
            kill(pid, SIGKILL)
        }
        holder.end()
        try? FileManager.default.removeItem(at: base)
    }
}
