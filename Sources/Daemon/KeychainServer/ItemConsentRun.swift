import Foundation
import KeychainPrompt
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The owner's answer, on the keychain's sheet, to one app asking to read another app's Secret
/// Service item (``KeychainRequest/allowOtherAppSecretItem(service:account:_:)``):
///
/// 1. “python3” wants to read “GitHub token”, saved by “/usr/bin/secret-tool”. — Deny, or Allow;
/// 2. Allow is the owner's: a touch or the passcode (``OwnerAuthenticationRun``, to prove the
///    owner, so the simulated sensor cannot answer); a sheet on a terminal the asking app shares
///    could otherwise be answered by the app itself;
/// 3. Only This Time (until the app's connection closes), or Always Allow.
///
/// The names are the keychain's: the asking app as keychaind identified it, the app that saved
/// the item by its access group. The label is the saving app's text, cleaned and cut.
struct ItemConsentRun {
    let server: KeychainServer
    let authentication: OwnerAuthentication
    let caller: CallerIdentity
    let prompts: any PromptProvider
    let label: String
    let savedBy: String

    /// What the owner answered.
    enum Outcome {
        case onlyThisTime
        case always
        case refused(OwnerAuthenticationFailure, String)
    }

    func run() throws(KeychainError) -> Outcome {
        let prompt = prompts.prompt(for: authentication)
        guard prompt.isInteractive else {
            return .refused(
                .notInteractive,
                "asking the owner needs a prompt, and the keychain has none to show for \(prompts.appName)")
        }
        // Both apps as keychaind names them: in per-user mode, their executables.
        let asker = caller.app ?? prompts.appName
        let question = "“\(asker)” wants to read “\(label.prefix(100))”, saved by “\(savedBy)”."
        guard ask(prompt, question, cancel: "Deny", answer: "Allow") == .fallback else {
            return .refused(.userCancel, "the owner did not allow it")
        }
        let proof = OwnerAuthentication(
            factors: authentication.factors, reason: question, cancelTitle: authentication.cancelTitle,
            fallbackTitle: authentication.fallbackTitle, context: authentication.context,
            terminal: authentication.terminal)
        if case .authenticationFailed(let failure, let message) = try server.authenticateOwner(
            proof, for: .proveOwner, caller: caller, prompts: prompts)
        {
            return .refused(failure, message)
        }
        let lasting = ask(
            prompt, "Let “\(asker)” read “\(label.prefix(100))” from now on, or only until it disconnects?",
            cancel: "Only This Time", answer: "Always Allow")
        return lasting == .fallback ? .always : .onlyThisTime
    }

    /// Shows `question` with two buttons until one is pressed; nil when the asker exits first.
    private func ask(
        _ prompt: any AuthenticationPrompt, _ question: String, cancel: String, answer: String
    )
        -> PromptButton?
    {
        let session = prompt.present(
            PromptSheet(
                programName: prompts.appName, reason: question, asksForTouch: false, cancelTitle: cancel,
                fallbackTitle: answer, isQuestion: true))
        defer { session.dismiss() }
        while !prompts.askerHasExited {
            if let button = session.pressedButton() { return button }
            usleep(50_000)
        }
        return nil
    }
}
