import Foundation
import GRDB
import GRDBSQLite
import KeychainProtocol
import StorageContracts

/// One use of a prepared statement: its arguments bound, its rows stepped through and read by
/// column. The caller resets it when done (``reset()``), which also clears the arguments.
///
/// Columns are read strictly by type: the database file is not trusted, and a value of another
/// type where the schema says otherwise (which only an altered file holds) is `errSecDecode`,
/// never a crash or a conversion.
struct SQLiteQuery {
    let statement: OpaquePointer
    /// Arguments are bound from 1.
    private var nextArgument: Int32 = 1

    init(_ statement: OpaquePointer) {
        self.statement = statement
    }

    /// SQLite copies what is bound (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    mutating func bind(_ bytes: Data) {
        let index = nextArgument
        nextArgument += 1
        bytes.withUnsafeBytes { buffer in
            if let base = buffer.baseAddress, !buffer.isEmpty {
                _ = sqlite3_bind_blob(statement, index, base, Int32(buffer.count), Self.transient)
            } else {
                _ = sqlite3_bind_zeroblob(statement, index, 0)
            }
        }
    }

    mutating func bind(_ text: String) {
        let index = nextArgument
        nextArgument += 1
        _ = sqlite3_bind_text(statement, index, text, -1, Self.transient)
    }

    mutating func bind(_ value: Int64) {
        let index = nextArgument
        nextArgument += 1
        _ = sqlite3_bind_int64(statement, index, value)
    }

    /// Steps to the next row: true when there is one.
    func next() throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw Self.error(code, sqlite3_db_handle(statement))
        }
    }

    /// Resets the statement and clears its arguments, ready for its next use.
    func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    func integer(_ column: Int32) throws(KeychainError) -> Int64 {
        guard sqlite3_column_type(statement, column) == SQLITE_INTEGER else { throw Self.altered(column, "an integer") }
        return sqlite3_column_int64(statement, column)
    }

    func blob(_ column: Int32) throws(KeychainError) -> Data {
        guard sqlite3_column_type(statement, column) == SQLITE_BLOB else { throw Self.altered(column, "bytes") }
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    /// A short blob column (a row's identity, a keyed hash), read without an allocation.
    ///
    /// - Throws: `errSecDecode` for another type, or more bytes than the keychain writes there.
    func columnBytes(_ column: Int32) throws(KeychainError) -> ColumnBytes {
        guard sqlite3_column_type(statement, column) == SQLITE_BLOB else { throw Self.altered(column, "bytes") }
        let count = Int(sqlite3_column_bytes(statement, column))
        // SQLite answers NULL for an empty blob (and when out of memory): read as no bytes, as
        // `blob(_:)` does, never as a buffer of `count` bytes at no address.
        guard count > 0, let start = sqlite3_column_blob(statement, column) else { return ColumnBytes.empty }
        guard let bytes = ColumnBytes(UnsafeRawBufferPointer(start: start, count: count)) else {
            throw Self.altered(column, "at most \(ColumnBytes.capacity) bytes")
        }
        return bytes
    }

    func optionalBlob(_ column: Int32) throws(KeychainError) -> Data? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : try blob(column)
    }

    func text(_ column: Int32) throws(KeychainError) -> String {
        guard sqlite3_column_type(statement, column) == SQLITE_TEXT else { throw Self.altered(column, "text") }
        return convertedText(column) ?? ""
    }

    /// The column as text, whatever its type (SQLite converts a number); nil for NULL.
    func convertedText(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(statement, column) else { return nil }
        return String(
            decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column))),
            as: UTF8.self)
    }

    private static func altered(_ column: Int32, _ expected: String) -> KeychainError {
        KeychainError(
            .errSecDecode,
            "a keychain database column (\(column)) does not hold \(expected) as the keychain writes it: the "
                + "database was altered; nothing was returned"
        )
    }

    /// GRDB's error for an SQLite result code, so that ``KeychainStore`` maps it as any other.
    static func error(_ code: Int32, _ connection: OpaquePointer?) -> DatabaseError {
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
    }
}
