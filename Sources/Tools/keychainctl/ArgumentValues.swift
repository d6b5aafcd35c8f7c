import ArgumentParser
import Keychain

extension Accessibility: ExpressibleByArgument {
    /// Accepts Apple's constant (`kSecAttrAccessibleWhenUnlocked`), its suffix
    /// (`WhenUnlocked`, `whenUnlocked`) or its raw value (`ak`), ignoring case.
    public init?(argument: String) {
        let wanted = argument.lowercased().replacingOccurrences(of: "ksecattraccessible", with: "")
        guard
            let match = Accessibility.allCases.first(where: { "\($0)".lowercased() == wanted || $0.rawValue == wanted })
        else {
            return nil
        }
        self = match
    }

    public static var allValueStrings: [String] { allCases.map { "\($0)" } }
}

/// A `kSecAttrProtocol` value from its name (`https`, `ssh`) or four-character code (`htps`).
struct ProtocolCode: ExpressibleByArgument {
    let code: String

    static let byName: [String: String] = [
        "ftp": kSecAttrProtocolFTP as String, "ftpaccount": kSecAttrProtocolFTPAccount as String, "http": kSecAttrProtocolHTTP as String,
        "irc": kSecAttrProtocolIRC as String, "nntp": kSecAttrProtocolNNTP as String, "pop3": kSecAttrProtocolPOP3 as String, "smtp": kSecAttrProtocolSMTP as String,
        "socks": kSecAttrProtocolSOCKS as String, "imap": kSecAttrProtocolIMAP as String, "ldap": kSecAttrProtocolLDAP as String,
        "appletalk": kSecAttrProtocolAppleTalk as String, "afp": kSecAttrProtocolAFP as String, "telnet": kSecAttrProtocolTelnet as String,
        "ssh": kSecAttrProtocolSSH as String, "ftps": kSecAttrProtocolFTPS as String, "https": kSecAttrProtocolHTTPS as String,
        "httpproxy": kSecAttrProtocolHTTPProxy as String, "httpsproxy": kSecAttrProtocolHTTPSProxy as String, "ftpproxy": kSecAttrProtocolFTPProxy as String,
        "smb": kSecAttrProtocolSMB as String, "rtsp": kSecAttrProtocolRTSP as String, "rtspproxy": kSecAttrProtocolRTSPProxy as String,
        "daap": kSecAttrProtocolDAAP as String, "eppc": kSecAttrProtocolEPPC as String, "ipp": kSecAttrProtocolIPP as String, "nntps": kSecAttrProtocolNNTPS as String,
        "ldaps": kSecAttrProtocolLDAPS as String, "telnets": kSecAttrProtocolTelnetS as String, "imaps": kSecAttrProtocolIMAPS as String,
        "ircs": kSecAttrProtocolIRCS as String, "pop3s": kSecAttrProtocolPOP3S as String,
    ]

    init?(argument: String) {
        if let code = Self.byName[argument.lowercased()] {
            self.code = code
        } else if (1...4).contains(argument.count),
            Self.byName.values.contains(argument.padding(toLength: 4, withPad: " ", startingAt: 0))
        {
            self.code = argument.padding(toLength: 4, withPad: " ", startingAt: 0)
        } else {
            return nil
        }
    }
}

/// `--access-control`: flag names joined by commas, as Apple spells them
/// (`userPresence`, `biometryAny`, `biometryCurrentSet`, `devicePasscode`, `or`, `and`,
/// `applicationPassword`), e.g. `biometryAny,or,devicePasscode`.
struct AccessControlArgument: ExpressibleByArgument {
    let flags: AccessControlFlags

    static let names: [String: AccessControlFlags] = [
        "userpresence": .userPresence, "biometryany": .biometryAny, "biometrycurrentset": .biometryCurrentSet,
        "devicepasscode": .devicePasscode, "or": .or, "and": .and, "applicationpassword": .applicationPassword,
    ]

    init?(argument: String) {
        var flags: AccessControlFlags = []
        for name in argument.split(separator: ",") {
            guard let flag = Self.names[name.trimmingCharacters(in: .whitespaces).lowercased()] else { return nil }
            flags.insert(flag)
        }
        self.flags = flags
    }
}
