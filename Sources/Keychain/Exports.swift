// The typed request and error types are part of this module's API (KeychainError, ItemClass,
// Accessibility, SecretBytes, …).
@_exported import KeychainProtocol
