import Crypto
import Foundation
import KeychainProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// App identities the system daemon can vouch for: registered apps share exactly their
/// registered groups, and a program it cannot trust (a copy in a user's directory, one run with
/// `LD_PRELOAD`, one under `ptrace`, one that is not the registered build) is *untrusted*: its
/// own items only (issue: "System mode", "App identity the kernel vouches for").
@Suite(.serialized) struct AppIdentityTests {
    static let missingEntitlement = "errSecMissingEntitlement"

    /// A system daemon with mail and calendar sharing `com.example.shared`, and notes alone.
    static func registeredApps() throws -> (SystemDaemonHarness, mail: URL, calendar: URL, notes: URL) {
        let daemon = try SystemDaemonHarness()
        let mail = try daemon.program("example-mail")
        let calendar = try daemon.program("example-calendar")
        let notes = try daemon.program("example-notes")
        let pin = SHA256.hash(data: try Data(contentsOf: notes)).map { String(format: "%02x", $0) }.joined()
        try daemon.register(
            "mail", identifier: "com.example.mail", executable: mail.path,
            groups: ["com.example.mail", "com.example.shared"])
        try daemon.register(
            "calendar", identifier: "com.example.calendar", executable: calendar.path,
            groups: ["com.example.calendar", "com.example.shared"], applicationGroups: ["group.com.example.suite"])
        try daemon.register(
            "notes", identifier: "com.example.notes", executable: notes.path, sha256: pin,
            groups: ["com.example.notes"])
        return (daemon, mail, calendar, notes)
    }

    /// Adds the item the tests share, "team" in `com.example.shared`, as `program` run by `user`.
    static func addSharedItem(_ daemon: SystemDaemonHarness, as user: LocalUser, program: URL) throws {
        let added = try daemon.keychainctl(
            as: user, ["add-generic-password", "-s", "team", "-a", "me", "--access-group", "com.example.shared"],
            input: "shared secret", program: program)
        #expect(added.status == 0, "\(added.stderr)\n\(daemon.daemonLog)")
    }

    @Test func registeredAppsShareExactlyTheirRegisteredGroups() throws {
        let (daemon, mail, calendar, notes) = try Self.registeredApps()
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        try Self.addSharedItem(daemon, as: alice, program: mail)
        #expect(
            try daemon.keychainctl(
                as: alice, ["add-generic-password", "-s", "inbox", "-a", "me"], input: "mail's own", program: mail
            ).status == 0)
        // Calendar shares the group, not mail's own items.
        #expect(
            try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "team", "-w"], program: calendar).stdout
                == "shared secret\n")
        #expect(
            try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "inbox", "-w"], program: calendar).status
                == 44)
        // Calendar's application group is one of its access groups, as on iOS; mail's is not.
        let inAppGroup = ["-s", "suite", "-a", "me", "--access-group", "group.com.example.suite"]
        #expect(
            try daemon.keychainctl(as: alice, ["add-generic-password"] + inAppGroup, input: "x", program: calendar)
                .status == 0)
        #expect(
            try daemon.keychainctl(as: alice, ["add-generic-password"] + inAppGroup, input: "x", program: mail)
                .stderr.contains(Self.missingEntitlement))
        // Notes shares nothing: the shared item is invisible, and naming the group is -34018.
        #expect(
            try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "team", "-w"], program: notes).status
                == 44)
        let named = try daemon.keychainctl(
            as: alice, ["find-generic-password", "-s", "team", "--access-group", "com.example.shared"], program: notes)
        #expect(named.status == 1)
        #expect(named.stderr.contains(Self.missingEntitlement), "\(named.stderr)")
        // Notes is pinned to its build, which it is: it works as itself.
        #expect(
            try daemon.keychainctl(
                as: alice, ["add-generic-password", "-s", "jotting", "-a", "me"], input: "x", program: notes
            ).status == 0)
        // Another user's mail has another keychain: nothing shared across users.
        #expect(
            try daemon.keychainctl(
                as: try LocalUser.bob(), ["find-generic-password", "-s", "team", "-w"], program: calendar
            ).status == 44)
        #expect(!daemon.daemonLog.contains("untrusted app"), "\(daemon.daemonLog)")
        // A registration others could have written registers nothing: calendar loses the group.
        chmod(daemon.registry.appendingPathComponent("calendar.json").path, 0o666)
        let unregistered = try daemon.keychainctl(
            as: alice, ["find-generic-password", "-s", "team", "--access-group", "com.example.shared"],
            program: calendar)
        #expect(unregistered.stderr.contains(Self.missingEntitlement), "\(unregistered.stderr)")
    }

    @Test func aProgramTheDaemonCannotTrustGetsItsOwnItemsOnly() throws {
        let (daemon, mail, _, _) = try Self.registeredApps()
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        try Self.addSharedItem(daemon, as: alice, program: mail)
        // A copy of mail in a directory alice owns: she could have changed it.
        let own = daemon.base.appendingPathComponent("alice-bin")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        chown(own.path, alice.uid, alice.gid)
        let copy = try daemon.program("example-mail", in: own, owner: alice)
        // Mail itself with a library of alice's choice loaded first, and under a debugger.
        let variants: [(program: URL, prefix: [String], why: String)] = [
            (copy, [], "could be changed by someone other than root"),
            (mail, ["/usr/bin/env", "LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6"], "sets LD_PRELOAD"),
            (mail, ["/usr/bin/strace", "-f", "-o", "/dev/null"], "it is being traced"),
        ]
        for variant in variants {
            let shared = try daemon.keychainctl(
                as: alice, ["find-generic-password", "-s", "team", "--access-group", "com.example.shared", "-w"],
                program: variant.program, prefix: variant.prefix)
            #expect(shared.status == 1, "\(variant.why): \(shared.stdout)")
            #expect(shared.stderr.contains(Self.missingEntitlement), "\(variant.why): \(shared.stderr)")
            #expect(
                try daemon.keychainctl(
                    as: alice, ["find-generic-password", "-s", "team", "-w"], program: variant.program,
                    prefix: variant.prefix
                ).status == 44)
            #expect(
                daemon.daemonLog.contains(variant.why), "the audit log does not say \(variant.why): \(daemon.daemonLog)"
            )
            // It still has items of its own, which trusted mail does not see.
            #expect(
                try daemon.keychainctl(
                    as: alice, ["add-generic-password", "-s", "scratch", "-a", "me", "-U"], input: "untrusted",
                    program: variant.program, prefix: variant.prefix
                ).status == 0)
            #expect(
                try daemon.keychainctl(
                    as: alice, ["find-generic-password", "-s", "scratch", "-w"], program: variant.program,
                    prefix: variant.prefix
                ).stdout == "untrusted\n")
        }
        #expect(
            try daemon.keychainctl(as: alice, ["find-generic-password", "-s", "scratch", "-w"], program: mail).status
                == 44)
        // A registered path whose file is not the pinned build: untrusted, and the log says so.
        let other = try daemon.program("example-pinned")
        let wrongPin = String(repeating: "0", count: 64)
        try daemon.register(
            "pinned", identifier: "com.example.pinned", executable: other.path, sha256: wrongPin,
            groups: ["com.example.pinned"])
        let pinned = try daemon.keychainctl(
            as: alice, ["add-generic-password", "-s", "p", "-a", "me", "--access-group", "com.example.pinned"],
            input: "x", program: other)
        #expect(pinned.status == 1)
        #expect(pinned.stderr.contains(Self.missingEntitlement), "\(pinned.stderr)")
        #expect(daemon.daemonLog.contains("SHA-256 differs"), "\(daemon.daemonLog)")
    }
    /// A registered program run in a user and mount namespace of the user's own, where a library
    /// of hers is mounted over a root-owned library's path: the daemon, which looks the path up
    /// in its own namespace, finds root's file there, but the process runs hers. The program is
    /// Python (registered with the shared group), speaking the wire format itself: inside the
    /// namespace the keychaind user has no uid, so keychainctl would not trust the socket (a
    /// hostile library in the process would skip that check).
    @Test func aLibraryMountedOverARootOwnedPathInANamespaceOfItsOwnIsNotTrusted() throws {
        let (daemon, mail, _, _) = try Self.registeredApps()
        defer { daemon.cleanUp() }
        let alice = try LocalUser.alice()
        try Self.addSharedItem(daemon, as: alice, program: mail)
        let python = "/usr/bin/python3.11"
        try daemon.register(
            "python", identifier: "com.example.python", executable: python,
            groups: ["com.example.python", "com.example.shared"])
        let own = daemon.base.appendingPathComponent("alice-lib")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        chown(own.path, alice.uid, alice.gid)
        // A copy of libc stands for a hostile one: another file, hers.
        let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
        let hers = own.appendingPathComponent("libc.so.6")
        try FileManager.default.copyItem(atPath: libc, toPath: hers.path)
        chown(hers.path, alice.uid, alice.gid)
        let read = RequestCoder.encode(
            .copyMatching(
                ItemQuery(
                    itemClass: .genericPassword, attributes: ["svce": .string("team")],
                    accessGroup: "com.example.shared", returns: .data)))
        let client = """
            import select, socket, sys
            s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
            def frame():
                header = s.recv(4); body = b""
                while len(body) < int.from_bytes(header, "big"): body += s.recv(4096)
                return body
            if select.select([s], [], [], 2.0)[0]: frame()
            request = bytes.fromhex(sys.argv[2]); s.sendall(len(request).to_bytes(4, "big") + request)
            print(frame().hex())
            """
        let script = daemon.base.appendingPathComponent("client.py")
        try client.write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o644)
        let arguments = "\(python) '\(script.path)' '\(daemon.socket)' \(Hex.encode(read))"
        func secret(_ command: String) throws -> Result<KeychainReply, KeychainError>? {
            let run = try daemon.shellCommand(as: alice, command)
            let output = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            if output.isEmpty { Issue.record("\(command): \(run.stderr)") }
            guard let bytes = Hex.decode(output) else { return nil }
            return try? ReplyCoder.decode(bytes)
        }
        // Registered Python, run plainly, shares the group.
        let plain = try secret(arguments)
        guard case .success(.items(let items))? = plain else {
            Issue.record(
                "registered python did not read the shared item: \(String(describing: plain)) \(daemon.daemonLog)")
            return
        }
        #expect(items.first?.secret?.copyData() == Data("shared secret".utf8))
        // With her library mounted over libc's path, it is untrusted: the group is not its.
        let mounted = try secret("unshare -Urm /bin/sh -c \"mount --bind '\(hers.path)' \(libc) && exec \(arguments)\"")
        guard case .failure(let refused)? = mounted else {
            Issue.record("the program running her library read the shared item: \(String(describing: mounted))")
            return
        }
        #expect(refused.status == KeychainError.errSecMissingEntitlement.status, "\(refused)")
        #expect(daemon.daemonLog.contains("it runs code from another file than \(libc)"), "\(daemon.daemonLog)")
        // In a user namespace of its own, even with nothing mounted, it is untrusted too.
        guard case .failure? = try secret("unshare -Ur \(arguments)") else {
            Issue.record("a program in a user namespace of its own read the shared item")
            return
        }
        #expect(daemon.daemonLog.contains("it runs in a user namespace of its own"), "\(daemon.daemonLog)")
    }

    /// A Flatpak app as the system installation holds it: `/var/lib/flatpak/app/ID/.../files`,
    /// root's, with a copy of keychainctl as its program (removed by ``removeFakeFlatpak``).
    static let flatpakID = "org.example.KeychainTest"
    static let flatpakFiles = "/var/lib/flatpak/app/\(flatpakID)/x86_64/stable/0123abcd/files"

    static func installFakeFlatpak() throws {
        try FileManager.default.createDirectory(atPath: flatpakFiles + "/bin", withIntermediateDirectories: true)
        var directory = flatpakFiles + "/bin"
        while directory != "/var/lib" {
            chmod(directory, 0o755)
            directory = URL(fileURLWithPath: directory).deletingLastPathComponent().path
        }
        try? FileManager.default.removeItem(atPath: flatpakFiles + "/bin/example-app")
        try FileManager.default.copyItem(
            at: CommandRunner.binary, to: URL(fileURLWithPath: flatpakFiles + "/bin/example-app"))
        chmod(flatpakFiles + "/bin/example-app", 0o755)
    }

    static func removeFakeFlatpak() {
        try? FileManager.default.removeItem(atPath: "/var/lib/flatpak/app/\(flatpakID)")
    }

    /// Runs `/app/bin/example-app --system-socket … arguments` as `user` in a mount namespace
    /// made as Flatpak (bubblewrap) makes one: the host's /usr, /etc, /opt, /tmp, /proc and
    /// /dev, `appFiles` at /app, and a `/.flatpak-info` claiming `appPath` for the app, the whole
    /// made the root with `pivot_root` (so that, seen from outside, its program is `/app/...`).
    static func runInSandbox(
        _ daemon: SystemDaemonHarness, as user: LocalUser, appFiles: String, appPath: String, _ arguments: [String],
        input: String = ""
    ) throws -> CommandRunner.Output {
        let root = daemon.base.appendingPathComponent("sandbox-root-\(UUID().uuidString.prefix(6))").path
        let info =
            "[Application]\nname=\(flatpakID)\nruntime=runtime/org.example.Platform/x86_64/1\n\n"
            + "[Instance]\napp-path=\(appPath)\n"
        let command = (user.setpriv + ["/app/bin/example-app", "--system-socket", daemon.socket] + arguments).map(
            SystemDaemonHarness.quoted
        ).joined(separator: " ")
        let script = """
            mount --make-rprivate / && mkdir -p \(root) && mount -t tmpfs -o mode=755 sandbox \(root) &&
            for d in usr etc opt tmp proc dev; do mkdir \(root)/$d && mount --rbind /$d \(root)/$d; done &&
            ln -s usr/lib \(root)/lib && ln -s usr/lib64 \(root)/lib64 && ln -s usr/bin \(root)/bin &&
            mkdir \(root)/app && mount --bind \(SystemDaemonHarness.quoted(appFiles)) \(root)/app &&
            printf '\(info)' > \(root)/.flatpak-info && chmod 644 \(root)/.flatpak-info &&
            mkdir \(root)/oldroot && cd \(root) && pivot_root . oldroot && umount -l /oldroot && rmdir /oldroot &&
            printf %s \(SystemDaemonHarness.quoted(input)) | \(command)
            """
        let runner = try CommandRunner()
        defer { try? FileManager.default.removeItem(at: runner.home) }
        return try runner.script("unshare --mount /bin/sh -c \(SystemDaemonHarness.quoted(script))")
    }

    @Test func aFlatpakAppIsKnownByItsAppIDOnlyWhenItRunsTheInstalledFile() throws {
        let (daemon, mail, _, _) = try Self.registeredApps()
        defer { daemon.cleanUp() }
        try Self.installFakeFlatpak()
        defer { Self.removeFakeFlatpak() }
        try daemon.register(
            "flatpak", identifier: "org.example.KeychainTest", flatpak: Self.flatpakID,
            groups: ["org.example.KeychainTest", "com.example.shared"])
        let alice = try LocalUser.alice()
        try Self.addSharedItem(daemon, as: alice, program: mail)

        // The installed app in its sandbox: the registered Flatpak app, with the shared group.
        let genuine = try Self.runInSandbox(
            daemon, as: alice, appFiles: Self.flatpakFiles, appPath: Self.flatpakFiles,
            ["find-generic-password", "-s", "team", "-w"])
        #expect(genuine.stdout == "shared secret\n", "\(genuine.stdout)\(genuine.stderr)\n\(daemon.daemonLog)")
        #expect(
            try Self.runInSandbox(
                daemon, as: alice, appFiles: Self.flatpakFiles, appPath: Self.flatpakFiles,
                ["add-generic-password", "-s", "flatpak-own", "-a", "me"], input: "the app's own"
            ).status == 0)
        #expect(!daemon.daemonLog.contains("untrusted app"), "\(daemon.daemonLog)")

        // The same claim with another program at /app (root's files, but not the installed
        // ones): untrusted, its own items only, and the log says why.
        let other = daemon.base.appendingPathComponent("other-app")
        try FileManager.default.createDirectory(
            at: other.appendingPathComponent("bin"), withIntermediateDirectories: true)
        chmod(other.path, 0o755)
        chmod(other.appendingPathComponent("bin").path, 0o755)
        _ = try daemon.program("example-app", in: other.appendingPathComponent("bin"))
        let forged = try Self.runInSandbox(
            daemon, as: alice, appFiles: other.path, appPath: Self.flatpakFiles,
            ["find-generic-password", "-s", "team", "--access-group", "com.example.shared", "-w"])
        #expect(
            forged.status == 1 && forged.stderr.contains(Self.missingEntitlement), "\(forged.stdout)\(forged.stderr)")
        #expect(
            daemon.daemonLog.contains("it claims to be flatpak:\(Self.flatpakID), but it does not run"),
            "\(daemon.daemonLog)")
        #expect(
            try Self.runInSandbox(
                daemon, as: alice, appFiles: other.path, appPath: Self.flatpakFiles,
                ["find-generic-password", "-s", "flatpak-own", "-w"]
            ).status == 44)

        // A claim of a user installation (files alice could change): refused, whatever runs.
        let userInstallation = "/home/alice/.local/share/flatpak/app/\(Self.flatpakID)/x86_64/stable/0123abcd/files"
        let user = try Self.runInSandbox(
            daemon, as: alice, appFiles: Self.flatpakFiles, appPath: userInstallation,
            ["find-generic-password", "-s", "team", "--access-group", "com.example.shared", "-w"])
        #expect(user.status == 1 && user.stderr.contains(Self.missingEntitlement), "\(user.stdout)\(user.stderr)")
        #expect(
            daemon.daemonLog.contains("does not place \(Self.flatpakID) in the system installation"),
            "\(daemon.daemonLog)")
    }
}
