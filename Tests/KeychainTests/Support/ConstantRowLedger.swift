import KeychainProtocol
import StorageContracts

/// A row ledger authority that needs no key: its tags are constant. For store tests that look
/// at statements, plans and rows, not at the ledger.
struct ConstantRowLedger: RowLedgerAuthority, RowLedgerAuthenticator {
    func rowLedgerAuthenticator() throws(KeychainError) -> any RowLedgerAuthenticator { self }
    func rowLedgerRequired() throws(KeychainError) -> Bool { false }
    func recordRowLedgerEstablished() throws(KeychainError) {}
    func pairTag(identity: [UInt8], version: Int64) -> [UInt8] { [UInt8](repeating: 0, count: 32) }
    func summaryTag(generation: UInt64, setHash: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: 32) }
}
