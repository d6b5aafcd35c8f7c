import Foundation
import KeychainProtocol
import Testing

/// What the system daemon and a prompt agent say to each other: every command and event
/// survives the trip, and bytes that are not one well-formed message are refused.
@Suite struct PromptAgentCoderTests {
    static let sheet = PromptSheet(
        programName: "chores", reason: "To add a new chore", asksForTouch: true, cancelTitle: "Cancel",
        fallbackTitle: "Enter Password")

    static let everyCommand: [PromptAgentCommand] = [
        .present(terminal: "/dev/pts/3", terminalType: "xterm-256color", sheet: sheet),
        .present(
            terminal: "/dev/tty2", terminalType: nil,
            sheet: PromptSheet(
                programName: "a", reason: "b", asksForTouch: false, cancelTitle: "", fallbackTitle: nil)),
        .presentInWindow(display: ["DISPLAY": ":0", "XAUTHORITY": "/run/user/1000/xauth"], sheet: sheet),
        .presentInWindow(display: ["WAYLAND_DISPLAY": "wayland-0"], sheet: sheet),
        .present(
            terminal: "/dev/pts/4", terminalType: nil,
            sheet: PromptSheet(
                programName: "python3", reason: "Allow?", asksForTouch: false, cancelTitle: "Deny",
                fallbackTitle: "Allow", isQuestion: true)),
        .pollButton, .show("Not recognized."), .update("Try again in 0:59."), .readPasscode, .stopReading, .dismiss,
    ]

    @Test func everyCommandSurvivesTheTrip() throws {
        for command in Self.everyCommand {
            #expect(try PromptAgentCoder.command(PromptAgentCoder.encode(command)) == command)
        }
    }

    @Test func everyEventSurvivesTheTrip() throws {
        let events: [PromptAgentEvent] = [
            .done, .notShown, .pressed(cancel: true), .pressed(cancel: false), .passcode(nil),
            .passcode(SecretBytes(utf8: "1234")),
        ]
        for event in events {
            let decoded = try PromptAgentCoder.event(PromptAgentCoder.encode(event))
            #expect(String(describing: decoded) == String(describing: event))
        }
    }

    /// A window's display carries the three variables that name a desktop, each once, and
    /// nothing else an agent would pass to the program it starts (`LD_PRELOAD`, say).
    @Test func aWindowsDisplayCarriesOnlyTheDesktopsVariables() throws {
        for display in [["LD_PRELOAD": "/tmp/x.so"], ["DISPLAY": ":0", "PATH": "/tmp"]] {
            let bytes = PromptAgentCoder.encode(.presentInWindow(display: display, sheet: Self.sheet))
            #expect(throws: WireError.self) { try PromptAgentCoder.command(bytes) }
        }
    }

    @Test func truncatedAndLongerMessagesAreRefused() throws {
        for command in Self.everyCommand {
            WireFormatTests.expectRefusesEveryCut(of: PromptAgentCoder.encode(command), PromptAgentCoder.command)
        }
    }
}
