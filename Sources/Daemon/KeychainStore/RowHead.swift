import Foundation
import KeychainProtocol
import StorageContracts

/// The index columns of one row, without its ciphertexts: what a search that answers with
/// references needs (``StoreTransaction/heads(_:)``). Checked against the row ledger like a
/// whole row. Its byte columns are read into ``ColumnBytes``: a search of thousands reads
/// thousands of heads.
public struct RowHead: Sendable, Hashable {
    /// SQLite's row id.
    public var id: Int64
    /// The item's permanent identity.
    public var identity: ColumnBytes
    /// The row's version, bound into its ciphertexts and kept in the row ledger.
    public var version: Int64
    /// The accessibility's raw value: which class key opens the row.
    public var accessibility: String
    /// Keyed hash of the access group name.
    public var accessGroupHash: ColumnBytes

    /// The columns ``init(_:)`` reads, in its order.
    static let selection = "items.id, items.identity, items.version, items.accessibility, items.accessGroupHash"

    /// The head `query` stands on, selected with ``selection``.
    ///
    /// - Throws: `errSecDecode` when a column does not hold the type the keychain writes.
    init(_ query: SQLiteQuery) throws(KeychainError) {
        id = try query.integer(0)
        identity = try query.columnBytes(1)
        version = try query.integer(2)
        accessibility = try query.text(3)
        accessGroupHash = try query.columnBytes(4)
    }
}
