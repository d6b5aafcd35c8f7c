/// What the system keychain daemon asks of a user's prompt agent, on the connection the agent
/// gave it (``KeychainRequest/servePrompts``): the daemon runs the authentication, the agent
/// shows the sheet on the app's terminal or desktop, which the daemon, running as another user,
/// cannot open. Each command is answered by one ``PromptAgentEvent``.
public enum PromptAgentCommand: Sendable, Hashable {
    /// Show the sheet on `terminal`, a terminal device of the agent's user, of type
    /// `terminalType` (the app's `TERM`; the agent checks it).
    case present(terminal: String, terminalType: String?, sheet: PromptSheet)
    /// Show the sheet in a window on the app's desktop, which `display` names (the app's
    /// `DISPLAY`, `WAYLAND_DISPLAY` and `XAUTHORITY`; the agent checks each).
    case presentInWindow(display: [String: String], sheet: PromptSheet)
    /// Answer the button pressed since the last poll (`pressed`), or `done` when none was.
    case pollButton
    /// A line of feedback under the sheet.
    case show(String)
    /// A line that replaces the previous update (a countdown).
    case update(String)
    /// Read the passcode with hidden entry; a ``stopReading`` sent meanwhile ends the entry.
    case readPasscode
    /// End a passcode entry under way (the app cancelled, or exited).
    case stopReading
    /// Remove the sheet and restore the terminal.
    case dismiss
}

/// A prompt agent's answer to one ``PromptAgentCommand``.
public enum PromptAgentEvent: Sendable {
    /// Done (a sheet shown, a line written, a sheet removed).
    case done
    /// The sheet could not be shown: the terminal could not be opened.
    case notShown
    /// A button pressed since the last poll: Cancel, or else the fallback button.
    case pressed(cancel: Bool)
    /// The passcode typed; nil when the user cancelled or the entry was stopped.
    case passcode(SecretBytes?)
}

/// The bytes of ``PromptAgentCommand`` and ``PromptAgentEvent``: a version byte, a tag, the
/// fields, in ``WireFrame``s on the agent's connection.
public enum PromptAgentCoder {
    /// The bytes of `command`.
    public static func encode(_ command: PromptAgentCommand) -> [UInt8] {
        var writer = WireWriter()
        writer.u8(WireFrame.version)
        switch command {
        case .present(let terminal, let terminalType, let sheet):
            writer.u8(1)
            writer.string(terminal)
            writer.optional(terminalType) { $0.string($1) }
            write(sheet, to: &writer)
        case .presentInWindow(let display, let sheet):
            writer.u8(8)
            writer.array(display.sorted { $0.key < $1.key }) { writer, variable in
                writer.string(variable.key)
                writer.string(variable.value)
            }
            write(sheet, to: &writer)
        case .pollButton: writer.u8(2)
        case .show(let line): writer.u8(3); writer.string(line)
        case .update(let line): writer.u8(4); writer.string(line)
        case .readPasscode: writer.u8(5)
        case .stopReading: writer.u8(6)
        case .dismiss: writer.u8(7)
        }
        return writer.finish()
    }

    private static func write(_ sheet: PromptSheet, to writer: inout WireWriter) {
        writer.string(sheet.programName)
        writer.string(sheet.reason)
        writer.bool(sheet.asksForTouch)
        writer.string(sheet.cancelTitle)
        writer.optional(sheet.fallbackTitle) { $0.string($1) }
        writer.bool(sheet.isQuestion)
    }

    /// The variables a window's display is named by, and the longest value of each.
    static let displayVariables = ["DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY"]
    static let maximumDisplayValue = 4096

    /// The command in `body`.
    ///
    /// - Throws: ``WireError`` for anything but one well-formed command.
    public static func command(_ body: [UInt8]) throws(WireError) -> PromptAgentCommand {
        var reader = WireReader(body)
        try WireFrame.readVersion(&reader)
        let text = { (reader: inout WireReader) throws(WireError) in
            try reader.string(max: OwnerAuthentication.maximumReason)
        }
        let sheet = { (reader: inout WireReader) throws(WireError) in
            PromptSheet(
                programName: try text(&reader), reason: try text(&reader), asksForTouch: try reader.bool(),
                cancelTitle: try text(&reader), fallbackTitle: try reader.optional(text), isQuestion: try reader.bool())
        }
        let command: PromptAgentCommand
        switch try reader.u8() {
        case 1:
            let terminal = try reader.string(max: WireValues.maximumToken)
            let terminalType = try reader.optional { (reader: inout WireReader) throws(WireError) in
                try reader.string(max: WireValues.maximumToken)
            }
            command = .present(terminal: terminal, terminalType: terminalType, sheet: try sheet(&reader))
        case 8:
            var display: [String: String] = [:]
            let variables = try reader.array(max: displayVariables.count) {
                (reader: inout WireReader) throws(WireError) in
                (try reader.string(max: 32), try reader.string(max: maximumDisplayValue))
            }
            for (name, value) in variables {
                guard displayVariables.contains(name), display[name] == nil else {
                    throw WireError("a display variable that is not DISPLAY, WAYLAND_DISPLAY or XAUTHORITY, or twice")
                }
                display[name] = value
            }
            command = .presentInWindow(display: display, sheet: try sheet(&reader))
        case 2: command = .pollButton
        case 3: command = .show(try text(&reader))
        case 4: command = .update(try text(&reader))
        case 5: command = .readPasscode
        case 6: command = .stopReading
        case 7: command = .dismiss
        case let tag: throw WireError("an unknown prompt command (tag \(tag))")
        }
        try reader.finish()
        return command
    }

    /// The bytes of `event`; they may hold the passcode: wipe them once sent.
    public static func encode(_ event: PromptAgentEvent) -> [UInt8] {
        var writer = WireWriter()
        writer.u8(WireFrame.version)
        switch event {
        case .done: writer.u8(1)
        case .notShown: writer.u8(2)
        case .pressed(let cancel): writer.u8(3); writer.bool(cancel)
        case .passcode(let passcode): writer.u8(4); writer.optional(passcode) { $0.secret($1) }
        }
        return writer.finish()
    }

    /// The event in `body`.
    ///
    /// - Throws: ``WireError`` for anything but one well-formed event.
    public static func event(_ body: [UInt8]) throws(WireError) -> PromptAgentEvent {
        var reader = WireReader(body)
        try WireFrame.readVersion(&reader)
        let event: PromptAgentEvent
        switch try reader.u8() {
        case 1: event = .done
        case 2: event = .notShown
        case 3: event = .pressed(cancel: try reader.bool())
        case 4: event = .passcode(try reader.optional(WireValues.secret))
        case let tag: throw WireError("an unknown prompt event (tag \(tag))")
        }
        try reader.finish()
        return event
    }
}
