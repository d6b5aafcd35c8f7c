import Foundation
import Keychain
import KeychainSupport

/// The files a distribution package ships for keychaind and keychainctl (Debian's
/// `debian/rules` has `keychainctl daemon install --package-root DIR` write them), the same text
/// the commands that install by hand write, with the package's paths: the programs in
/// `/usr/bin` (keychaind beside keychainctl, where clients find it), the prompt agent's copy of
/// keychainctl in `/usr/libexec/swift-keychain` (an app of its own), user units in
/// `/usr/lib/systemd/user` and system units in `/lib/systemd/system` (where Debian 12's
/// debhelper looks for them to add their maintainer scripts), the polkit rule in `/usr/share/polkit-1/rules.d`, and the prompt agent's
/// registration in the app registry (a configuration file of the package).
///
/// The system unit asks for no `tss` group: the package's `sysusers.d` entry puts the keychaind
/// user in it instead, so the unit starts where no TPM's group exists.
enum PackageFiles {
    /// keychaind, as packaged.
    static let daemon = "/usr/bin/keychaind"
    /// keychainctl, as packaged.
    static let keychainctl = "/usr/bin/keychainctl"
    /// The prompt agent's program, as packaged.
    static let promptAgent = "/usr/libexec/swift-keychain/keychain-prompt-agent"

    /// Each file's path beneath the package's root, and its text.
    static let files: [(path: String, text: String)] = [
        ("usr/lib/systemd/user/keychaind.socket", DaemonInstall.socketUnit),
        ("usr/lib/systemd/user/keychaind.service", DaemonInstall.serviceUnit(daemon)),
        ("usr/lib/systemd/user/keychain-ssh-agent.service", SSH.InstallAgent.unit(keychainctl)),
        ("usr/lib/systemd/user/keychain-prompt-agent.service", PromptAgentInstall.unit(program: promptAgent)),
        ("lib/systemd/system/keychaind.socket", SystemUnits.socketUnit),
        ("lib/systemd/system/keychaind.service", SystemUnits.serviceUnit(daemon: daemon, tpmGroup: nil)),
        (
            String(PromptAgentInstall.registrationPath.dropFirst()),
            PromptAgentInstall.registration(program: promptAgent)
        ),
        ("usr/share/polkit-1/rules.d/\(FingerprintPolkitRule.fileName)", FingerprintPolkitRule.text),
    ]

    /// Writes every file beneath `root`; the paths written.
    static func write(beneath root: String) throws -> [String] {
        try files.map { file in
            let path = "\(root)/\(file.path)"
            try InstalledFiles.write(file.text, at: path)
            return path
        }
    }
}
