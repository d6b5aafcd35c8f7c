// Apple's API (`Security`, `LocalAuthentication`), the typed API (KeychainError, ItemClass,
// Accessibility, SecretBytes, transports) and the facade, in one import.
@_exported import KeychainClient
@_exported import KeychainProtocol
@_exported import LocalAuthentication
@_exported import Security
