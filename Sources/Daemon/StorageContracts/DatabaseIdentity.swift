/// What a keychain database says of itself, as the store reads it without changing the file:
/// the keychain identity stamped into it and its commit generation. The Enclave checks it
/// against its own authenticated records before the database is used.
public struct DatabaseIdentity: Sendable, Hashable {
    /// The keychain identity stamped into the database; nil before the first stamp.
    public var keychainID: String?
    /// The number of write transactions committed; only grows.
    public var generation: UInt64
    /// How many items it holds.
    public var itemCount: Int

    /// Creates an identity.
    public init(keychainID: String?, generation: UInt64, itemCount: Int) {
        self.keychainID = keychainID
        self.generation = generation
        self.itemCount = itemCount
    }
}
