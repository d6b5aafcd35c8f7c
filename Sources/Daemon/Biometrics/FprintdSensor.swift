import Foundation
import KeychainProtocol
import Synchronization

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

    /// The sensor when fprintd is installed and answers with a device; nil otherwise.
    public static func detect(environment: [String: String] = ProcessInfo.processInfo.environment) -> FprintdSensor? {
        let sensor = FprintdSensor(environment: environment)
        guard FileManager.default.isExecutableFile(atPath: sensor.tools.appendingPathComponent("fprintd-list").path),
            let listing = try? sensor.run("fprintd-list", [sensor.user]), listing.status == 0,
            listing.output.contains("Device at")
        else { return nil }
        return sensor
    }

    /// The name of the user running this process.
    public static func currentUser() -> String {
        ProcessInfo.processInfo.environment["USER"] ?? (getuid() == 0 ? "root" : String(getuid()))
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
