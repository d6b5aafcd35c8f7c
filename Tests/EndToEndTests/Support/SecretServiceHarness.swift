import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `keychain-secret-service` on a session bus of the test's own (``PrivateBus``), serving a
/// keychain of the test's own (``CommandRunner``): the programs a test runs with ``script(_:)``
/// find `org.freedesktop.secrets` there, as they find it in a desktop session. ``stop()`` kills
/// the bridge and the bus by pid and stops the keychain's daemon.
final class SecretServiceHarness {
    let bus: PrivateBus
    let shell: CommandRunner
    private(set) var bridge: SpawnedProgram?

    /// - Parameter startingBridge: false to leave the name free (for another provider).
    init(startingBridge: Bool = true) throws {
        bus = try PrivateBus(prefix: "secrets", session: true)
        do {
            shell = try CommandRunner(environment: bus.environment)
            if startingBridge { try startBridge() }
        } catch {
            bus.stop()
            throw error
        }
    }

    /// The built bridge: beside keychainctl.
    static let program = CommandRunner.binary.deletingLastPathComponent().appendingPathComponent(
        "keychain-secret-service")

    /// Starts the bridge and waits until it owns `org.freedesktop.secrets`.
    func startBridge() throws {
        bridge = try bus.launchService(Self.program.path, [], extra: shell.environment)
        try bus.waitForOwner(of: "org.freedesktop.secrets")
    }

    /// Kills the bridge by its pid (a restart: ``startBridge()`` again).
    func stopBridge() {
        guard let bridge else { return }
        bridge.end()
        self.bridge = nil
    }

    /// Runs a bash script on the bus, with the keychain's environment.
    func script(_ script: String) throws -> CommandRunner.Output {
        try shell.script(script)
    }

    func stop() {
        stopBridge()
        bus.stop()
        shell.cleanUp()
    }
}
