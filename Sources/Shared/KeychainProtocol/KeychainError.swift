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
    private static func code(_ status: Int32, _ message: String) -> KeychainError {
        KeychainError(status: status, message: message)
    }

    /// `errSecUnimplemented`: Function or operation not implemented.
    public static let errSecUnimplemented = code(-4, "Function or operation not implemented.")
    /// `errSecDiskFull`: The disk is full.
    public static let errSecDiskFull = code(-34, "The disk is full.")
    /// `errSecIO`: I/O error.
    public static let errSecIO = code(-36, "I/O error.")
    /// `errSecParam`: One or more parameters passed to a function were not valid.
    public static let errSecParam = code(-50, "One or more parameters passed to a function were not valid.")
    /// `errSecAllocate`: Failed to allocate memory.
    public static let errSecAllocate = code(-108, "Failed to allocate memory.")
    /// `errSecUserCanceled`: User canceled the operation.
    public static let errSecUserCanceled = code(-128, "User canceled the operation.")
    /// `errSecBadReq`: Bad parameter or invalid state for operation.
    public static let errSecBadReq = code(-909, "Bad parameter or invalid state for operation.")
    /// `errSecInternalComponent`: An internal component failed.
    public static let errSecInternalComponent = code(-2070, "An internal component failed.")
    /// `errSecMissingEntitlement`: A required entitlement isn't present.
    public static let errSecMissingEntitlement = code(-34018, "A required entitlement isn't present.")
    /// `errSecNotAvailable`: No keychain is available.
    public static let errSecNotAvailable = code(-25291, "No keychain is available.")
    /// `errSecReadOnly`: This keychain cannot be modified.
    public static let errSecReadOnly = code(-25292, "This keychain cannot be modified.")
    /// `errSecAuthFailed`: The user name or passphrase you entered is not correct.
    public static let errSecAuthFailed = code(-25293, "The user name or passphrase you entered is not correct.")
    /// `errSecNoSuchKeychain`: The specified keychain could not be found.
    public static let errSecNoSuchKeychain = code(-25294, "The specified keychain could not be found.")
    /// `errSecInvalidKeychain`: The specified keychain is not a valid keychain file.
    public static let errSecInvalidKeychain = code(-25295, "The specified keychain is not a valid keychain file.")
    /// `errSecDuplicateItem`: The specified item already exists in the keychain.
    public static let errSecDuplicateItem = code(-25299, "The specified item already exists in the keychain.")
    /// `errSecItemNotFound`: The specified item could not be found in the keychain.
    public static let errSecItemNotFound = code(-25300, "The specified item could not be found in the keychain.")
    /// `errSecDataTooLarge`: This item contains information which is too large or in a format that cannot be displayed.
    public static let errSecDataTooLarge = code(
        -25302, "This item contains information which is too large or in a format that cannot be displayed.")
    /// `errSecNoSuchAttr`: The specified attribute does not exist.
    public static let errSecNoSuchAttr = code(-25303, "The specified attribute does not exist.")
    /// `errSecNoSuchClass`: The specified item does not appear to be a valid keychain item.
    public static let errSecNoSuchClass = code(
        -25306, "The specified item does not appear to be a valid keychain item.")
    /// `errSecInteractionNotAllowed`: User interaction is not allowed.
    public static let errSecInteractionNotAllowed = code(-25308, "User interaction is not allowed.")
    /// `errSecReadOnlyAttr`: The specified attribute could not be modified.
    public static let errSecReadOnlyAttr = code(-25309, "The specified attribute could not be modified.")
    /// `errSecDecode`: Unable to decode the provided data.
    public static let errSecDecode = code(-26275, "Unable to decode the provided data.")
    /// `errSecVerifyFailed`: A cryptographic verification failure has occurred.
    public static let errSecVerifyFailed = code(-67808, "A cryptographic verification failure has occurred.")

    /// Every code this package can return, for lookups by number.
    public static let known: [KeychainError] = [
        errSecUnimplemented, errSecDiskFull, errSecIO, errSecParam, errSecAllocate, errSecUserCanceled,
        errSecBadReq, errSecInternalComponent, errSecMissingEntitlement, errSecNotAvailable, errSecReadOnly,
        errSecAuthFailed, errSecNoSuchKeychain, errSecInvalidKeychain, errSecDuplicateItem, errSecItemNotFound,
        errSecDataTooLarge, errSecNoSuchAttr,
        errSecNoSuchClass, errSecInteractionNotAllowed, errSecReadOnlyAttr, errSecDecode, errSecVerifyFailed,
    ]

    /// Pairs, searched in order, not a dictionary: building an `[Int32: String]` checks at run
    /// time that `Int32` is `Hashable`, and the first such check in a process searches every
    /// protocol conformance of the program (536,000 instructions in the statically linked
    /// keychainctl, a fifth of a lookup that finds nothing and prints its error).
    private static let names: KeyValuePairs<Int32, String> = [
        0: "errSecSuccess", -4: "errSecUnimplemented", -34: "errSecDiskFull", -36: "errSecIO",
        -50: "errSecParam", -108: "errSecAllocate", -128: "errSecUserCanceled", -909: "errSecBadReq",
        -2070: "errSecInternalComponent", -34018: "errSecMissingEntitlement", -25291: "errSecNotAvailable",
        -25292: "errSecReadOnly", -25293: "errSecAuthFailed", -25294: "errSecNoSuchKeychain",
        -25295: "errSecInvalidKeychain", -25299: "errSecDuplicateItem",
        -25300: "errSecItemNotFound", -25302: "errSecDataTooLarge", -25303: "errSecNoSuchAttr",
        -25306: "errSecNoSuchClass", -25308: "errSecInteractionNotAllowed", -25309: "errSecReadOnlyAttr",
        -26275: "errSecDecode", -67808: "errSecVerifyFailed",
    ]

    /// Apple's constant name for a status (`errSecItemNotFound`), or `OSStatus n` when unknown.
    public static func name(of status: Int32) -> String {
        names.first { $0.key == status }?.value ?? "OSStatus \(status)"
    }

    /// Apple's generic sentence for a status, as `SecCopyErrorMessageString` returns it.
    public static func standardMessage(for status: Int32) -> String? {
        if status == 0 { return "No error." }
        return known.first { $0.status == status }?.message
    }
}
