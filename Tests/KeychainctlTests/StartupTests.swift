import Foundation
import Testing

/// What a command loads before it runs (issue: "keychainctl find-generic-password -w as a whole
/// process"): OpenSSL's libcrypto, which only a legacy PKCS #12 import needs, is loaded then
/// (`PKCS12ImportTests` decrypts one), not at the start of every program that links Security.
@Suite struct StartupTests {
    @Test func libcryptoIsNotLoadedAtStart() throws {
        // The dynamic loader lists the objects it loads and stops before the program runs.
        let loader = try CommandRunner(environment: ProcessInfo.processInfo.environment.merging(["LD_TRACE_LOADED_OBJECTS": "1"]) { $1 })
        defer { loader.cleanUp() }
        let loaded = try loader.run(["status"])
        #expect(loaded.status == 0)
        #expect(loaded.stdout.contains("libc.so.6"), "the loader listed what it loads")
        #expect(!loaded.stdout.contains("libcrypto"))
    }
}
