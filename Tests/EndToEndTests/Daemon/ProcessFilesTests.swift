import Foundation
import KeychainSupport
import Testing

/// `/proc/PID/stat` as keychaind reads it to know a caller's session and environment: the
/// command name is the caller's to choose, so the fields are counted from the last `)`.
@Suite struct ProcessFilesTests {
    @Test func fieldsAreCountedFromTheLastParenthesis() throws {
        // A command name with a `)`, spaces, a would-be field and a byte that is not UTF-8.
        let stat = Array("4242 (evil) 1 2 ".utf8) + [0xFF] + Array(") S 1 4242 777 0 -1\n".utf8)
        let fields = try #require(ProcessFiles.statFields(of: stat))
        #expect(fields.first == "S")
        #expect(fields[3] == "777", "field 6, the session")
        #expect(fields.last == "-1\n")
        #expect(fields.count == 6)
    }

    @Test func aTextWithoutTheCommandsParenthesisHasNoFields() {
        #expect(ProcessFiles.statFields(of: Array("4242 evil S 1".utf8)) == nil)
    }

    @Test func thisProcesssSessionIsReadFromItsOwnFile() throws {
        let fields = try #require(ProcessFiles.statFields(getpid()))
        #expect(Int32(fields[3]) == getsid(0))
    }
}
