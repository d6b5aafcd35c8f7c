import Foundation
import KeychainProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real fingerprint reader through the Linux fingerprint daemon (fprintd), driven by its
/// command-line tools (`fprintd-list`, `fprintd-verify`, `fprintd-enroll`, `fprintd-delete`),
/// which are loaded at run time: the build needs nothing from fprintd.
///
/// fprintd keeps the templates and decides the match; the Enclave counts its verdicts and
/// enforces lockout and the passcode rules. The tools reach fprintd over the system bus
/// (`DBUS_SYSTEM_BUS_ADDRESS` in `environment`).
public final class FprintdSensor: BiometricSensor {
    /// The user whose prints are used.
    public let user: String
    let tools: URL
    let environment: [String: String]
    private let verification = Mutex<Process?>(nil)
    private let verificationOutput = Mutex<Pipe?>(nil)

    public var kind: SensorKind { .fprintd }

    /// A sensor for `user`'s prints, with the tools in `tools`.
    public init(user: String = FprintdSensor.currentUser(), tools: URL = URL(fileURLWithPath: "/usr/bin"),
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.user = user
        self.tools = tools
        self.environment = environment
    }

    /// The sensor for `user`'s prints when fprintd is installed, answers with a device and
    /// lets this process see that user's prints; nil otherwise. The system daemon, which runs
    /// as its own user, may see another user's by the polkit rule `keychainctl daemon install
    /// --system` writes (KeychainSupport's `FingerprintPolkitRule`).
    public static func detect(
        user: String = FprintdSensor.currentUser(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> FprintdSensor? {
        let sensor = FprintdSensor(user: user, environment: environment)
        guard FileManager.default.isExecutableFile(atPath: sensor.tools.appendingPathComponent("fprintd-list").path),
            let listing = try? sensor.run("fprintd-list", [sensor.user]), listing.status == 0,
            listing.output.contains("Device at")
        else { return nil }
        return sensor
    }

    /// The name of the user this process runs as (its real uid, from the user database: not
    /// `USER`, which its parent chose).
    public static func currentUser() -> String {
        userName(of: getuid())
    }

    /// The name of `uid` in the user database, or the number when it has none.
    public static func userName(of uid: uid_t) -> String {
        guard let entry = getpwuid(uid) else { return String(uid) }
        return String(cString: entry.pointee.pw_name)
    }

    /// The enrolled fingers, by fprintd's names (`right-index-finger`).
    public func enrolledFingers() throws(KeychainError) -> [String] {
        let listing = try run("fprintd-list", [user])
        return listing.output.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: #"^ - #\d+: "#, options: .regularExpression) else { return nil }
            return String(line[range.upperBound...])
        }
    }

    /// Enrolls a finger with `fprintd-enroll` (the user touches the reader several times).
    public func enroll(_ finger: String) throws(KeychainError) {
        let result = try run("fprintd-enroll", ["-f", finger, user])
        guard result.status == 0, result.output.contains("enroll-completed") else {
            throw KeychainError(.errSecAuthFailed, "fprintd did not complete the enrollment")
        }
    }

    /// Deletes a finger's print with `fprintd-delete`.
    public func remove(_ finger: String) throws(KeychainError) {
        let result = try run("fprintd-delete", [user, "-f", finger])
        guard result.status == 0 else {
            throw KeychainError(.errSecItemNotFound, "fprintd could not delete that finger")
        }
    }

    public func awaitTouch(timeout: Double) throws(KeychainError) -> SensorReading {
        let process = try verification.withLock { (current: inout Process?) throws(KeychainError) -> Process in
            if let current { return current }
            let started = try start("fprintd-verify", [user])
            current = started.process
            verificationOutput.withLock { $0 = started.output }
            return started.process
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else { return .none }
        let output = verificationOutput.withLock { $0 }?.fileHandleForReading.readDataToEndOfFile() ?? Data()
        verification.withLock { $0 = nil }
        let text = String(decoding: output, as: UTF8.self)
        if text.contains("verify-match") { return .verdict(true) }
        if text.contains("verify-no-match") { return .verdict(false) }
        throw KeychainError(
            .errSecNotAvailable,
            "fprintd could not verify a print (fprintd-verify exited with status \(process.terminationStatus))")
    }

    public func endWait() {
        verification.withLock { current in
            if let current, current.isRunning { current.terminate() }
            current = nil
        }
    }

    private func start(_ tool: String, _ arguments: [String]) throws(KeychainError) -> (process: Process, output: Pipe)
    {
        let process = Process()
        process.executableURL = tools.appendingPathComponent(tool)
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do {
            try process.run()
        } catch {
            throw KeychainError(.errSecNotAvailable, "cannot run \(tool): \(error.localizedDescription)")
        }
        return (process, output)
    }

    private func run(_ tool: String, _ arguments: [String]) throws(KeychainError) -> (status: Int32, output: String) {
        let started = try start(tool, arguments)
        let data = started.output.fileHandleForReading.readDataToEndOfFile()
        started.process.waitUntilExit()
        return (started.process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
