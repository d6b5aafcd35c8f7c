#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KeychainProtocol
import Testing

/// Where the per-user daemon's socket is: the path a client's first request computes without
/// Foundation's URL and environment dictionary is the one the daemon listens on.
@Suite struct KeychainPathsTests {
    @Test(arguments: [
        ["XDG_RUNTIME_DIR": "/run/user/1000"], ["XDG_RUNTIME_DIR": "/run/user/1000/"], ["XDG_RUNTIME_DIR": "/run/user/1000//"],
        ["XDG_RUNTIME_DIR": "/"], ["XDG_RUNTIME_DIR": "run/user/1000"], ["XDG_RUNTIME_DIR": ""], [:],
    ])
    func thePathIsTheDirectoryTheDaemonUses(environment: [String: String]) {
        #expect(KeychainPaths.runtimeDirectoryPath(environment: environment) == KeychainPaths.runtimeDirectory(environment: environment).path)
    }

    @Test func aRelativeOrMissingRuntimeDirectoryFallsBackToTheUsersTemporaryOne() {
        #expect(KeychainPaths.runtimeDirectoryPath(environment: ["XDG_RUNTIME_DIR": "run"]) == "/tmp/keychain-runtime-\(getuid())")
        #expect(KeychainPaths.runtimeDirectoryPath(environment: [:]) == "/tmp/keychain-runtime-\(getuid())")
        #expect(KeychainPaths.runtimeDirectoryPath(environment: ["XDG_RUNTIME_DIR": "/run/user/7/"]) == "/run/user/7/keychain")
    }

    /// Without a dictionary the path comes from this process's environment, as the dictionary
    /// of that environment gives it.
    @Test func withoutADictionaryThePathComesFromThisProcess() {
        #expect(KeychainPaths.runtimeDirectoryPath(environment: nil) == KeychainPaths.runtimeDirectory(environment: ProcessInfo.processInfo.environment).path)
    }
}
