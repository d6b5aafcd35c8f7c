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

    /// The protocols by name, as Apple spells their constants.
    static let byName: [String: String] = {
        let codes: [String: CFString] = [
            "ftp": kSecAttrProtocolFTP, "ftpaccount": kSecAttrProtocolFTPAccount, "http": kSecAttrProtocolHTTP,
            "irc": kSecAttrProtocolIRC, "nntp": kSecAttrProtocolNNTP, "pop3": kSecAttrProtocolPOP3,
            "smtp": kSecAttrProtocolSMTP, "socks": kSecAttrProtocolSOCKS, "imap": kSecAttrProtocolIMAP,
            "ldap": kSecAttrProtocolLDAP, "appletalk": kSecAttrProtocolAppleTalk, "afp": kSecAttrProtocolAFP,
            "telnet": kSecAttrProtocolTelnet, "ssh": kSecAttrProtocolSSH, "ftps": kSecAttrProtocolFTPS,
            "https": kSecAttrProtocolHTTPS, "httpproxy": kSecAttrProtocolHTTPProxy,
            "httpsproxy": kSecAttrProtocolHTTPSProxy, "ftpproxy": kSecAttrProtocolFTPProxy,
            "smb": kSecAttrProtocolSMB, "rtsp": kSecAttrProtocolRTSP, "rtspproxy": kSecAttrProtocolRTSPProxy,
            "daap": kSecAttrProtocolDAAP, "eppc": kSecAttrProtocolEPPC, "ipp": kSecAttrProtocolIPP,
            "nntps": kSecAttrProtocolNNTPS, "ldaps": kSecAttrProtocolLDAPS, "telnets": kSecAttrProtocolTelnetS,
            "imaps": kSecAttrProtocolIMAPS, "ircs": kSecAttrProtocolIRCS, "pop3s": kSecAttrProtocolPOP3S,
        ]
        return codes.mapValues { $0 as String }
    }()

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
