/// `SecAccessControlCreateFlags`, with Apple's raw values and raw type (`CFOptionFlags`, an
/// unsigned long).
public struct AccessControlFlags: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Biometry or the device passcode: `biometryAny | or | devicePasscode`.
    public static let userPresence = AccessControlFlags(rawValue: 1 << 0)
    /// Any enrolled finger; survives enrollment changes.
    public static let biometryAny = AccessControlFlags(rawValue: 1 << 1)
    /// The fingers enrolled when the item was made; adding or removing one ends the item.
    public static let biometryCurrentSet = AccessControlFlags(rawValue: 1 << 3)
    /// The device passcode.
    public static let devicePasscode = AccessControlFlags(rawValue: 1 << 4)
    /// A companion device (watch). None exists on Linux.
    public static let companion = AccessControlFlags(rawValue: 1 << 5)
    /// At least one constraint.
    public static let or = AccessControlFlags(rawValue: 1 << 14)
    /// Every constraint.
    public static let and = AccessControlFlags(rawValue: 1 << 15)
    /// Use of an enclave private key (kept for enclave keys; no effect on passwords).
    public static let privateKeyUsage = AccessControlFlags(rawValue: 1 << 30)
    /// The app's own password, in addition to any constraint.
    public static let applicationPassword = AccessControlFlags(rawValue: 1 << 31)

    static let known: AccessControlFlags = [
        .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .companion, .or, .and, .privateKeyUsage,
        .applicationPassword,
    ]
}

/// One way of proving the device owner is present.
public enum AuthenticationFactor: String, Sendable, Hashable, Codable, CaseIterable {
    /// A fingerprint match.
    case biometry
    /// The device passcode.
    case passcode
}

/// An item's access control: its accessibility and the authentication its data needs.
/// Validated on creation; the Enclave enforces it.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/secaccesscontrolcreateflags>
public struct AccessControl: Sendable, Hashable, Codable {
    /// When the item is available at all (`protection` of `SecAccessControlCreateWithFlags`).
    public let protection: Accessibility
    /// The flags as given.
    public let flags: AccessControlFlags

    /// Checks a combination of flags by the rules of Apple's `SecAccessControlCreateWithFlags`
    /// (Security's SecAccessControl.c): several constraints without `.or` must all be met, as
    /// with `.and`; `.or` or `.and` with one constraint changes nothing.
    ///
    /// - Throws: `errSecParam` for `.or` with `.and`, both biometry constraints, `userPresence`
    ///   with anything but `applicationPassword` and `privateKeyUsage` (as Apple); and, unlike
    ///   Apple, for unknown bits and for `companion` (no companion devices exist on Linux).
    public init(protection: Accessibility, flags: AccessControlFlags) throws(KeychainError) {
        guard AccessControlFlags.known.isSuperset(of: flags) else {
            throw KeychainError(
                .errSecParam,
                "unknown SecAccessControlCreateFlags bits 0x\(String(flags.subtracting(.known).rawValue, radix: 16))")
        }
        guard !flags.contains(.companion) else {
            throw KeychainError(
                .errSecParam, "the companion (watch) constraint cannot be met on Linux: there are no companion devices")
        }
        guard !(flags.contains(.or) && flags.contains(.and)) else {
            throw KeychainError(.errSecParam, ".or and .and cannot be combined")
        }
        guard !flags.isSuperset(of: [.biometryAny, .biometryCurrentSet]) else {
            throw KeychainError(
                .errSecParam, "only one biometry constraint can be set: .biometryAny or .biometryCurrentSet")
        }
        if flags.contains(.userPresence)
            && !flags.subtracting([.userPresence, .applicationPassword, .privateKeyUsage]).isEmpty
        {
            throw KeychainError(
                .errSecParam,
                ".userPresence already means biometry or passcode and combines only with .applicationPassword and "
                    + ".privateKeyUsage; combine .biometryAny, .biometryCurrentSet and .devicePasscode with .or/.and "
                    + "instead"
            )
        }
        self.protection = protection
        self.flags = flags
    }

    /// True when reading the data needs an authentication (a constraint or the app password).
    public var requiresAuthentication: Bool {
        !flags.intersection([.userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .applicationPassword])
            .isEmpty
    }

    /// True when the item is tied to the fingers enrolled at its creation.
    public var requiresCurrentBiometrySet: Bool { flags.contains(.biometryCurrentSet) }

    /// The factors that satisfy the item: any one of them (`all` false) or every one.
    public var requiredFactors: (factors: Set<AuthenticationFactor>, all: Bool) {
        if flags.contains(.userPresence) { return ([.biometry, .passcode], false) }
        var factors = Set<AuthenticationFactor>()
        if !flags.intersection([.biometryAny, .biometryCurrentSet]).isEmpty { factors.insert(.biometry) }
        if flags.contains(.devicePasscode) { factors.insert(.passcode) }
        return (factors, !flags.contains(.or))
    }

    /// True when authentications by `factors` meet the constraints.
    public func isSatisfied(by factors: Set<AuthenticationFactor>) -> Bool {
        let (required, all) = requiredFactors
        if required.isEmpty { return true }
        return all ? required.isSubset(of: factors) : !required.isDisjoint(with: factors)
    }
}
