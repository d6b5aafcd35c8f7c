import Biometrics
import Foundation
import Testing

/// The fprintd sensor against the real fprintd driving libfprint's virtual device.
@Suite(.serialized) struct FprintdTests {
    @Test func theSensorReportsAMatchAndANoMatch() throws {
        let harness = try FprintdHarness()
        defer { harness.stop() }
        try harness.enroll("right-index-finger", print: "fingerA")
        let sensor = try #require(FprintdSensor.detect(environment: harness.environment))
        #expect(try sensor.enrolledFingers() == ["right-index-finger"])
        for (print, expected) in [("fingerA", SensorReading.verdict(true)), ("fingerB", .verdict(false))] {
            let reading = try verify(sensor, harness, print)
            #expect(reading == expected, "\(print)")
        }
    }

    /// Waits for a verdict while putting `print` on the reader.
    func verify(_ sensor: FprintdSensor, _ harness: FprintdHarness, _ print: String) throws -> SensorReading {
        var reading = try sensor.awaitTouch(timeout: 0.3)
        let deadline = Date().addingTimeInterval(20)
        while reading == .none && Date() < deadline {
            harness.scan(print)
            reading = try sensor.awaitTouch(timeout: 0.3)
        }
        return reading
    }

    @Test func keychainctlAuthenticatesWithTheReader() throws {
        let harness = try FprintdHarness()
        defer { harness.stop() }
        try harness.enroll("right-index-finger", print: "fingerA")
        let shell = try CommandRunner(environment: harness.environment)
        defer { shell.cleanUp() }
        #expect(try shell.run(["passcode", "set"], input: "1234\n").status == 0)
        #expect(try shell.run(["biometry", "status"]).stdout.contains("sensor: fingerprint reader (fprintd)"))
        #expect(try shell.run(["biometry", "list"]).stdout == "right-index-finger\n")

        var terminal = try PseudoTerminal(
            CommandRunner.binary, ["authenticate", "--policy", "biometrics", "--reason", "To add a new chore"],
            environment: shell.environment)
        #expect(terminal.expect("Touch the fingerprint sensor."))
        harness.scanEachVerification("fingerA") { terminal.isRunning }
        #expect(terminal.wait() == 0)

        terminal = try PseudoTerminal(
            CommandRunner.binary, ["authenticate", "--policy", "biometrics", "--reason", "To add a new chore"],
            environment: shell.environment)
        #expect(terminal.expect("Touch the fingerprint sensor."))
        harness.scanEachVerification("fingerB") { terminal.isRunning }
        let status = terminal.wait()
        #expect(status == 1, "\(terminal.screen)")
        #expect(terminal.screen.contains("LAError.authenticationFailed (-1)"))
        #expect(try shell.run(["biometry", "status"]).stdout.contains("consecutive failed matches: 3"))
    }

    /// fprintd with the owner's right index finger (print `fingerA`) enrolled, and a keychaind
    /// that reaches it, its keychain's passcode 1234.
    private func ownersFingerAndKeychaind() throws -> (FprintdHarness, DaemonHarness) {
        let harness = try FprintdHarness()
        do {
            try harness.enroll("right-index-finger", print: "fingerA")
            let daemon = try DaemonHarness(extra: [
                "DBUS_SYSTEM_BUS_ADDRESS": harness.environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? ""
            ])
            #expect(try daemon.shell.run(["passcode", "set"], input: "1234\n").status == 0)
            return (harness, daemon)
        } catch {
            harness.stop()
            throw error
        }
    }

    @Test func anOwnerSessionOpensWithTheOwnersFingerprintOnly() throws {
        let (harness, daemon) = try ownersFingerAndKeychaind()
        defer {
            daemon.cleanUp()
            harness.stop()
        }

        // Another finger: three misses end the attempt, and no session opens. (The owner session
        // belongs to the login session, so keychainctl runs in the test's own, not on a pty.)
        var login = try daemon.shell.launch(["owner", "login", "--fingerprint"])
        harness.scanEachVerification("fingerB") { login.process.isRunning }
        var result = login.finish()
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("Touch the fingerprint sensor."), "\(result.stderr)")
        #expect(result.stderr.contains("the fingerprint was not recognized"), "\(result.stderr)")
        #expect(try daemon.shell.run(["apps", "list"]).stderr.contains("OSStatus -34018"))

        // The owner's finger: the session is open.
        login = try daemon.shell.launch(["owner", "login", "--fingerprint"])
        harness.scanEachVerification("fingerA") { login.process.isRunning }
        result = login.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try daemon.shell.run(["apps", "list"]).status == 0)
    }

    /// A locked keychain unlocks with a finger keychaind verified itself through fprintd, as
    /// the PAM module's `fingerprint` option asks at a login without a password; another
    /// finger does not. After keychaind restarts, the passcode comes first.
    @Test func aFingerprintUnlocksOnlyAfterThePasscodeDidSinceKeychaindStarted() throws {
        let (harness, daemon) = try ownersFingerAndKeychaind()
        defer {
            daemon.cleanUp()
            harness.stop()
        }
        #expect(try daemon.shell.run(["lock"]).status == 0)
        func touchToUnlock(_ print: String) throws -> CommandRunner.Output {
            let unlock = try daemon.shell.launch(["pam", "open-session", "--fingerprint"])
            harness.scanEachVerification(print) { unlock.process.isRunning }
            return unlock.finish()
        }

        var result = try touchToUnlock("fingerB")
        #expect(result.stderr.contains("the fingerprint was not recognized"), "\(result.stderr)")
        #expect(try daemon.shell.run(["status"]).stdout.contains("state: locked"))
        result = try touchToUnlock("fingerA")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("unlocked with a fingerprint"), "\(result.stderr)")
        #expect(try daemon.shell.run(["status"]).stdout.contains("state: unlocked"))

        // A new keychaind kept nothing: the finger is not asked for, the passcode is needed.
        #expect(try daemon.shell.run(["lock"]).status == 0)
        #expect(try daemon.shell.run(["daemon", "stop"]).status == 0)
        result = try daemon.shell.run(["pam", "open-session", "--fingerprint", "--start-daemon"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("the keychain needs its passcode"), "\(result.stderr)")
    }
}
