import Foundation

// git-credential-keychain: git's credential helper (gitcredentials(7)) on the keychain, as
// git-credential-osxkeychain is on macOS. `git config --global credential.helper keychain`
// makes git run `git-credential-keychain get|store|erase` with the credential on standard input.

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let action = arguments.first, ["get", "store", "erase"].contains(action) else {
    FileHandle.standardError.write(Data("usage: git-credential-keychain get|store|erase\n".utf8))
    exit(1)
}
let input = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
let credential = CredentialDescription(parsing: input)
do {
    switch action {
    case "get":
        if let found = try CredentialStore.find(credential) {
            FileHandle.standardOutput.write(Data(found.answer.utf8))
        }
    case "store": try CredentialStore.store(credential)
    default: try CredentialStore.erase(credential)
    }
} catch {
    FileHandle.standardError.write(Data("git-credential-keychain: \(error)\n".utf8))
    exit(1)
}
