import Foundation
import KeychainSupport
import Testing

/// `/proc/PID/stat` as keychaind reads it to know a caller's session and environment: the
/// command name is the caller's to choose, so the fields are counted from the last `)`.
@Suite struct ProcessFilesTests {
    @Test func fieldsAreCountedFromTheLastParenthesis() {
        // A command name with a `)`, spaces, a would-be field and a byte that is not UTF-8.
        let stat = Array("4242 (evil) 1 2 ".utf8) + [0xFF] + Array(") S 1 4242 777 0 -1\n".utf8)
        #expect(ProcessFiles.statNumber(0, of: stat) == nil, "the state, a letter")
        #expect(ProcessFiles.statNumber(1, of: stat) == 1, "field 4, the parent")
        #expect(ProcessFiles.statNumber(3, of: stat) == 777, "field 6, the session")
        #expect(ProcessFiles.statNumber(5, of: stat) == -1, "the last field, before the newline")
        #expect(ProcessFiles.statNumber(6, of: stat) == nil, "past the last field")
    }

    @Test func aFieldThatIsNotAnIntegerIsNone() {
        let stat = Array("1 (x) S 1x 2 -  99999999999999999999 --1\n".utf8)
        for index in [1, 3, 4, 5] { #expect(ProcessFiles.statNumber(index, of: stat) == nil, "\(index)") }
        #expect(ProcessFiles.statNumber(2, of: stat) == 2)
        #expect(ProcessFiles.statNumber(2, of: Array("1 (x) S 1  2\n".utf8)) == 2, "spaces run together")
    }

    @Test func aTextWithoutTheCommandsParenthesisHasNoFields() {
        #expect(ProcessFiles.statNumber(0, of: Array("4242 evil S 1".utf8)) == nil)
        #expect(ProcessFiles.statNumber(1, of: Array("4242 evil S 1".utf8)) == nil)
    }

    @Test func thisProcesssSessionIsReadFromItsOwnFile() throws {
        let stat = try #require(ProcessFiles.read(getpid(), "stat"))
        #expect(ProcessFiles.statNumber(3, of: stat) == Int64(getsid(0)))
        #expect(ProcessFiles.startTime(getpid()) == ProcessFiles.statNumber(19, of: stat).map(UInt64.init))
    }
}
