import ArgumentParser
import Foundation
import Keychain
import KeychainPrompt
import KeychainSupport

/// `keychainctl prompt-agent`: draws the sheets of this user's apps for the system daemon.
struct PromptAgent: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prompt-agent",
        abstract: "Draw this user's authentication sheets for the system keychain daemon.",
        discussion: """
            The system daemon runs as its own user and cannot open your terminals or windows: while \
            this runs (in your session, as you), it draws the sheet in a window on the desktop of the \
            app that asks (a desktop pinentry) or on its terminal, and \
            passes the daemon the buttons pressed and the passcode typed. The daemon accepts it only \
            from a program root registered as the prompt agent ("prompt-agent": true in its file in \
            /etc/keychain/apps.d), and one per user. Runs until the daemon closes the connection.
            """)

    func run() throws {
        let connection: PromptAgentConnection
        do throws(KeychainError) {
            connection = try PromptAgentConnection(
                systemSocket: KeychainCommand.systemSocket ?? KeychainPaths.systemSocket)
        } catch {
            StandardError.write("keychainctl: error: \(error.message) (OSStatus \(error.status))\n")
            throw ExitCode(1)
        }
        FileHandle.standardOutput.write(Data("drawing sheets for the system keychain daemon\n".utf8))
        var agent = PromptAgentSheets(connection: connection)
        do throws(KeychainError) {
            try agent.serve()
        } catch {
            StandardError.write("keychainctl: \(error.message)\n")
        }
    }
}

/// The agent's sheets: one at a time, on the terminal each command names.
struct PromptAgentSheets {
    let connection: PromptAgentConnection
    private var session: (any PromptSession)?

    init(connection: PromptAgentConnection) {
        self.connection = connection
    }

    /// Answers commands until the daemon closes the connection. Every command gets one event,
    /// in order: a stop that ended a passcode entry is answered after the entry's.
    mutating func serve() throws(KeychainError) {
        defer { session?.dismiss() }
        while true {
            let command = try connection.nextCommand()
            if command == .readPasscode {
                var stopped = false
                let connection = connection
                let passcode = session?.readPasscode(shouldStop: {
                    guard !stopped, connection.hasCommandWaiting else { return stopped }
                    // The daemon sends nothing else during an entry.
                    stopped = (try? connection.nextCommand()) != nil
                    return true
                })
                try connection.answer(.passcode(passcode))
                if stopped { try connection.answer(.done) }
                continue
            }
            try connection.answer(answer(command))
        }
    }

    private mutating func answer(_ command: PromptAgentCommand) -> PromptAgentEvent {
        switch command {
        case .present(let terminal, let terminalType, let sheet):
            return present(
                sheet,
                SheetProgram.configuredForTerminal.prompt(
                    terminal: terminal, terminalType: terminalType, guardsProcess: true))
        case .presentInWindow(let variables, let sheet):
            // The display is the app's, passed on by the daemon: checked here as where it came from.
            guard let display = DesktopDisplay(environment: variables), let program = SheetProgram.configuredForDesktop
            else {
                session?.dismiss()
                session = nil
                return .notShown
            }
            return present(sheet, PinentryPrompt(program: program, place: .desktop(display)))
        case .pollButton:
            switch session?.pressedButton() {
            case .cancel?: return .pressed(cancel: true)
            case .fallback?: return .pressed(cancel: false)
            case nil: return .done
            }
        case .show(let line):
            session?.show(line)
            return .done
        case .update(let line):
            session?.update(line)
            return .done
        case .readPasscode:
            // ``serve()`` reads the passcode, watching for a stop meanwhile.
            return .passcode(nil)
        case .stopReading:
            // Sent as the entry ended on its own: nothing left to stop.
            return .done
        case .dismiss:
            session?.dismiss()
            session = nil
            return .done
        }
    }

    /// Shows `sheet` with `prompt`, in place of any sheet shown before.
    private mutating func present(_ sheet: PromptSheet, _ prompt: any AuthenticationPrompt) -> PromptAgentEvent {
        session?.dismiss()
        guard prompt.isInteractive else {
            session = nil
            return .notShown
        }
        session = prompt.present(sheet)
        return .done
    }
}
