#if canImport(Glibc)
import Glibc
#endif
import Enclave
import Foundation
import Keychain
import Testing

/// Secrets stay out of core dumps and swap.
@Suite struct ProcessHardeningTests {
    @Test func hardeningTurnsOffCoreFilesAndTracing() {
        ProcessHardening.apply()
        #expect(!ProcessHardening.isDumpable)
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
        #expect(limit.rlim_cur == 0)
    }

    @Test func secretBytesLiveInLockedPagesLeftOutOfDumps() throws {
        let secret = SecretBytes(utf8: "page-test")
        let address = secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        #expect(address % page == 0)
        // /proc/self/smaps marks the mapping "dd" (do not dump) and "lo" (locked).
        var inside = false
        var flags = ""
        let smaps = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps")).readDataToEndOfFile()
        for line in String(decoding: smaps, as: UTF8.self).split(separator: "\n") {
            let bounds = line.split(separator: " ").first?.split(separator: "-") ?? []
            if bounds.count == 2, let low = UInt(bounds[0], radix: 16), let high = UInt(bounds[1], radix: 16) {
                inside = low <= address && address < high
            } else if inside && line.hasPrefix("VmFlags:") {
                flags = String(line)
                break
            }
        }
        #expect(flags.contains(" dd"), "\(flags)")
        #expect(flags.contains(" lo"), "\(flags)")
        withExtendedLifetime(secret) {}
    }
}
