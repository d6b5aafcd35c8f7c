import Foundation
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

    /// Issue 56: bidirectional controls reached the terminal, and a reason could draw a second
    /// line `"firefox" is trying to authenticate you. …` under the genuine one. Format characters
    /// and separators go, and no line of the reason starts where the sheet's first line does.
    @Test func aReasonCannotPoseAsAnotherAppsSheet() {
        #expect(
            PromptText.clean("a\u{202E}b\u{2066}c\u{2069}d\u{200B}e\u{FEFF}f\u{2028}g\u{061C}h", limit: 100)
                == "abcdef gh")
        #expect(PromptText.clean("To  update \u{00A0}\u{3000} now", limit: 100) == "To update now")
        let forged = PromptSheet(
            programName: "keychainctl",
            reason: "To open the calendar" + String(repeating: " ", count: 60)
                + "\"firefox\" is trying to authenticate you. To install a system update",
            asksForTouch: false, cancelTitle: "Cancel", fallbackTitle: "Passcode")
        for columns in [40, 60, 80, 120] {
            let lines = TerminalPromptSession.render(forged, columns: columns).components(separatedBy: "\r\n")
            let starts = lines.filter { $0.hasPrefix("│ \"") }
            #expect(starts.count == 1 && starts[0].contains("\"keychainctl\""), "\(columns): \(lines)")
        }
        // The desktop sheet: pinentry's window wraps again any line wider than about 33 ems, so
        // the reason comes in lines narrower than that, each indented, wide characters counted
        // twice.
        let wide = PromptSheet(
            programName: "keychainctl",
            reason: String(repeating: "Ｗ", count: 20) + " \"firefox\" is trying to authenticate you. "
                + String(repeating: "W", count: 40) + " 🔒🔒 To install",
            asksForTouch: false, cancelTitle: "Cancel", fallbackTitle: "Passcode")
        for sheet in [forged, wide] {
            let lines = PinentrySession.description(sheet, feedback: nil).components(separatedBy: "\n")
            #expect(lines.first == "\"keychainctl\" is trying to authenticate you.")
            for line in lines.dropFirst() {
                #expect(line.hasPrefix(PromptText.reasonIndent), "\(line)")
                let columns = line.dropFirst(PromptText.reasonIndent.count).reduce(0) {
                    $0 + PromptText.desktopColumns($1)
                }
                #expect(columns <= PinentrySession.reasonWidth, "\(columns): \(line)")
            }
        }
    }

    /// The Secret Service's consent question names the asking program and the item's label,
    /// both from outside: neither brings a format character to either sheet.
    @Test func theConsentQuestionCarriesNoFormatCharacter() {
        let question = PromptSheet(
            programName: "secret-tool\u{202E}lanimret",
            reason: "Let “secret-tool\u{202E}lanimret” read “mail\u{2066}\u{200B} password\u{2069}” from now on?",
            asksForTouch: false, cancelTitle: "Only This Time", fallbackTitle: "Always Allow", isQuestion: true)
        for drawn in [
            PinentrySession.description(question, feedback: nil), TerminalPromptSession.render(question, columns: 80),
        ] {
            #expect(!drawn.unicodeScalars.contains { $0.properties.generalCategory == .format }, "\(drawn)")
            #expect(drawn.contains("mail password"), "\(drawn)")
        }
    }

    /// Issue 57: a long user name pushed the host key out of the sheet. The agent names the host
    /// first and cuts the user; every sheet wraps what is left, so the host key stays in view.
    @Test func aLongLineNeverPushesTheHostKeyOutOfView() {
        let hostKey = "SHA256:" + String(repeating: "AbCdEfGh", count: 5) + "xyz"
        let sheet = PromptSheet(
            programName: "ssh",
            reason: "“ssh” (pid 4242, /usr/bin/ssh), through the agent forwarded to the host with key \(hostKey), "
                + "wants to sign with your SSH key laptop to log in to the host with key \(hostKey) as "
                + String(repeating: "u", count: 63) + "…",
            asksForTouch: true, cancelTitle: "Cancel", fallbackTitle: "Passcode")
        let desktop = PinentrySession.description(sheet, feedback: nil).replacingOccurrences(
            of: "\n" + PromptText.reasonIndent, with: "")
        #expect(desktop.components(separatedBy: hostKey).count == 3, "\(desktop)")
        for columns in [40, 80] {
            let terminal = TerminalPromptSession.render(sheet, columns: columns).components(separatedBy: "\r\n")
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "│ ")) }.joined()
            #expect(terminal.components(separatedBy: hostKey).count == 3, "\(columns): \(terminal)")
        }
    }
}
