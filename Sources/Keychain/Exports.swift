// The typed API (KeychainError, ItemClass, Accessibility, SecretBytes, transports) and the
// LocalAuthentication types that keychain calls take (`kSecUseAuthenticationContext`).
@_exported import KeychainClient
@_exported import KeychainProtocol
@_exported import LocalAuth
