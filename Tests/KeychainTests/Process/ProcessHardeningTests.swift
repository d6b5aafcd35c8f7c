import Enclave
import Foundation
import Keychain
import KeychainSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Secrets stay out of core dumps and swap.
@Suite struct ProcessHardeningTests {
    @Test func hardeningTurnsOffCoreFilesAndTracing() {
        ProcessHardening.apply()
        #expect(!ProcessHardening.isDumpable)
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
        #expect(limit.rlim_cur == 0)
    }

    @Test(arguments: [9, 4_000])
    func secretBytesLiveInLockedPagesLeftOutOfDumps(size: Int) throws {
        // A small secret shares a page of the pool; a large one has pages of its own.
        let secret = SecretBytes(repeatElement(UInt8(ascii: "s"), count: size))
        let address = secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let flags = try Self.flags(ofMappingHolding: address)
        // /proc/self/smaps marks the mapping "dd" (do not dump) and "lo" (locked).
        #expect(flags.contains(" dd"), "\(flags)")
        #expect(flags.contains(" lo"), "\(flags)")
        withExtendedLifetime(secret) {}
    }

    @Test func aSecretsRoomIsWipedWhenItIsFreed() throws {
        var secret: SecretBytes? = SecretBytes(utf8: "wiped-when-freed")
        let room = try #require(secret?.withUnsafeBytes { UnsafeRawPointer($0.baseAddress) })
        #expect(String(decoding: UnsafeRawBufferPointer(start: room, count: 16), as: UTF8.self) == "wiped-when-freed")
        secret = nil
        // The pool keeps the page (locked) for the next secret: what was there is gone (another
        // test's secret may have taken the room since, never this one's bytes).
        #expect(String(decoding: UnsafeRawBufferPointer(start: room, count: 16), as: UTF8.self) != "wiped-when-freed")
        withExtendedLifetime(secret) {}
    }

    /// The VmFlags line of the mapping that holds `address`.
    static func flags(ofMappingHolding address: UInt) throws -> String {
        var inside = false
        let smaps = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps")).readDataToEndOfFile()
        for line in String(decoding: smaps, as: UTF8.self).split(separator: "\n") {
            let bounds = line.split(separator: " ").first?.split(separator: "-") ?? []
            if bounds.count == 2, let low = UInt(bounds[0], radix: 16), let high = UInt(bounds[1], radix: 16) {
                inside = low <= address && address < high
            } else if inside && line.hasPrefix("VmFlags:") {
                return String(line)
            }
        }
        return ""
    }
}
