import ArgumentParser
import Foundation
import Keychain

/// The guide's walkthrough app, in the terminal: a chore list anyone can read, where adding,
/// editing, marking and deleting a chore needs the device owner.
@main
struct ChoresApp: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chores",
        abstract: "A chore list that anyone can read and only the device owner can change.",
        discussion:
            "The guide's walkthrough app. In a terminal: a to add a chore, Enter to edit, x to mark done, d to "
            + "delete, q to quit; each change asks for your finger or the device passcode, on the keychain's "
            + "sheet. Without a terminal it prints the list. The list is kept in $XDG_DATA_HOME/chores/chores.json.")

    func run() {
        var list = ChoreList.load()
        guard Terminal.isInteractive else {
            // Reading needs no authentication; changing needs a person at a terminal.
            print(ChoresScreen.listLines(list.chores, selected: nil).joined(separator: "\n"))
            print("Run chores in a terminal to add or change chores.")
            return
        }
        let terminal = Terminal()
        defer { terminal.restore() }
        var screen = ChoresScreen(terminal: terminal)
        screen.readOnly = !screen.ensurePasscode()
        screen.run(&list)
    }
}

/// The screens: the list with its keys, the new/edit form, the first-run passcode offer.
struct ChoresScreen {
    let terminal: Terminal
    var selected = 0
    var status = "Welcome. Anyone can read this list; changing it needs you."
    /// No passcode is set and the user chose not to set one: the list can be read, not changed.
    var readOnly = false

    init(terminal: Terminal) {
        self.terminal = terminal
    }

    static func listLines(_ chores: [Chore], selected: Int?) -> [String] {
        var lines = ["Chores", String(repeating: "─", count: 60)]
        if chores.isEmpty { lines.append("  (no chores)") }
        for (index, chore) in chores.enumerated() {
            let marker = index == selected ? ">" : " "
            let notes = chore.notes.isEmpty ? "" : " — \(chore.notes)"
            lines.append("\(marker) [\(chore.done ? "x" : " ")] \(chore.title)\(notes)")
        }
        return lines
    }

    func drawList(_ list: ChoreList) {
        let keys =
            readOnly
            ? "[q] Quit   (read-only: no device passcode is set)"
            : "[a] Add a Chore   [Enter] Edit   [x] Done   [d] Delete   [q] Quit"
        terminal.draw(Self.listLines(list.chores, selected: selected) + ["", keys, "", status])
    }

    mutating func run(_ list: inout ChoreList) {
        while true {
            selected = min(max(selected, 0), max(list.chores.count - 1, 0))
            drawList(list)
            guard let key = terminal.readKey() else { return }
            switch key {
            case .character("q"), .character("Q"): return
            case .up, .character("k"): selected -= 1
            case .down, .character("j"): selected += 1
            case let change
            where readOnly
                && [.character("a"), .character("A"), .enter, .character("x"), .character("d")].contains(change):
                status = "Changing chores needs a device passcode. Quit and run chores again to set one."
            case .character("a"), .character("A"):
                guard authenticate("To add a new chore") else { continue }
                if let chore = form(Chore(title: "", notes: "", done: false), heading: "New chore") {
                    list.chores.append(chore)
                    selected = list.chores.count - 1
                    save(list, "Added “\(chore.title)”.")
                } else {
                    status = "\(status) Cancelled: no chore was added."
                }
            case .enter where !list.chores.isEmpty:
                guard authenticate("To edit a chore") else { continue }
                if let chore = form(list.chores[selected], heading: "Edit chore") {
                    list.chores[selected] = chore
                    save(list, "Saved “\(chore.title)”.")
                } else {
                    status = "\(status) Cancelled: the chore is unchanged."
                }
            case .character("x") where !list.chores.isEmpty:
                guard authenticate("To mark a chore done") else { continue }
                list.chores[selected].done.toggle()
                let chore = list.chores[selected]
                save(list, "“\(chore.title)” is \(chore.done ? "done" : "not done").")
            case .character("d") where !list.chores.isEmpty:
                guard authenticate("To delete a chore") else { continue }
                let removed = list.chores.remove(at: selected)
                save(list, "Deleted “\(removed.title)”.")
            default:
                continue
            }
        }
    }

    /// Runs AuthenticateMe below the list and puts its outcome on the status line.
    mutating func authenticate(_ reason: String) -> Bool {
        terminal.write("\r\n")
        let outcome = OwnerAuthentication.authenticate(reason: reason)
        status = outcome.message
        return outcome.granted
    }

    func form(_ chore: Chore, heading: String) -> Chore? {
        terminal.draw([heading, String(repeating: "─", count: 60), "Enter to accept, Esc to cancel.", ""])
        guard let title = terminal.readLine("Title: ", initial: chore.title), !title.isEmpty,
            let notes = terminal.readLine("Notes: ", initial: chore.notes)
        else { return nil }
        return Chore(title: title, notes: notes, done: chore.done)
    }

    /// Saves and reports, after the authentication's outcome.
    mutating func save(_ list: ChoreList, _ message: String) {
        do {
            try list.save()
            status = "\(status) \(message)"
        } catch {
            status = "Could not save the list: \(error.localizedDescription)"
        }
    }

    /// First run with no passcode: says why one is needed and offers to set it. True when a
    /// passcode is set; false when the user declines (the list is then read-only). A refused new
    /// passcode (the two differ, too short) is said on the same screen, which asks again.
    mutating func ensurePasscode() -> Bool {
        guard let state = try? KeychainDevice.status(), !state.passcodeSet else { return true }
        var problem: String?
        while true {
            terminal.draw(
                [
                    "Chores", String(repeating: "─", count: 60),
                    "Only you may change your chores. Chores asks for your fingerprint,",
                    "or for the device passcode when there is no fingerprint, to make sure.",
                    "No device passcode is set yet, so nobody can be asked for one.",
                    "A passcode has at least \(Self.minimumPasscodeLength) characters.",
                    "", "Set a device passcode now? [y] Yes   [n] No, just read the list",
                ] + (problem.map { ["", $0] } ?? []))
            guard let key = terminal.readKey() else { return false }
            switch key {
            case .character("y"), .character("Y"):
                terminal.write("\r\n")
                guard let first = terminal.readSecret("New passcode: "),
                    let second = terminal.readSecret("Confirm new passcode: ")
                else {
                    problem = "Cancelled: no passcode was set."
                    continue
                }
                guard first.constantTimeEquals(second) else {
                    problem = "The two passcodes differ; none was set. Try again."
                    continue
                }
                do {
                    try KeychainDevice.setPasscode(current: nil, new: first)
                    status = "Passcode set. Adding and changing chores now asks for it."
                    return true
                } catch {
                    problem = "No passcode was set: \(error.message)."
                }
            case .character("n"), .character("N"), .character("q"), .escape:
                status = "No passcode is set, so the list is read-only."
                return false
            default:
                continue
            }
        }
    }

    /// iOS asks for at least 4 digits; so does the keychain.
    static let minimumPasscodeLength = 4
}
