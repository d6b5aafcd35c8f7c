import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The PAM module installed as an administrator installs it (Docs/PAM.md), for a user whose
/// login password is their keychain's passcode: the module built by its own package
/// (`PAMModule/`) and copied as `pam_keychain.so`, the PAM service files that load it, the
/// system log it writes to, and `keychainctl` run as the user. ``cleanUp()`` puts every file in
/// /etc/pam.d back as it was and stops the user's keychaind.
final class PAMHarness {
    /// The user's login password, and their keychain's passcode.
    static let password = "Login-pw-4711"
    let user: LocalUser
    /// The test's directory (root's, 0755): the module, and what else the test needs.
    let directory: URL
    /// `pam_keychain.so`, as installed.
    let module: String
    /// What the module and PAM write to the system log.
    let log: SystemLogCapture
    /// The files of /etc/pam.d this test wrote, with what they held before (nil: none).
    private var services: [(path: String, previous: Data?)] = []

    /// The built keychainctl, which the module's lines name.
    static let keychainctl = CommandRunner.binary.path

    /// The module as its package builds it, once per run.
    private static let built: Result<URL, ModuleBuildFailure> = {
        let package = ReadmeTests.root.appendingPathComponent("PAMModule")
        let swift = ChildSpawn.find("swift") ?? "/usr/bin/swift"
        do {
            let build = try SpawnedProgram(
                swift, ["build", "--package-path", package.path], environment: ProcessInfo.processInfo.environment,
                capturingOutput: true, capturingErrors: true)
            let output = String(decoding: build.readOutputToEnd(), as: UTF8.self)
            guard build.terminationStatus == 0 else {
                return .failure(ModuleBuildFailure(description: "swift build --package-path PAMModule: \(output)"))
            }
        } catch {
            return .failure(ModuleBuildFailure(description: "swift build could not start: \(error)"))
        }
        return .success(package.appendingPathComponent(".build/debug/libpam_keychain.so"))
    }()

    /// Sets the user's login password to ``password`` and gives them a keychain with that
    /// passcode, locked.
    init() throws {
        user = try LocalUser.pamLogin()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pam-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        module = directory.appendingPathComponent("pam_keychain.so").path
        try FileManager.default.copyItem(at: try Self.built.get(), to: URL(fileURLWithPath: module))
        chmod(module, 0o644)
        log = try SystemLogCapture()
        try setLoginPassword(Self.password)
        try resetKeychain()
        try #require(keychainctl(["passcode", "set"], input: Self.password + "\n").status == 0)
        try #require(keychainctl(["lock"]).status == 0)
    }

    func cleanUp() {
        for (path, previous) in services.reversed() {
            if let previous {
                _ = FileManager.default.createFile(
                    atPath: path, contents: previous, attributes: [.posixPermissions: 0o644])
            } else {
                unlink(path)
            }
        }
        services = []
        stopDaemon()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The module's line in a service file: `type optional …/pam_keychain.so keychainctl=… options`.
    func moduleLine(_ type: String, _ options: [String] = []) -> String {
        ([type, "optional", module, "keychainctl=\(Self.keychainctl)"] + options).joined(separator: " ")
    }

    /// Writes `/etc/pam.d/name` with `lines`, to be put back as it was.
    func writeService(_ name: String, _ lines: [String]) throws {
        let path = "/etc/pam.d/\(name)"
        services.append((path, FileManager.default.contents(atPath: path)))
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Adds `lines` at the end of the system's `/etc/pam.d/name` (`su-l`, `passwd`), as the
    /// README says to, to be put back as it was.
    func appendToService(_ name: String, _ lines: [String]) throws {
        let path = "/etc/pam.d/\(name)"
        let previous = try #require(FileManager.default.contents(atPath: path), "no \(path) on this machine")
        services.append((path, previous))
        let text = String(decoding: previous, as: UTF8.self) + "\n" + lines.joined(separator: "\n") + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The account's password, as `chpasswd` sets it (root: no old password).
    func setLoginPassword(_ password: String) throws {
        let chpasswd = try SpawnedProgram(
            "/usr/sbin/chpasswd", [], environment: ProcessInfo.processInfo.environment,
            input: "\(user.name):\(password)\n")
        try #require(chpasswd.terminationStatus == 0)
    }

    /// The user's environment for their own programs: no runtime directory (no logind here),
    /// so keychainctl and keychaind find theirs under the home.
    var userEnvironment: [String: String] {
        ["HOME": user.home, "USER": user.name, "LOGNAME": user.name, "PATH": "/usr/local/bin:/usr/bin:/bin"]
    }

    /// `keychainctl arguments…` run as the user, `input` on standard input: its exit status and
    /// what it wrote to standard output and error.
    @discardableResult
    func keychainctl(_ arguments: [String], input: String = "") throws -> (status: Int32, output: String) {
        try run(user.setpriv + [Self.keychainctl] + arguments, input: input)
    }

    /// Runs a command line as root, `input` on standard input: its exit status and output.
    func run(
        _ command: [String], input: String = "", environment: [String: String]? = nil
    ) throws -> (
        status: Int32, output: String
    ) {
        let program = try SpawnedProgram(
            command[0], Array(command.dropFirst()), environment: environment ?? userEnvironment, input: input,
            capturingOutput: true, capturingErrors: true)
        let output = String(decoding: program.readOutputToEnd(), as: UTF8.self)
        return (program.terminationStatus, output)
    }

    /// `pamtester service user operations…` as root, the answers to its prompts on standard
    /// input (the login password by default).
    func pamtester(
        _ service: String, _ operations: [String], input: String = PAMHarness.password + "\n"
    ) throws
        -> (status: Int32, output: String)
    {
        try run(
            ["/usr/bin/pamtester", "-v", service, user.name] + operations, input: input,
            environment: ["PATH": "/usr/bin:/bin"])
    }

    /// `keychainctl status` as the user says the keychain is unlocked.
    var keychainIsUnlocked: Bool {
        get throws { try keychainctl(["status"]).output.contains("state: unlocked\n") }
    }

    /// How many failed passcode attempts the keychain counts.
    var failedAttempts: Int {
        get throws {
            let status = try keychainctl(["status"]).output
            let line = status.split(separator: "\n").first { $0.hasPrefix("failed passcode attempts: ") }
            return Int(line?.split(separator: " ").last ?? "") ?? -1
        }
    }

    /// Stops the user's keychaind (started by a test or by the module) by its pid, and removes
    /// their keychain, so that the next test starts anew.
    func resetKeychain() throws {
        stopDaemon()
        for path in [".local/share/keychain", ".local/state/keychain-runtime"] {
            try? FileManager.default.removeItem(atPath: "\(user.home)/\(path)")
        }
    }

    /// Stops the user's keychaind, if one runs.
    func stopDaemon() {
        _ = try? keychainctl(["daemon", "stop"])
    }
}

/// The module's package did not build.
struct ModuleBuildFailure: Error, CustomStringConvertible {
    let description: String
}
