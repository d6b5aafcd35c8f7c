import Foundation
import KeychainSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension PAMTests {
    /// `pam_keychain.so` under `pamtester`, against service files that load it as Docs/PAM.md says:
    /// the login password unlocks a keychain whose passcode it is, and nothing else does; the last
    /// login's end locks; a password change by root leaves the passcode alone.
    @Suite struct ModuleTests {
        /// A login stack as a distribution's `login` has it: the password checked by pam_unix, the
        /// module after it in `auth` and in `session`.
        private func writeLoginService(_ pam: PAMHarness, session options: [String] = ["auto_start"]) throws -> String {
            let name = "kc-test-pam-login"
            try pam.writeService(
                name,
                [
                    "auth required pam_unix.so", pam.moduleLine("auth"), "account required pam_permit.so",
                    pam.moduleLine("session", options), "password required pam_permit.so",
                ])
            return name
        }

        /// The module loads no Swift runtime into the programs that load it, and exports PAM's
        /// entry points alone.
        @Test func theModuleIsCWithPAMsEntryPointsOnly() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            let needed = try pam.run(["/usr/bin/readelf", "-d", pam.module], environment: [:])
            try #require(needed.status == 0, "\(needed.output)")
            let libraries = needed.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }
            #expect(libraries.contains { $0.contains("[libpam.so.0]") }, "\(libraries)")
            #expect(!libraries.contains { $0.contains("swift") || $0.contains("Foundation") }, "\(libraries)")
            let exported = try pam.run(["/usr/bin/nm", "-D", "--defined-only", pam.module], environment: [:])
            let functions = exported.output.split(separator: "\n").filter { $0.contains(" T ") }.map {
                String($0.split(separator: " ").last ?? "")
            }
            #expect(
                Set(functions)
                    == [
                        "pam_sm_authenticate", "pam_sm_setcred", "pam_sm_open_session", "pam_sm_close_session",
                        "pam_sm_chauthtok",
                    ], "\(functions)")
        }

        @Test func theLoginPasswordUnlocksAndTheLastLoginsEndLocks() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            let service = try writeLoginService(pam)
            // auto_start: no keychaind runs when the user logs in; the module starts theirs.
            pam.stopDaemon()
            let login = try pam.pamtester(service, ["authenticate", "open_session"])
            #expect(login.status == 0, "\(login.output)")
            #expect(try pam.keychainIsUnlocked)
            #expect(pam.log.waitFor("unlocked with the login password"))

            try #require(pam.keychainctl(["lock"]).status == 0)
            let whole = try pam.pamtester(service, ["authenticate", "open_session", "close_session"])
            #expect(whole.status == 0, "\(whole.output)")
            #expect(pam.log.waitFor("the last login ended: locked"))
            #expect(try !pam.keychainIsUnlocked)
            #expect(try pam.failedAttempts == 0)
            // The password is in no log line.
            #expect(pam.log.lines(containing: PAMHarness.password).isEmpty)
        }

        @Test func aLoginPasswordThatIsNotThePasscodeIsTriedOnceAndLeavesItLocked() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            let changed = try pam.keychainctl(
                ["passcode", "change"], input: "\(PAMHarness.password)\nOther-code-9753\n")
            try #require(changed.status == 0, "\(changed.output)")
            try #require(pam.keychainctl(["lock"]).status == 0)
            let service = try writeLoginService(pam)

            let first = try pam.pamtester(service, ["authenticate", "open_session"])
            #expect(first.status == 0)
            #expect(try !pam.keychainIsUnlocked)
            #expect(try pam.failedAttempts == 1)
            #expect(pam.log.waitFor("the login password is not the keychain's passcode: left locked"))
            // Issue 53: the person was told nothing. The login's conversation says one line.
            #expect(
                first.output.contains("Your keychain stays locked: your login password is not its passcode"),
                "\(first.output)")
            // The next login does not try again: the count stays at one, however often one logs in.
            let next = try pam.pamtester(service, ["authenticate", "open_session"])
            #expect(next.status == 0)
            #expect(pam.log.waitFor("failed passcode attempt(s) are on record"))
            #expect(next.output.contains("Your keychain stays locked: a failed passcode attempt"), "\(next.output)")
            #expect(try pam.failedAttempts == 1)
            // The passcode unlocks, and the next login tries the password again.
            #expect(try pam.keychainctl(["unlock"], input: "Other-code-9753\n").status == 0)
            #expect(try pam.failedAttempts == 0)
        }

        @Test func aWrongLoginPasswordFailsTheLoginAndReachesNoKeychain() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            let service = try writeLoginService(pam)
            let login = try pam.pamtester(service, ["authenticate", "open_session"], input: "not-the-password\n")
            #expect(login.status != 0)
            #expect(login.output.contains("Authentication failure"), "\(login.output)")
            #expect(try !pam.keychainIsUnlocked)
            #expect(try pam.failedAttempts == 0)
        }

        /// A login with no password (PAM's authentication asked for none, as with a key, a
        /// fingerprint or autologin) succeeds, and the keychain stays as it was.
        @Test func aLoginWithoutAPasswordSucceedsAndLeavesTheKeychainLocked() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            try pam.writeService(
                "kc-test-pam-nopassword",
                [
                    "auth required pam_permit.so", pam.moduleLine("auth"), "account required pam_permit.so",
                    pam.moduleLine("session"),
                ])
            let login = try pam.pamtester("kc-test-pam-nopassword", ["authenticate", "open_session"], input: "")
            #expect(login.status == 0, "\(login.output)")
            #expect(pam.log.waitFor("no password came with this login"))
            #expect(try !pam.keychainIsUnlocked)
            #expect(try pam.failedAttempts == 0)
        }

        /// Without `auto_start` a keychaind that is not running is not started; `only_if` limits the
        /// module to the services it names. Either way the login succeeds.
        @Test func withoutAutoStartOrOutsideOnlyIfTheKeychainIsLeftAlone() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            pam.stopDaemon()
            let service = try writeLoginService(pam, session: [])
            #expect(try pam.pamtester(service, ["authenticate", "open_session"]).status == 0)
            #expect(pam.log.waitFor("keychaind is not running, so the keychain was left as it is"))
            #expect(try pam.keychainctl(["daemon", "status"]).output.contains("keychaind is not running"))

            let limited = try writeLoginService(pam, session: ["auto_start", "only_if=gdm-password,sshd"])
            #expect(try pam.pamtester(limited, ["authenticate", "open_session"]).status == 0)
            #expect(try pam.keychainctl(["daemon", "status"]).output.contains("keychaind is not running"))
            #expect(pam.log.lines(containing: "unlocked with the login password").isEmpty)
        }

        /// Root sets a password without the old one: the keychain's passcode stays, and the log
        /// says why.
        @Test func aPasswordSetByRootLeavesThePasscodeAsItIs() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            try pam.writeService(
                "kc-test-pam-passwd", ["password requisite pam_unix.so", pam.moduleLine("password", ["auto_start"])])
            let changed = try pam.pamtester("kc-test-pam-passwd", ["chauthtok"], input: "New-pw-8642\nNew-pw-8642\n")
            #expect(changed.status == 0, "\(changed.output)")
            #expect(pam.log.waitFor("was set without the old one (by root)"))
            #expect(try pam.keychainctl(["unlock"], input: PAMHarness.password + "\n").status == 0)
        }

        /// A password change whose old password is not the passcode leaves the passcode, costs one
        /// failed attempt, and is not tried again while that attempt is on record.
        @Test func aPasswordChangeLeavesAPasscodeThatWasNotTheOldPassword() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            let passwords = "Not-the-passcode-1\nNew-login-pw-2\n"
            let first = try pam.keychainctl(["pam", "change-passcode"], input: passwords)
            #expect(first.status == 0, "\(first.output)")
            #expect(first.output.contains("the old login password is not the keychain's passcode"), "\(first.output)")
            #expect(try pam.failedAttempts == 1)
            let second = try pam.keychainctl(["pam", "change-passcode"], input: passwords)
            #expect(second.output.contains("1 failed passcode attempt(s) are on record"), "\(second.output)")
            #expect(try pam.failedAttempts == 1)
            #expect(try pam.keychainctl(["unlock"], input: PAMHarness.password + "\n").status == 0)
        }

        /// The module gives the password only to a keychainctl nobody but root can replace: not
        /// to one in a directory another user could write, even when the file itself is root's.
        @Test func aKeychainctlOthersCouldReplaceIsNotRun() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            let open = pam.directory.appendingPathComponent("writable-by-all")
            try FileManager.default.createDirectory(at: open, withIntermediateDirectories: true)
            chmod(open.path, 0o777)
            let copy = open.appendingPathComponent("keychainctl")
            try FileManager.default.copyItem(at: CommandRunner.binary, to: copy)
            chmod(copy.path, 0o755)
            let service = "kc-test-pam-untrusted"
            try pam.writeService(
                service,
                [
                    "auth required pam_unix.so", pam.moduleLine("auth"), "account required pam_permit.so",
                    pam.moduleLine("session", ["keychainctl=\(copy.path)"]),
                ])
            let login = try pam.pamtester(service, ["authenticate", "open_session"])
            #expect(login.status == 0, "\(login.output)")
            #expect(pam.log.waitFor("\(open.path) can be changed by others than root"))
            #expect(try !pam.keychainIsUnlocked)
        }

        /// The keychain counts the logins the module reported, each while the process that opened it
        /// lives: the end of one of two leaves it unlocked; once the other's process is gone, the
        /// next end locks.
        @Test func theKeychainLocksWhenTheLastReportedLoginEnds() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            try #require(pam.keychainctl(["unlock"], input: PAMHarness.password + "\n").status == 0)
            let first = try SpawnedProgram("/bin/sleep", ["60"], environment: [:])
            let second = try SpawnedProgram("/bin/sleep", ["60"], environment: [:])
            defer {
                first.end()
                second.end()
            }
            func login(_ program: SpawnedProgram) throws -> String {
                let start = try #require(ProcessFiles.startTime(program.processIdentifier))
                return "\(program.processIdentifier):\(start)"
            }
            for program in [first, second] {
                #expect(try pam.keychainctl(["pam", "open-session", "--login", login(program)]).status == 0)
            }
            let one = try pam.keychainctl(["pam", "close-session", "--login", login(first)])
            #expect(one.output.contains("1 other login(s) of this user remain open"), "\(one.output)")
            #expect(try pam.keychainIsUnlocked)
            let ended = try login(second)
            second.end()
            let last = try pam.keychainctl(["pam", "close-session", "--login", login(first)])
            #expect(last.output.contains("the last login ended: locked"), "\(last.output)")
            #expect(try !pam.keychainIsUnlocked)
            // A login whose process is not running is refused, not counted.
            let gone = try pam.keychainctl(["pam", "open-session", "--login", ended])
            #expect(gone.status != 0)
            #expect(gone.output.contains("is not running"), "\(gone.output)")
        }

        /// With `fingerprint`, a login without a password asks keychaind for a touch it verifies
        /// itself, and tells the person to touch the sensor. Here no fingerprint reader answers, so
        /// the keychain stays locked and the log says why; FprintdTests unlocks with a real fprintd.
        @Test func aFingerprintLoginAsksKeychaindForATouchOfItsOwn() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            try pam.writeService(
                "kc-test-pam-fingerprint",
                [
                    "auth required pam_permit.so", pam.moduleLine("auth"), "account required pam_permit.so",
                    pam.moduleLine("session", ["auto_start", "fingerprint"]),
                ])
            let login = try pam.pamtester("kc-test-pam-fingerprint", ["authenticate", "open_session"], input: "")
            #expect(login.status == 0, "\(login.output)")
            #expect(login.output.contains("Touch the fingerprint sensor to unlock your keychain."), "\(login.output)")
            #expect(pam.log.waitFor("no fingerprint sensor is available: unlock with the passcode"))
            #expect(try !pam.keychainIsUnlocked)
        }

        /// With the system daemon the module reaches the user's keychain over the system socket:
        /// the same login unlocks it there.
        @Test func theSystemDaemonsKeychainUnlocksAtLoginToo() throws {
            let pam = try PAMHarness()
            defer { pam.cleanUp() }
            pam.stopDaemon()
            let system = try SystemDaemonHarness()
            defer { system.cleanUp() }
            let keychainctl = try system.program("keychainctl")
            let set = try system.keychainctl(as: pam.user, ["passcode", "set"], input: PAMHarness.password + "\n")
            try #require(set.status == 0, "\(set.stderr)")
            try #require(system.keychainctl(as: pam.user, ["lock"]).status == 0)
            let connection = ["keychainctl=\(keychainctl.path)", "system_socket=\(system.socket)"]
            try pam.writeService(
                "kc-test-pam-system",
                [
                    "auth required pam_unix.so", pam.moduleLine("auth", connection), "account required pam_permit.so",
                    pam.moduleLine("session", connection),
                ])
            let login = try pam.pamtester("kc-test-pam-system", ["authenticate", "open_session", "close_session"])
            #expect(login.status == 0, "\(login.output)")
            #expect(pam.log.waitFor("unlocked with the login password"))
            #expect(pam.log.waitFor("the last login ended: locked"))
            #expect(try system.keychainctl(as: pam.user, ["status"]).stdout.contains("state: locked"))
            // No per-user keychaind was started: the system daemon served the login.
            #expect(try pam.keychainctl(["daemon", "status"]).output.contains("keychaind is not running"))
        }
    }
}
