import CKeychainSupport
import Foundation
import KeychainProtocol
import Testing

@testable import KeychainDaemon

#if canImport(Glibc)
import Glibc
#endif

/// keychaind's change number (``ChangeNumber``): a reader given its descriptor sees every move,
/// and can neither write it nor change its size; a reader refuses memory that is not sealed as
/// keychaind seals it; and keychaind gives it to the Secret Service bridge alone.
@Suite struct ChangeNumberTests {
    /// A client that acts for no D-Bus client (not the bridge) asking for the number is refused,
    /// and nothing follows the refusal on its connection: its next request is answered.
    @Test func onlyTheBridgeIsGivenTheNumber() throws {
        let daemon = try DaemonHarness()
        defer { daemon.cleanUp() }
        _ = try daemon.shell.run(["daemon", "start"])
        let client = try RawDaemonClient(socket: daemon.socket)
        let refused = try #require(client.exchange(.watchChanges))
        #expect(throws: KeychainError.errSecMissingEntitlement) { try refused.get() }
        let next = try #require(client.exchange(.deviceStatus))
        #expect(throws: Never.self) { try next.get() }
    }

    /// A copy of the number's descriptor, as a reader gets it.
    private func readersDescriptor(_ number: ChangeNumber) -> Int32 {
        fcntl(number.descriptor, F_DUPFD_CLOEXEC, 0)
    }

    @Test func aReaderSeesEveryMove() throws {
        let number = try #require(ChangeNumber())
        let mapped = try #require(kc_change_number_map(readersDescriptor(number)))
        defer { kc_change_number_unmap(mapped) }
        #expect(kc_change_number_read(mapped) == 0)
        number.advance()
        number.advance()
        #expect(kc_change_number_read(mapped) == 2)
    }

    @Test func aReaderCannotWriteOrResizeIt() throws {
        let number = try #require(ChangeNumber())
        let descriptor = readersDescriptor(number)
        defer { close(descriptor) }
        let mapped = try #require(kc_change_number_map(fcntl(descriptor, F_DUPFD_CLOEXEC, 0)))
        defer { kc_change_number_unmap(mapped) }
        let writable = mmap(nil, 8, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0)
        #expect(writable == MAP_FAILED)
        var one: UInt64 = 1
        #expect(pwrite(descriptor, &one, 8, 0) < 0)
        #expect(ftruncate(descriptor, 0) != 0)
        #expect(ftruncate(descriptor, 4096) != 0)
        number.advance()
        #expect(kc_change_number_read(mapped) == 1)
    }

    @Test func memoryNotSealedAsANumberIsRefused() throws {
        // Eight bytes that nothing seals: whoever holds them could shrink them under the reader.
        let unsealed = kc_open_unnamed(FileManager.default.temporaryDirectory.path)
        #expect(unsealed >= 0 && ftruncate(unsealed, 8) == 0)
        #expect(kc_change_number_map(unsealed) == nil)
        close(unsealed)
        let file = open("/etc/hostname", O_RDONLY | O_CLOEXEC)
        #expect(kc_change_number_map(file) == nil)
        close(file)
    }
}
