import ArgumentParser
import Foundation

/// git-credential-keychain: git's credential helper (gitcredentials(7)) on the keychain, as
/// git-credential-osxkeychain is on macOS. `git config --global credential.helper keychain`
/// makes git run `git-credential-keychain get|store|erase` with the credential on standard input.
@main
struct GitCredentialKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential-keychain",
        abstract: "git's credential helper on the keychain: the passwords git uses over HTTPS, this program's alone.",
        discussion: """
            git runs it (git config --global credential.helper keychain) with the credential's \
            protocol, host, path and username on standard input, one attribute=value a line, as \
            gitcredentials(7) says. get prints the password stored for them, store keeps the one \
            given (an internet password of this program's: no other app reads it), erase removes it. \
            On a locked keychain get says so and how to unlock it.
            """)

    /// What git asks of its helper.
    enum Action: String, ExpressibleByArgument, CaseIterable {
        case get, store, erase
    }

    @Argument(help: "get, store or erase, as git asks.")
    var action: Action

    /// Runs the action of git's own call (`get`, `store` or `erase`, alone) without ArgumentParser;
    /// anything else (`--help`, an unknown action, more arguments) goes through the parser, which
    /// runs the same action or says what is wrong. The parser builds its command from this type's
    /// properties by reflection, asking the runtime of each whether it is an argument, and each
    /// first question searches every protocol conformance in the program: half of the
    /// instructions of a whole `get` (Benchmarks/README.md).
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.count == 1, let action = arguments.first.flatMap(Action.init(rawValue:)) else {
            return main(nil)
        }
        do {
            try Self.perform(action)
        } catch {
            exit(withError: error)
        }
    }

    func run() throws {
        try Self.perform(action)
    }

    /// Reads the credential git writes on standard input and does `action` with it.
    static func perform(_ action: Action) throws {
        let input = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        let credential = CredentialDescription(parsing: input)
        do {
            switch action {
            case .get:
                if let found = try CredentialStore.find(credential) { write(found.answer, to: .standardOutput) }
            case .store: try CredentialStore.store(credential)
            case .erase: try CredentialStore.erase(credential)
            }
        } catch {
            write("git-credential-keychain: \(error)\n", to: .standardError)
            throw ExitCode(1)
        }
    }

    /// Writes `text`'s UTF-8 from the string's own buffer: `Data(text.utf8)` would ask the runtime
    /// whether a UTF-8 view is `ContiguousBytes`, another search of every conformance.
    private static func write(_ text: String, to file: FileHandle) {
        var text = text
        text.withUTF8 { file.write(Data(buffer: $0)) }
    }
}
