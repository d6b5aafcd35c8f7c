/// An error from the keychain, carrying Apple's `OSStatus` code.
///
/// The code is the contract; the message is for people and its wording may change. A message
/// never contains a secret or an attribute value: it names the item class and the attributes
/// involved and says what to do.
///
/// Codes match in `catch` clauses:
///
/// ```swift
/// do {
///     try keychain.set("hunter2", key: "api-token")
/// } catch KeychainError.errSecInteractionNotAllowed {
///     // the keychain is locked
/// }
/// ```
///
/// New codes are additive: this is a struct, not a closed enum.
public struct KeychainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Apple's `OSStatus` value (for example -25300 for `errSecItemNotFound`).
    public var status: Int32
    /// What happened, to what, and what to do. Never contains secrets or attribute values.
    public var message: String
    /// Set when the call needs the device owner to authenticate first: the access control to
    /// satisfy. A client that may prompt authenticates and retries with the grants; one that may
    /// not returns the error (errSecInteractionNotAllowed).
    public var requiredAuthentication: AccessControl?

    /// Creates an error with a status code and a message.
    public init(status: Int32, message: String, requiredAuthentication: AccessControl? = nil) {
        self.status = status
        self.message = message
        self.requiredAuthentication = requiredAuthentication
    }

    /// Creates an error from one of the static codes, with a message.
    public init(_ code: KeychainError, _ message: String) {
        self.init(status: code.status, message: message)
    }

    /// `errSecXxx (-n): message`.
    public var description: String {
        "\(KeychainError.name(of: status)) (\(status)): \(message)"
    }

    /// Two errors are equal when their codes are; messages are informative only.
    public static func == (lhs: KeychainError, rhs: KeychainError) -> Bool { lhs.status == rhs.status }
    public func hash(into hasher: inout Hasher) { hasher.combine(status) }

    /// Lets `catch KeychainError.errSecItemNotFound` match any error with that code.
    public static func ~= (pattern: KeychainError, value: any Error) -> Bool {
        (value as? KeychainError)?.status == pattern.status
    }
}

extension KeychainError {
    /// The error for `status` with Apple's sentence for it (``standardMessage(for:)``).
    private static func code(_ status: Int32) -> KeychainError {
        KeychainError(status: status, message: standardMessage(for: status) ?? "OSStatus \(status)")
    }

    /// `errSecUnimplemented`: Function or operation not implemented.
    public static let errSecUnimplemented = code(-4)
    /// `errSecDiskFull`: The disk is full.
    public static let errSecDiskFull = code(-34)
    /// `errSecIO`: I/O error.
    public static let errSecIO = code(-36)
    /// `errSecParam`: One or more parameters passed to a function were not valid.
    public static let errSecParam = code(-50)
    /// `errSecAllocate`: Failed to allocate memory.
    public static let errSecAllocate = code(-108)
    /// `errSecUserCanceled`: User canceled the operation.
    public static let errSecUserCanceled = code(-128)
    /// `errSecBadReq`: Bad parameter or invalid state for operation.
    public static let errSecBadReq = code(-909)
    /// `errSecInternalComponent`: An internal component failed.
    public static let errSecInternalComponent = code(-2070)
    /// `errSecMissingEntitlement`: A required entitlement isn't present.
    public static let errSecMissingEntitlement = code(-34018)
    /// `errSecNotAvailable`: No keychain is available.
    public static let errSecNotAvailable = code(-25291)
    /// `errSecReadOnly`: This keychain cannot be modified.
    public static let errSecReadOnly = code(-25292)
    /// `errSecAuthFailed`: The user name or passphrase you entered is not correct.
    public static let errSecAuthFailed = code(-25293)
    /// `errSecNoSuchKeychain`: The specified keychain could not be found.
    public static let errSecNoSuchKeychain = code(-25294)
    /// `errSecInvalidKeychain`: The specified keychain is not a valid keychain file.
    public static let errSecInvalidKeychain = code(-25295)
    /// `errSecDuplicateItem`: The specified item already exists in the keychain.
    public static let errSecDuplicateItem = code(-25299)
    /// `errSecItemNotFound`: The specified item could not be found in the keychain.
    public static let errSecItemNotFound = code(-25300)
    /// `errSecDataTooLarge`: This item contains information which is too large or in a format that cannot be displayed.
    public static let errSecDataTooLarge = code(-25302)
    /// `errSecNoSuchAttr`: The specified attribute does not exist.
    public static let errSecNoSuchAttr = code(-25303)
    /// `errSecNoSuchClass`: The specified item does not appear to be a valid keychain item.
    public static let errSecNoSuchClass = code(-25306)
    /// `errSecInteractionNotAllowed`: User interaction is not allowed.
    public static let errSecInteractionNotAllowed = code(-25308)
    /// `errSecReadOnlyAttr`: The specified attribute could not be modified.
    public static let errSecReadOnlyAttr = code(-25309)
    /// `errSecDecode`: Unable to decode the provided data.
    public static let errSecDecode = code(-26275)
    /// `errSecVerifyFailed`: A cryptographic verification failure has occurred.
    public static let errSecVerifyFailed = code(-67808)

    /// Every code this package can return (every code `SecBase.h` declares is named and explained
    /// by ``SecurityStatusTable``).
    public static let known: [KeychainError] = [
        errSecUnimplemented, errSecDiskFull, errSecIO, errSecParam, errSecAllocate, errSecUserCanceled,
        errSecBadReq, errSecInternalComponent, errSecMissingEntitlement, errSecNotAvailable, errSecReadOnly,
        errSecAuthFailed, errSecNoSuchKeychain, errSecInvalidKeychain, errSecDuplicateItem, errSecItemNotFound,
        errSecDataTooLarge, errSecNoSuchAttr,
        errSecNoSuchClass, errSecInteractionNotAllowed, errSecReadOnlyAttr, errSecDecode, errSecVerifyFailed,
    ]

    /// Apple's constant name for a status (`errSecItemNotFound`), or `OSStatus n` when unknown.
    public static func name(of status: Int32) -> String {
        SecurityStatusTable.entry(for: status)?.name ?? "OSStatus \(status)"
    }

    /// Apple's generic sentence for a status, as `SecCopyErrorMessageString` returns it; nil for a
    /// number `SecBase.h` does not declare.
    public static func standardMessage(for status: Int32) -> String? {
        SecurityStatusTable.entry(for: status)?.message
    }
}
