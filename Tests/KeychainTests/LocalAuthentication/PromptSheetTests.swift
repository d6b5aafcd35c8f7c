import KeychainProtocol
import Testing

@testable import KeychainPrompt

/// The sheet as drawn on a terminal: narrow terminals wrap the text inside the box, and text
/// from callers cannot carry escape sequences (issue 8).
@Suite struct PromptSheetTests {
    let sheet = PromptSheet(
        programName: "chores", reason: "To add a new chore to the list of things the household shares",
        asksForTouch: true,
        cancelTitle: "Cancel", fallbackTitle: "Enter Password")

    @Test(arguments: [24, 30, 44, 80])
    func aNarrowTerminalWrapsTheTextNotTheBox(_ columns: Int) {
        let lines = TerminalPromptSession.render(sheet, columns: columns).components(separatedBy: "\r\n").filter {
            !$0.isEmpty
        }
        for line in lines { #expect(line.count <= columns, "\(line.count) > \(columns): \(line)") }
        let text = lines.joined(separator: " ").replacingOccurrences(of: "│", with: " ")
        for word in ["household", "shares", "Touch", "sensor.", "[Esc]", "Cancel", "[Enter]", "Password"] {
            #expect(text.contains(word), "\(word) lost at \(columns) columns")
        }
        #expect(lines.first?.hasPrefix("┌") == true && lines.last?.hasPrefix("└") == true)
    }

    @Test func escapeSequencesAndControlCharactersAreRemoved() {
        #expect(
            PromptText.clean("To add\u{1b}[2J a\u{1b}]0;owned\u{07} chore\u{9b}\u{7f}\n!", limit: 100)
                == "To add a chore !")
        #expect(PromptText.clean(String(repeating: "x", count: 300), limit: 10) == "xxxxxxxxx…")
    }
}
