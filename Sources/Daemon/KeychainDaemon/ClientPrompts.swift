import CKeychainSupport
import Foundation
import KeychainPrompt
import KeychainProtocol
import KeychainSupport

#if canImport(Glibc)
import Glibc
#endif

/// keychaind's sheets: in a window on the desktop of the process it identified, or on its
/// terminal, under the name of the executable it identified.
///
/// An app whose environment names a local desktop (``DesktopDisplay``) gets a desktop pinentry's
/// window when one is installed (``SheetProgram``; in system mode, one the agent has): a desktop
/// prompt is preferred to a terminal's, which the app shares. Otherwise the sheet is on a
/// terminal.
/// The terminal is the client's controlling terminal as the kernel reports it
/// (`/proc/PID/stat`'s `tty_nr`), read at each authentication, or one the request names (the ssh
/// agent names the terminal of the `ssh` it signs for). Either must be a terminal device of the
/// client's own user: keychaind never draws on another user's terminal. The per-user daemon
/// draws there itself; the system daemon, which runs as its own user and can open no user's
/// terminal, has the user's prompt agent draw there (``PromptAgents``), and without one every
/// authentication fails with `notInteractive` (Docs/SecurityModel.md, "Who draws the prompt").
struct ClientPrompts: PromptProvider {
    /// The executable's path, as the daemon identified it.
    private let executable: String
    private let pid: Int32
    private let uid: UInt32
    /// The client's pidfd, open for the connection's life (``PeerIdentity``).
    private let pidfd: Int32
    /// The system daemon's agents; nil in the per-user daemon, which draws itself.
    private let agents: PromptAgents?

    /// Sheets for the client `peer`, drawn by the daemon itself, or by `agents` (system mode).
    init(_ peer: PeerIdentity, agents: PromptAgents?) {
        executable = peer.executable
        pid = peer.pid
        uid = peer.uid
        pidfd = peer.pidfd
        self.agents = agents
    }

    /// The executable's name, worked out only when a sheet or an error names it: `URL`'s
    /// `fileURLWithPath` parses the path and asks the file system whether it is a directory,
    /// which at every request was 3.7% of keychaind's time in a Secret Service lookup.
    var appName: String { URL(fileURLWithPath: executable).lastPathComponent }

    func prompt(for authentication: OwnerAuthentication) -> any AuthenticationPrompt {
        let environment = clientEnvironment()
        // A desktop app gets a window when a desktop pinentry is there (the per-user daemon).
        if agents == nil, let display = DesktopDisplay(environment: environment),
            let program = SheetProgram.configuredForDesktop
        {
            return PinentryPrompt(program: program, place: .desktop(display))
        }
        let named = authentication.terminal.flatMap { Self.isTerminal($0, ownedBy: uid) ? $0 : nil }
        let terminal = named ?? controllingTerminal()
        guard let agents else {
            guard let terminal else { return NoPrompt() }
            return SheetProgram.configuredForTerminal.prompt(
                terminal: terminal, terminalType: environment["TERM"], guardsProcess: false)
        }
        guard let agent = agents.agent(for: uid) else { return NoPrompt() }
        // The agent checks the display and the terminal type again: it trusts the daemon, not
        // the app these came from.
        var places: [AgentPrompt.Place] = []
        if let display = DesktopDisplay(environment: environment) { places.append(.window(display.variables)) }
        if let terminal { places.append(.terminal(terminal, type: environment["TERM"])) }
        return AgentPrompt(agent: agent, places: places)
    }

    var askerHasExited: Bool { kc_pidfd_is_alive(pidfd) != 1 }

    /// The client's environment as it began (``ProcessFiles/environmentBlock(_:)``): the
    /// variables that say where it shows (`TERM`, `DISPLAY`, `WAYLAND_DISPLAY`, `XAUTHORITY`),
    /// each checked where it is used. The rest of the block is wiped unread.
    private func clientEnvironment() -> [String: String] {
        guard var environment = ProcessFiles.environmentBlock(pid) else { return [:] }
        defer { ProcessFiles.wipe(&environment) }
        var variables: [String: String] = [:]
        for entry in environment.split(separator: 0) {
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = String(decoding: entry[..<equals], as: UTF8.self)
            guard ["TERM", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY"].contains(name) else { continue }
            variables[name] = String(decoding: entry[(equals + 1)...], as: UTF8.self)
        }
        return variables
    }

    /// The client's controlling terminal, when it has one that is its user's: a pseudo-terminal
    /// (`/dev/pts/N`) or a virtual console (`/dev/ttyN`).
    private func controllingTerminal() -> String? {
        guard let number = ProcessFiles.statNumber(4, ofProcess: pid).flatMap({ UInt32(exactly: $0) }), number != 0
        else { return nil }
        let major = (number >> 8) & 0xfff
        let minor = (number & 0xff) | ((number >> 12) & 0xfff00)
        let path: String
        switch major {
        case 136...143: path = "/dev/pts/\((major - 136) * 256 + minor)"
        case 4 where minor < 64: path = "/dev/tty\(minor)"
        default: return nil
        }
        guard Self.isTerminal(path, ownedBy: uid, device: (major, minor)) else { return nil }
        return path
    }

    /// True when `path` is a character device owned by `owner` (and, when given, that very
    /// device), under `/dev/pts/` or a `/dev/ttyN`.
    static func isTerminal(_ path: String, ownedBy owner: UInt32, device: (UInt32, UInt32)? = nil) -> Bool {
        guard path.hasPrefix("/dev/pts/") || path.hasPrefix("/dev/tty"), !path.contains("..") else { return false }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFCHR, info.st_uid == owner else { return false }
        if let (major, minor) = device {
            // glibc's gnu_dev_major and gnu_dev_minor, which are macros Swift cannot call.
            let rdev = UInt64(info.st_rdev)
            let rdevMajor = UInt32(truncatingIfNeeded: ((rdev >> 8) & 0xfff) | ((rdev >> 32) & ~UInt64(0xfff)))
            let rdevMinor = UInt32(truncatingIfNeeded: (rdev & 0xff) | ((rdev >> 12) & ~UInt64(0xff)))
            return rdevMajor == major && rdevMinor == minor
        }
        return true
    }
}
