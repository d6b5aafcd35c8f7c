// Typed requests, replies and errors are part of the client API.
@_exported import KeychainProtocol
