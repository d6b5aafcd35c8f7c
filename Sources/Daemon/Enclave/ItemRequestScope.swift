import KeychainProtocol
import Synchronization

/// The class keys one item request has looked up, so that a request opening a hundred rows
/// looks each class key up once instead of a hundred times (a keybag check, a key-cache read
/// and a comparison each), and the keybag it checked, so that a request using two classes
/// checks the keybag file once.
///
/// A lock that lands while a request runs takes effect at the next request, as for a request
/// that had finished a moment earlier; nothing outlives the request. Only item requests (add,
/// search, update, delete) run in a scope: they never change a class key.
final class ItemRequestScope: Sendable {
    @TaskLocal static var current: ItemRequestScope?

    private let keys = Mutex<[ScopeKey: ClassKeySet]>([:])
    private let keybags = Mutex<[ObjectIdentifier: Keybag]>([:])

    private struct ScopeKey: Hashable {
        let enclave: ObjectIdentifier
        let protectionClass: ProtectionClass
    }

    /// The keys of `protectionClass` in `enclave` already looked up in this request, else
    /// `lookUp()`'s, remembered.
    func keys(
        _ enclave: Enclave, _ protectionClass: ProtectionClass, lookUp: () throws(KeychainError) -> ClassKeySet
    ) throws(KeychainError) -> ClassKeySet {
        let key = ScopeKey(enclave: ObjectIdentifier(enclave), protectionClass: protectionClass)
        if let found = keys.withLock({ $0[key] }) { return found }
        let found = try lookUp()
        keys.withLock { $0[key] = found }
        return found
    }

    /// The keybag of `enclave` already checked in this request, else `check()`'s, remembered.
    func keybag(_ enclave: Enclave, check: () throws(KeychainError) -> Keybag) throws(KeychainError) -> Keybag {
        let key = ObjectIdentifier(enclave)
        if let found = keybags.withLock({ $0[key] }) { return found }
        let found = try check()
        keybags.withLock { $0[key] = found }
        return found
    }
}

extension Enclave {
    /// Runs one item request (add, search, update, delete) with its class keys looked up once
    /// each (``ItemRequestScope``).
    public func inItemRequest<Result>(_ body: () throws(KeychainError) -> Result) throws(KeychainError) -> Result {
        let outcome: Swift.Result<Result, KeychainError> = ItemRequestScope.$current.withValue(ItemRequestScope()) {
            do throws(KeychainError) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}
