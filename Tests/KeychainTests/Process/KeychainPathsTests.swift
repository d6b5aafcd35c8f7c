import Foundation
import KeychainProtocol
import KeychainSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where the per-user daemon's socket is: the path a client's first request computes without
/// Foundation's URL and environment dictionary is the one the daemon listens on.
@Suite struct KeychainPathsTests {
    @Test(arguments: [
        ["XDG_RUNTIME_DIR": "/run/user/1000"], ["XDG_RUNTIME_DIR": "/run/user/1000/"],
        ["XDG_RUNTIME_DIR": "/run/user/1000//"],
        ["XDG_RUNTIME_DIR": "/"], ["XDG_RUNTIME_DIR": "run/user/1000"], ["XDG_RUNTIME_DIR": ""], [:],
    ])
    func thePathIsTheDirectoryTheDaemonUses(environment: [String: String]) {
        #expect(
            KeychainPaths.runtimeDirectoryPath(environment: environment)
                == KeychainPaths.runtimeDirectory(environment: environment).path)
    }

    /// Without `XDG_RUNTIME_DIR` the socket is where no other user can create its directory
    /// first: logind's runtime directory of the user, or the home directory; never `/tmp`.
    @Test func aRelativeOrMissingRuntimeDirectoryFallsBackToOneNoOtherUserCanCreate() throws {
        let fallback = KeychainPaths.fallbackRuntimePath(logind: "/run/user/\(getuid())", home: "/home/someone")
        #expect(
            KeychainPaths.runtimeDirectoryPath(environment: ["XDG_RUNTIME_DIR": "run", "HOME": "/home/someone"])
                == fallback)
        #expect(!KeychainPaths.runtimeDirectoryPath(environment: [:]).hasPrefix("/tmp"))
        #expect(
            KeychainPaths.runtimeDirectoryPath(environment: ["XDG_RUNTIME_DIR": "/run/user/7/"])
                == "/run/user/7/keychain")
        // logind's directory, when it is this user's and nobody else's to write…
        let logind = FileManager.default.temporaryDirectory.appendingPathComponent(
            "logind-\(UUID().uuidString.prefix(8))"
        ).path
        mkdir(logind, 0o700)
        defer { rmdir(logind) }
        #expect(KeychainPaths.fallbackRuntimePath(logind: logind, home: "/home/someone") == logind + "/keychain")
        // …else the home directory: one others can write, or that does not exist, is not used.
        chmod(logind, 0o777)
        #expect(
            KeychainPaths.fallbackRuntimePath(logind: logind, home: "/home/someone/")
                == "/home/someone/.local/state/keychain-runtime")
        #expect(
            KeychainPaths.fallbackRuntimePath(logind: "/nonexistent", home: "/home/someone")
                == "/home/someone/.local/state/keychain-runtime")
        // A relative HOME is not taken: the account's home is.
        #expect(KeychainPaths.fallbackRuntimePath(logind: "/nonexistent", home: "relative").hasPrefix("/"))
    }

    /// Without a dictionary the path comes from this process's environment, as the dictionary
    /// of that environment gives it.
    @Test func withoutADictionaryThePathComesFromThisProcess() {
        #expect(
            KeychainPaths.runtimeDirectoryPath(environment: nil)
                == KeychainPaths.runtimeDirectory(environment: ProcessInfo.processInfo.environment).path)
    }
}
