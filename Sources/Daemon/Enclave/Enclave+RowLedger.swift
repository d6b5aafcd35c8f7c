import Crypto
import Foundation
import KeychainProtocol
import StorageContracts

/// The keyed hashes of the store's row ledger. The key derives from the AfterFirstUnlock class
/// key, as the index hashes' does: with a passcode set, nobody without it (a copied disk, a
/// backup) can forge a ledger for rows they wrote back; and it never leaves this value.
///
/// The HMAC is keyed once (``ClassKeySet/rowLedger``) and each tag starts from a copy of that
/// keyed state, so a write does not pad and hash the key again for every row it records.
struct RowLedgerMAC: RowLedgerAuthenticator {
    private let keyed: HMAC<SHA256>

    /// - Parameter key: the ledger key, derived from the AfterFirstUnlock class key.
    init(key: SymmetricKey) {
        keyed = HMAC<SHA256>(key: key)
    }

    func pairTag(identity: [UInt8], version: Int64) -> [UInt8] {
        var hmac = keyed
        hmac.update(data: [1])
        hmac.update(data: identity)
        hmac.update(data: withUnsafeBytes(of: UInt64(bitPattern: version).bigEndian) { Array($0) })
        return Array(hmac.finalize())
    }

    func summaryTag(generation: UInt64, setHash: [UInt8]) -> [UInt8] {
        var hmac = keyed
        hmac.update(data: [2])
        hmac.update(data: withUnsafeBytes(of: generation.bigEndian) { Array($0) })
        hmac.update(data: setHash)
        return Array(hmac.finalize())
    }
}

extension Enclave: RowLedgerAuthority {
    public func rowLedgerAuthenticator() throws(KeychainError) -> any RowLedgerAuthenticator {
        try classKeys(.afterFirstUnlock).rowLedger
    }

    public func rowLedgerRequired() throws(KeychainError) -> Bool {
        try keybag().rowLedger == true
    }

    public func recordRowLedgerEstablished() throws(KeychainError) {
        try withStateLock { () throws(KeychainError) in
            var keybag = try keybag()
            guard keybag.rowLedger != true else { return }
            keybag.rowLedger = true
            try save(keybag)
        }
    }
}
