import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Real logins through `pam_keychain.so`, with the programs people log in with: sshd with
/// password authentication (and with a key), `su -` typed at a terminal, and `passwd` run by the
/// user.
extension PAMTests {
    @Suite struct LoginTests {
        static let keychainSecretService = CommandRunner.binary.deletingLastPathComponent()
            .appendingPathComponent("keychain-secret-service").path

        /// A shell line that runs `command` on a session bus of its own with the keychain's Secret
        /// Service on it, as README's "no desktop" line does, once the bridge holds its name.
        private func withSecretService(_ command: String) -> String {
            let hasOwner =
                "dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus "
                + "org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets"
            let waitForName = "for i in $(seq 100); do \(hasOwner) | grep -q true && break; sleep 0.05; done"
            return "dbus-run-session -- sh -c '\(Self.keychainSecretService) & bridge=$!; \(waitForName); \(command); "
                + "kill $bridge'"
        }

        /// Over SSH with the password: the login unlocks the keychain, and in that session a Secret
        /// Service lookup answers without a prompt; the session's end locks it again. With a key:
        /// the login succeeds and the keychain stays locked.
        @Test func anSSHLoginWithThePasswordUnlocksForTheSessionAndAKeyLoginLeavesItLocked() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            // A secret stored through the Secret Service while the keychain is unlocked.
            try #require(pam.keychainctl(["unlock"], input: PAMHarness.password + "\n").status == 0)
            let stored = try pam.run(
                pam.user.setpriv + [
                    "/bin/sh", "-c",
                    withSecretService(
                        "printf s3cret-for-ssh | secret-tool store --label=pam service pam-test user alice"),
                ])
            try #require(stored.status == 0, "\(stored.output)")
            try #require(pam.keychainctl(["lock"]).status == 0)

            let service = "sshd-kc-pam-test"
            try pam.writeService(
                service,
                [
                    "auth required pam_unix.so", pam.moduleLine("auth"), "account required pam_unix.so",
                    "session required pam_unix.so", pam.moduleLine("session", ["auto_start"]),
                    "password required pam_deny.so",
                ])
            let key = pam.directory.appendingPathComponent("client_key").path
            try #require(
                pam.run(["/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], environment: [:]).status
                    == 0)
            let server = try SSHServer(
                directory: pam.directory, authorizedKeys: String(contentsOfFile: key + ".pub", encoding: .utf8),
                settings: [
                    "UsePAM yes", "PasswordAuthentication yes", "KbdInteractiveAuthentication no",
                    "PubkeyAuthentication yes",
                ],
                name: service)
            let ssh = [
                "/usr/bin/ssh", "-F", "/dev/null", "-o", "StrictHostKeyChecking=no", "-o",
                "UserKnownHostsFile=/dev/null",
                "-p", "\(server.port)",
            ]
            let command =
                "\(PAMHarness.keychainctl) status | grep '^state'; "
                + withSecretService("secret-tool lookup service pam-test user alice; echo")

            // The password on sshpass's environment, never in an argument.
            let login = try pam.run(
                ["/usr/bin/sshpass", "-e"] + ssh + [
                    "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password",
                    "\(pam.user.name)@127.0.0.1", command,
                ], environment: ["SSHPASS": PAMHarness.password, "PATH": "/usr/bin:/bin"])
            print("sshd login with the password:\n\(login.output)")
            #expect(login.status == 0, "\(login.output)")
            #expect(login.output.contains("state: unlocked\n"), "\(login.output)")
            #expect(login.output.contains("s3cret-for-ssh\n"), "\(login.output)")
            #expect(pam.log.waitFor("the last login ended: locked"))
            #expect(try !pam.keychainIsUnlocked)

            let keyLogin = try pam.run(
                ssh + [
                    "-i", key, "-o", "BatchMode=yes", "-o", "PasswordAuthentication=no", "\(pam.user.name)@127.0.0.1",
                    "\(PAMHarness.keychainctl) status | grep '^state'",
                ], environment: ["PATH": "/usr/bin:/bin"])
            print("sshd login with a key:\n\(keyLogin.output)")
            #expect(keyLogin.status == 0, "\(keyLogin.output)")
            #expect(keyLogin.output.contains("state: locked"), "\(keyLogin.output)")
            #expect(pam.log.waitFor("no password came with this login"))
            #expect(try pam.failedAttempts == 0)
        }

        /// `su - user`, typed at a terminal by another user: the password unlocks for the login, and
        /// its end locks.
        @Test func suWithThePasswordUnlocksForTheLogin() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            try pam.appendToService("su-l", [pam.moduleLine("auth"), pam.moduleLine("session", ["auto_start"])])
            let other = try LocalUser.bob()
            let su = try PseudoTerminal(
                URL(fileURLWithPath: other.setpriv[0]),
                Array(other.setpriv.dropFirst()) + [
                    "/usr/bin/su", "-", pam.user.name, "-c", "\(PAMHarness.keychainctl) status | grep '^state'",
                ], environment: ["PATH": "/usr/bin:/bin", "TERM": "dumb"])
            #expect(su.expect("Password:"), "\(su.screen)")
            su.type(PAMHarness.password + "\r")
            #expect(su.expect("state: unlocked"), "\(su.screen)")
            #expect(su.wait() == 0, "\(su.screen)")
            #expect(pam.log.waitFor("the last login ended: locked"))
            #expect(try !pam.keychainIsUnlocked)
        }

        /// `passwd`, run by the user at a terminal, changes the login password and the keychain's
        /// passcode together.
        @Test func passwdChangesTheLoginPasswordAndThePasscodeTogether() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            try pam.appendToService("passwd", [pam.moduleLine("password")])
            let new = "Fresh-Phrase-2026!"
            let passwd = try PseudoTerminal(
                URL(fileURLWithPath: pam.user.setpriv[0]), Array(pam.user.setpriv.dropFirst()) + ["/usr/bin/passwd"],
                environment: pam.userEnvironment, owner: (pam.user.uid, pam.user.gid))
            #expect(passwd.expect("Current password:"), "\(passwd.screen)")
            passwd.type(PAMHarness.password + "\r")
            #expect(passwd.expect("New password:"), "\(passwd.screen)")
            passwd.type(new + "\r")
            #expect(passwd.expect("Retype new password:"), "\(passwd.screen)")
            passwd.type(new + "\r")
            #expect(passwd.wait() == 0, "\(passwd.screen)")
            print("passwd:\n\(passwd.screen)")
            #expect(pam.log.waitFor("the keychain's passcode is now the new login password"))
            #expect(try pam.keychainctl(["unlock"], input: new + "\n").status == 0)
            #expect(try pam.failedAttempts == 0)
        }
    }
}
