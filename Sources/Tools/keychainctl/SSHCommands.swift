import ArgumentParser
import Foundation
import Keychain
import KeychainSSH
import KeychainSupport

extension SSHKeyStore.Protection: ExpressibleByArgument {}
extension SSHForwardingPolicy: ExpressibleByArgument {}

/// `keychainctl ssh …`: SSH keys made inside the Enclave, which never leave it.
struct SSH: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "SSH keys that never leave the Enclave (ecdsa-sha2-nistp256), for `keychainctl ssh-agent`.",
        subcommands: [Create.self, List.self, PublicKey.self, Delete.self, Forwarding.self, InstallAgent.self])

    /// What `--access-control` takes, for its help.
    static let protectionNames = SSHKeyStore.Protection.allCases.map(\.rawValue).joined(separator: ", ")

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a key inside the Enclave and print its authorized_keys line.")

        @Argument(help: "The key's name (one word).")
        var name: String

        @Option(
            name: .customLong("access-control"),
            help: ArgumentHelp("What each signature asks for: \(SSH.protectionNames)."))
        var protection: SSHKeyStore.Protection = .none

        func run() throws {
            try KeychainCommand.run {
                print(try SSHKeyStore.create(name: name, protection: protection).authorizedKeysLine)
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the keys: name and fingerprint.")

        func run() throws {
            try KeychainCommand.run {
                for key in try SSHKeyStore.all() { print("\(key.name)\t\(key.fingerprint)") }
            }
        }
    }

    struct PublicKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "public-key", abstract: "Print a key's authorized_keys line.")

        @Argument(help: "The key's name.")
        var name: String

        func run() throws {
            try KeychainCommand.run {
                guard let key = try SSHKeyStore.find(name) else {
                    throw KeychainError(.errSecItemNotFound, "no SSH key is named \(name)")
                }
                print(key.authorizedKeysLine)
            }
        }
    }

    struct Forwarding: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say what a key does when the agent is forwarded (ssh -A): allow, ask or refuse.",
            discussion:
                "A request that comes through a forwarded agent is made by a program on the host you forwarded it "
                + "to. `ask` shows the sheet at every such signature, naming the hosts, and no reuse window serves "
                + "it; `refuse` refuses them; `allow` signs as for a local program. A key with an access control "
                + "refuses by default and takes ask or refuse; a key without one allows by default, as OpenSSH's "
                + "agent does. Without a policy, prints the key's.")

        @Argument(help: "The key's name.")
        var name: String

        @Argument(help: "allow, ask or refuse.")
        var policy: SSHForwardingPolicy?

        func run() throws {
            try KeychainCommand.run {
                if let policy { try SSHForwardingPolicy.set(policy, for: name) }
                print("\(name): \(try SSHForwardingPolicy.current(for: name).rawValue) when forwarded")
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a key: nothing can sign with it again.")

        @Argument(help: "The key's name.")
        var name: String

        func run() throws {
            try KeychainCommand.run { try SSHKeyStore.delete(name) }
        }
    }
}

extension SSH {
    /// `keychainctl ssh install-agent`: a systemd user unit that runs the agent for the session.
    struct InstallAgent: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install-agent",
            abstract: "Install a systemd user unit that runs `keychainctl ssh-agent` (keychain-ssh-agent.service).")

        func run() throws {
            try KeychainCommand.run(handlesSecrets: false) {
                let executable = InstalledFiles.runningProgram
                let directory = DaemonInstall.userUnitDirectory()
                do {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                    try Self.unit(executable).write(
                        to: directory.appendingPathComponent("keychain-ssh-agent.service"), atomically: true,
                        encoding: .utf8)
                } catch {
                    throw KeychainError(
                        .errSecIO, "cannot write the unit in \(directory.path): \(error.localizedDescription)")
                }
                print(
                    """
                    installed \(directory.path)/keychain-ssh-agent.service (ExecStart=\(executable) ssh-agent)
                    enable it: systemctl --user daemon-reload && systemctl --user enable --now \
                    keychain-ssh-agent.service
                    then, in your shell's profile: export SSH_AUTH_SOCK="$XDG_RUNTIME_DIR/keychain/ssh-agent.socket"
                    """)
            }
        }

        /// The agent as a service of the user's session. It has no terminal of its own: each
        /// sheet shows on the terminal of the program that asked.
        static func unit(_ executable: String) -> String {
            """
            [Unit]
            Description=swift-keychain ssh-agent (keys in the Enclave)

            [Service]
            ExecStart=\(executable) ssh-agent
            KillSignal=SIGTERM

            [Install]
            WantedBy=default.target

            """
        }
    }
}

/// `keychainctl ssh-agent`: the OpenSSH agent protocol on the Enclave's SSH keys.
struct SSHAgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssh-agent",
        abstract: "Serve the SSH keys to ssh, git and ssh-add as an agent; each signature is made in the Enclave.",
        discussion:
            "Prints SSH_AUTH_SOCK=…; export SSH_AUTH_SOCK; as `ssh-agent -s` does, then serves until stopped. A "
            + "key made with an access control prompts on this command's terminal at each signature (or once per "
            + "--reuse-window); with no terminal such a signature fails and ssh tries its next key."
    )

    @Option(help: "The socket's path (default: $XDG_RUNTIME_DIR/keychain/ssh-agent.socket).")
    var socket: String?

    @Option(
        name: .customLong("reuse-window"),
        help: "Seconds one authentication serves a key's signatures (0: ask every time).")
    var reuseWindow: Double = 0

    @Option(
        help: ArgumentHelp(
            "Another agent's socket (for example the $SSH_AUTH_SOCK you had): its keys are offered after the "
                + "Enclave's, and it signs with them.")
    )
    var proxy: String?

    func run() throws {
        try KeychainCommand.run {
            let directory = KeychainPaths.runtimeDirectory()
            let path = socket ?? directory.appendingPathComponent("ssh-agent.socket").path
            if socket == nil {
                try? FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            guard reuseWindow >= 0 else {
                throw KeychainError(.errSecParam, "--reuse-window takes a number of seconds, 0 or more")
            }
            FileHandle.standardOutput.write(Data("SSH_AUTH_SOCK=\(path); export SSH_AUTH_SOCK;\n".utf8))
            do {
                guard proxy != path else { throw KeychainError(.errSecParam, "--proxy names this agent's own socket") }
                try SSHAgentServer.run(
                    socket: path, authentications: SSHAgentAuthentications(reuseWindow: reuseWindow),
                    upstream: proxy.map(SSHAgentUpstream.init(socket:)))
            } catch let error as KeychainError {
                throw error
            } catch {
                throw KeychainError(.errSecIO, "the agent's socket \(path) could not be served: \(error)")
            }
        }
    }
}
