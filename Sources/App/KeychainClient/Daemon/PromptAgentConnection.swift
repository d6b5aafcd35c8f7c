import Foundation
import KeychainProtocol
import KeychainSupport

/// A prompt agent's connection to the system daemon (``KeychainRequest/servePrompts``): once
/// the daemon accepts it, the daemon sends commands and the agent answers each.
///
/// `keychainctl prompt-agent` is one: it runs as the user, in the user's session, and draws the
/// sheets of the user's apps on their terminals, which the daemon, running as its own user,
/// cannot open.
public final class PromptAgentConnection {
    private let connection: DaemonConnection

    /// Connects to the system daemon at `socket` and offers to draw this user's sheets.
    ///
    /// - Throws: the daemon's refusal: `errSecMissingEntitlement` when this program is not
    ///   registered as the prompt agent, `errSecDuplicateItem` while another agent of this user
    ///   runs, `errSecParam` from a per-user daemon (which draws its own).
    public init(systemSocket socket: String = KeychainPaths.systemSocket) throws(KeychainError) {
        connection = try SystemDaemon.connect(socket)
        let reply: [UInt8]
        do throws(DaemonConnection.Failure) {
            reply = try connection.exchange(RequestCoder.encode(.servePrompts))
        } catch {
            throw KeychainError(.errSecIO, "the system keychain daemon did not answer the prompt agent")
        }
        _ = try DaemonTransport.decode(reply, naming: "reply").get()
    }

    /// The daemon's next command; waits as long as it takes.
    ///
    /// - Throws: `errSecIO` when the daemon closed the connection, `errSecDecode` for a command
    ///   that cannot be read.
    public func nextCommand() throws(KeychainError) -> PromptAgentCommand {
        let body: [UInt8]
        do throws(DaemonConnection.Failure) {
            body = try connection.receiveBody()
        } catch {
            throw KeychainError(.errSecIO, "the system keychain daemon closed the prompt agent's connection")
        }
        do throws(WireError) {
            return try PromptAgentCoder.command(body)
        } catch {
            throw KeychainError(.errSecDecode, "a prompt command could not be read: \(error.reason)")
        }
    }

    /// True when a command is waiting (a stop during a passcode entry).
    public var hasCommandWaiting: Bool { connection.hasInput }

    /// Answers the last command.
    public func answer(_ event: PromptAgentEvent) throws(KeychainError) {
        var body = PromptAgentCoder.encode(event)
        defer { body.withUnsafeMutableBytes { if let base = $0.baseAddress { _ = memset(base, 0, $0.count) } } }
        do throws(DaemonConnection.Failure) {
            try connection.send(body: body)
        } catch {
            throw KeychainError(.errSecIO, "the system keychain daemon closed the prompt agent's connection")
        }
    }
}
