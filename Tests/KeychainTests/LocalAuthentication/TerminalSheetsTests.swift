import Testing

@testable import KeychainPrompt

/// Which program draws the keychain's sheets, and what it is told.
@Suite struct TerminalSheetsTests {
    @Test func theConfiguredProgramComesFirstThenCursesThenTTYThenTheKeychainsOwn() {
        let all: (String) -> Bool = { _ in true }
        let none: (String) -> Bool = { _ in false }
        #expect(TerminalSheets.choose(configured: "/opt/pinentry-x", isProgram: none) == .pinentry("/opt/pinentry-x"))
        #expect(TerminalSheets.choose(configured: "none", isProgram: all) == .keychain)
        #expect(TerminalSheets.choose(configured: nil, isProgram: all) == .pinentry("/usr/bin/pinentry-curses"))
        #expect(
            TerminalSheets.choose(configured: "", isProgram: { $0.hasSuffix("-tty") })
                == .pinentry("/usr/bin/pinentry-tty"))
        #expect(TerminalSheets.choose(configured: nil, isProgram: none) == .keychain)
    }

    @Test func textForPinentryCarriesNoControlCharactersAndEscapesItsOwn() {
        #expect(Pinentry.escaped("100% sure\nnext\r\u{1b}[2J\u{7}") == "100%25 sure%0Anext%0D[2J")
        #expect(Pinentry.unescaped(Array("a%25b%0Ac%zz%4".utf8)) == Array("a%b\nc%zz%4".utf8))
    }

    @Test(arguments: [("xterm-256color", true), ("screen.xterm", true), ("", false), ("x y", false),
        ("xterm\u{1b}", false), (String(repeating: "a", count: 65), false)])
    func aTerminalTypeFromTheAppIsChecked(_ type: String, _ accepted: Bool) {
        #expect(PinentryPrompt.isTerminalType(type) == accepted)
    }
}
