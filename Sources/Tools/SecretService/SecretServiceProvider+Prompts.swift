import Foundation
import KeychainClient
import KeychainProtocol

/// `org.freedesktop.Secret.Prompt`: a prompt is the client's own (its path is known to it
/// alone and answered for it alone), shown when the client calls `Prompt`, and ends with a
/// `Completed` signal sent to that client.
extension SecretServiceProvider {
    func answerPrompt(_ call: SecretCall, _ id: String) throws(DBusFailure) -> [DBusValue] {
        guard call.interface == Self.promptInterface || call.interface.isEmpty else { throw call.unknown }
        let client = call.client
        guard let prompt = client.prompts.removeValue(forKey: id) else {
            throw DBusFailure.noSuchObject("\(call.path.path) is not a prompt of this client, or it is over")
        }
        switch call.member {
        case "Prompt":
            _ = try call.arguments("s")
            show(prompt, id, for: client)
            return []
        case "Dismiss":
            _ = try call.arguments("")
            completions.post(
                FinishedPrompt(client: client.name, prompt: id, dismissed: true, result: .objectPaths([])))
            return []
        default:
            client.prompts[id] = prompt
            throw call.unknown
        }
    }

    /// Draws `prompt`'s sheet on a thread of its own: keychaind draws it, for the client, where
    /// it draws that app's (its desktop or terminal), and the loop goes on serving meanwhile.
    private func show(_ prompt: PendingPrompt, _ id: String, for client: BusClient) {
        let transport = client.transport
        let completions = completions
        let name = client.name
        let thread = Thread {
            var unlocked = prompt.objects
            if prompt.unlocksKeychain {
                let request = KeychainRequest.unlockBySheet(
                    KeychainSheet.authentication(.passcode, reason: "To unlock the keychain for its Secret Service"))
                // On a connection of its own: the client's other calls go on meanwhile.
                guard case .biometry? = try? transport.performBeside(request) else {
                    completions.post(
                        FinishedPrompt(client: name, prompt: id, dismissed: true, result: .objectPaths([])))
                    return
                }
            }
            for other in prompt.otherAppItems {
                // On the client's own connection: "Only This Time" lasts as long as it.
                let request = KeychainSecretItems.allowRequest(other.id, in: other.collection)
                guard case .biometry? = try? transport.perform(request) else {
                    unlocked.removeAll { $0 == SecretObjectPath.item(collection: other.collection, id: other.id).path }
                    continue
                }
            }
            completions.post(
                FinishedPrompt(
                    client: name, prompt: id, dismissed: unlocked.isEmpty, result: .objectPaths(unlocked)))
        }
        thread.start()
    }

    /// Sends the `Completed` signal of each prompt that finished to its client.
    func reportFinishedPrompts() {
        for finished in completions.take() {
            guard let client = clients[finished.client] else { continue }
            signal(
                client, path: SecretObjectPath.prompt(finished.prompt).path, interface: Self.promptInterface,
                member: "Completed", [.boolean(finished.dismissed), .variant(finished.result)])
        }
    }
}
