import Foundation
import Keychain
import KeychainPrompt
import LocalAuthentication
import Synchronization

/// The sheets of the tests' keychain: a context made with ``LAContext/scripted(_:)`` gets its
/// script; any other has nobody to ask (as a process without a terminal).
final class ScriptedPrompts: PromptProvider {
    static let shared = ScriptedPrompts()

    private let scripts = Mutex<[AuthenticationContextID: ScriptedPrompt]>([:])
    var appName: String { "tests" }

    func prompt(for authentication: OwnerAuthentication) -> any AuthenticationPrompt {
        scripts.withLock { $0[authentication.context] } ?? NoPrompt()
    }

    func assign(_ prompt: ScriptedPrompt, to context: LAContext) {
        scripts.withLock { $0[context.identifier] = prompt }
    }
}

extension LAContext {
    /// A context whose sheets, drawn by the tests' keychain, play `prompt`.
    static func scripted(_ prompt: ScriptedPrompt) -> LAContext {
        let context = LAContext()
        ScriptedPrompts.shared.assign(prompt, to: context)
        return context
    }
}

/// A prompt that plays a script: touches on the simulated sensor, button presses and passcode
/// entries, in order. Records every sheet it showed and every message.
final class ScriptedPrompt: AuthenticationPrompt {
    enum Step: Sendable {
        case touch(matching: Bool)
        case press(PromptButton)
        case passcode(String?)
    }

    private let script: Mutex<[Step]>
    let sheets = Mutex<[PromptSheet]>([])
    let messages = Mutex<[String]>([])
    let isInteractive: Bool

    init(_ steps: [Step], interactive: Bool = true) {
        script = Mutex(steps)
        isInteractive = interactive
    }

    var remainingSteps: Int { script.withLock { $0.count } }

    func present(_ sheet: PromptSheet) -> any PromptSession {
        sheets.withLock { $0.append(sheet) }
        return Session(self)
    }

    func next(_ accept: (Step) -> Bool) -> Step? {
        script.withLock { steps in
            guard let first = steps.first, accept(first) else { return nil }
            return steps.removeFirst()
        }
    }

    final class Session: PromptSession {
        let prompt: ScriptedPrompt
        init(_ prompt: ScriptedPrompt) { self.prompt = prompt }

        func pressedButton() -> PromptButton? {
            switch prompt.next({ if case .passcode = $0 { return false } else { return true } }) {
            case .press(let button)?: return button
            case .touch(let matching)?:
                _ = try? ProcessKeychain.perform(.simulateTouch(matching: matching, finger: nil))
                return nil
            default: return nil
            }
        }

        func show(_ message: String) { prompt.messages.withLock { $0.append(message) } }

        func readPasscode(shouldStop: () -> Bool) -> SecretBytes? {
            guard
                case .passcode(let passcode)? = prompt.next({
                    if case .passcode = $0 { return true } else { return false }
                })
            else { return nil }
            return passcode.map { SecretBytes(utf8: $0) }
        }

        func dismiss() {}
    }
}
