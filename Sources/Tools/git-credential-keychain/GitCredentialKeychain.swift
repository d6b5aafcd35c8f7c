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

    func run() throws {
        let input = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        let credential = CredentialDescription(parsing: input)
        do {
            switch action {
            case .get:
                if let found = try CredentialStore.find(credential) {
                    FileHandle.standardOutput.write(Data(found.answer.utf8))
                }
            case .store: try CredentialStore.store(credential)
            case .erase: try CredentialStore.erase(credential)
            }
        } catch {
            FileHandle.standardError.write(Data("git-credential-keychain: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
