import KeychainProtocol

/// The keyed hashes of the store's row ledger (``RowLedgerAuthority``), made by the Enclave with
/// a key the store never holds: one for each (row identity, row version) pair, and one that seals
/// the set of all pairs to a commit generation.
public protocol RowLedgerAuthenticator: Sendable {
    /// The keyed hash of one row at one version (32 bytes).
    func pairTag(identity: [UInt8], version: Int64) -> [UInt8]
    /// The keyed hash binding the set of all pairs (`setHash`, the XOR of their pair tags) to
    /// the database's commit `generation` (32 bytes).
    func summaryTag(generation: UInt64, setHash: [UInt8]) -> [UInt8]
}

/// What the store asks of the Enclave to keep its row ledger: every row's version is bound into
/// its ciphertexts, and the ledger (the authenticated set of every row's identity and version,
/// sealed to the commit generation) tells a row written back from an older copy, or re-inserted
/// after its deletion, from the row the keychain last wrote.
public protocol RowLedgerAuthority: Sendable {
    /// The authenticator, available once the keychain's AfterFirstUnlock class key is.
    ///
    /// - Throws: `errSecInteractionNotAllowed` before the first unlock.
    func rowLedgerAuthenticator() throws(KeychainError) -> any RowLedgerAuthenticator
    /// True when the keybag records that the database carries a ledger, so that a database
    /// without one was tampered with. False only for a keychain made before ledgers existed,
    /// whose first write establishes it.
    func rowLedgerRequired() throws(KeychainError) -> Bool
    /// Records in the keybag that the database now carries a ledger.
    func recordRowLedgerEstablished() throws(KeychainError)
}
