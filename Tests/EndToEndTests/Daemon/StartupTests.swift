import Foundation
import Testing

/// What a command loads and relocates before it runs (issue: "keychainctl find-generic-password -w
/// as a whole process"). OpenSSL's libcrypto, which only a legacy PKCS #12 import needs, is loaded
/// then (`PKCS12ImportTests` decrypts one), not at the start of every program that links Security.
/// keychainctl carries SQLite and libstdc++ in itself rather than binding the shared libraries'
/// symbols at every start, and stays position-independent, its relocations packed.
@Suite struct StartupTests {
    /// The shared objects the dynamic loader maps for `keychainctl status`: it lists them and
    /// stops before the program runs.
    private func loadedObjects() throws -> String {
        let loader = try CommandRunner(
            environment: ProcessInfo.processInfo.environment.merging(["LD_TRACE_LOADED_OBJECTS": "1"]) { $1 })
        defer { loader.cleanUp() }
        let loaded = try loader.run(["status"])
        #expect(loaded.status == 0)
        #expect(loaded.stdout.contains("libc.so.6"), "the loader listed what it loads")
        return loaded.stdout
    }

    @Test func libcryptoIsNotLoadedAtStart() throws {
        #expect(!(try loadedObjects()).contains("libcrypto"))
    }

    @Test func sqliteIsNotLoadedAtStart() throws {
        #expect(!(try loadedObjects()).contains("libsqlite3"))
    }

    /// The program's own ELF header and dynamic section. It needs neither libsqlite3 nor
    /// libstdc++ nor GCC's unwinder (libgcc_s) as shared libraries: the release build installed
    /// with a static Swift runtime then loads none of them (this debug build's shared Swift
    /// runtime still loads the last two for itself). A program linked at a
    /// fixed address would start faster still, and sit at the same addresses in every run:
    /// keychainctl keeps address-space randomisation.
    @Test func carriesSQLiteLibstdcxxAndLibgccAndStaysPositionIndependent() throws {
        let runner = try CommandRunner()
        defer { runner.cleanUp() }
        let elf = try runner.script(#"readelf --file-header --dynamic "$KEYCHAINCTL""#)
        #expect(elf.status == 0, "\(elf.stderr)")
        #expect(elf.stdout.contains("(NEEDED)"), "readelf listed the libraries it needs")
        #expect(!elf.stdout.contains("[libsqlite3"))
        #expect(!elf.stdout.contains("[libstdc++"))
        #expect(!elf.stdout.contains("[libgcc_s"))
        #expect(elf.stdout.contains("DYN (Position-Independent Executable file)"))
        #expect(elf.stdout.contains("(RELR)"))
        #expect(!elf.stdout.contains("(TEXTREL)"))
    }
}
