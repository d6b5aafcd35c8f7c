import Foundation
import Keychain
import KeychainProtocol
import Testing

/// Every status of `SecBase.h`: declared with Apple's number, named, and explained by
/// `SecCopyErrorMessageString` with Apple's sentence.
@Suite struct StatusCodeTests {
    /// The `public let NAME: OSStatus = NUMBER` lines of the Security module's status file.
    private static func declaredConstants() throws -> [(name: String, status: Int32)] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Sources/App/Security/Base/SecStatusCodes.swift").standardized
        let text = try String(contentsOf: file, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count == 6, words[0] == "public", words[1] == "let", words[3] == "OSStatus",
                let status = Int32(words[5])
            else { return nil }
            return (String(words[2].dropLast()), status)
        }
    }

    @Test func everyStatusOfTheHeaderIsDeclaredWithItsNumber() throws {
        let declared = try Self.declaredConstants()
        let table = SecurityStatusTable.entries
        #expect(table.count == 456)
        // errSecDskFull, Apple's deprecated spelling of errSecDiskFull, is declared but not tabled.
        #expect(declared.count == table.count + 1)
        for entry in table {
            #expect(
                declared.contains { $0.name == entry.name && $0.status == entry.status },
                "\(entry.name) (\(entry.status)) is not declared")
        }
        for constant in declared where constant.name != "errSecDskFull" {
            #expect(
                table.contains { $0.name == constant.name && $0.status == constant.status },
                "\(constant.name) is declared but not in the table")
        }
        #expect(Set(table.map(\.name)).count == table.count, "one entry per name")
    }

    @Test func theNumbersCodeComparesAgainstAreApples() {
        #expect(errSecOpWr == -49)
        #expect(errSecWrPerm == -61)
        #expect(errSecInternalError == -67671)
        #expect(errSecCoreFoundationUnknown == -4960)
        #expect(errSecRestrictedAPI == -34020)
        #expect(errSecInDarkWake == -25320)
        #expect(errSecCertificateDuplicateExtension == -67903)
        #expect(errSSLEarlyDataRejected == -9890)
        #expect(errSecInvalidCRLAuthority == errSecInvaldCRLAuthority)
    }

    @Test func everyStatusHasApplesSentenceAndName() {
        for entry in SecurityStatusTable.entries {
            #expect(SecCopyErrorMessageString(entry.status, nil) as String? == entry.message)
            #expect(!entry.message.isEmpty)
        }
        #expect(
            SecCopyErrorMessageString(errSecNotAvailable, nil) as String?
                == "No keychain is available. You may need to restart your computer.")
        #expect(SecCopyErrorMessageString(errSecOpWr, nil) as String? == "File already open with write permission.")
        #expect(SecCopyErrorMessageString(12345, nil) == nil)
        #expect(KeychainError.name(of: errSecOpWr) == "errSecOpWr")
        #expect(KeychainError.name(of: -67827) == "errSecInvalidCRLAuthority", "the spelling Apple recommends")
        #expect(KeychainError.name(of: -67852) == "errSecInvalidTupleCredentials")
        #expect(KeychainError(status: errSecIO, message: "x").description == "errSecIO (-36): x")
    }
}
