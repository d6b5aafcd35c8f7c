/// How a keychain's device secret is kept (``KeychainRequest/keychainProtection``), as
/// `keychainctl status` shows it.
public struct KeychainProtection: Sendable, Hashable {
    /// The TPM that seals the device secret (its TCTI, `device:/dev/tpmrm0`); nil when the
    /// secret is a file of mode 0600, or no keychain exists yet.
    public var sealedBy: String?
    /// The NV index of the TPM counter that refuses older copies of the keychain's files.
    public var counterIndex: UInt32?
    /// That counter's value now; nil when it could not be read.
    public var counterValue: UInt64?

    /// Creates a description.
    public init(sealedBy: String?, counterIndex: UInt32?, counterValue: UInt64?) {
        self.sealedBy = sealedBy
        self.counterIndex = counterIndex
        self.counterValue = counterValue
    }
}
