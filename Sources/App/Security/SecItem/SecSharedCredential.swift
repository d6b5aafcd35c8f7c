import Foundation
import KeychainProtocol

// Shared web credentials (SecSharedCredential.h): passwords an app shares with Safari for the
// domains in its `com.apple.developer.associated-domains` entitlement. Linux has no associated
// domains, so no app is entitled: the calls compile and answer as iOS answers an app without
// the entitlement.

/// The key of the password in each dictionary `SecRequestSharedWebCredential` returns.
nonisolated(unsafe) public let kSecSharedPassword: CFString = "spwd"

/// Stores, updates or (with a nil password) removes a shared password for a website.
///
/// No app has an associated-domains entitlement on Linux, so `completionHandler` gets the error
/// iOS gives an app without one: domain `NSOSStatusErrorDomain`, code `errSecMissingEntitlement`
/// (-34018). UNCONFIRMED: Apple documents neither the code for this case nor when the handler
/// runs; iOS calls it later on another queue, this calls it before returning.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/secaddsharedwebcredential(_:_:_:_:)>
public func SecAddSharedWebCredential(
    _ fqdn: CFString, _ account: CFString, _ password: CFString?, _ completionHandler: (CFError?) -> Void
) {
    completionHandler(osStatusError(missingAssociatedDomain(fqdn)))
}

/// Asks for the shared passwords of a website.
///
/// Answers as ``SecAddSharedWebCredential(_:_:_:_:)`` does: no credentials and the
/// `errSecMissingEntitlement` error, before returning.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/secrequestsharedwebcredential(_:_:_:)>
public func SecRequestSharedWebCredential(
    _ fqdn: CFString?, _ account: CFString?, _ completionHandler: (CFArray?, CFError?) -> Void
) {
    completionHandler(NSArray(), osStatusError(missingAssociatedDomain(fqdn)))
}

/// A random password in Safari's form `xxx-xxx-xxx-xxx`: each `x` from
/// `abcdefghkmnopqrstuvwxy`, `ABCDEFGHJKLMNPQRSTUVWXYZ` or `3456789` (no look-alikes), with at
/// least one character from each set, as Apple documents.
///
/// Apple documentation: <https://developer.apple.com/documentation/security/seccreatesharedwebcredentialpassword()>
@discardableResult
public func SecCreateSharedWebCredentialPassword() -> CFString? {
    let sets = [Array("abcdefghkmnopqrstuvwxy"), Array("ABCDEFGHJKLMNPQRSTUVWXYZ"), Array("3456789")]
    let alphabet = sets.flatMap { $0 }
    var generator = SystemRandomNumberGenerator()
    while true {
        let characters = (0..<12).map { _ in alphabet.randomElement(using: &generator)! }
        guard sets.allSatisfy({ set in characters.contains(where: set.contains) }) else { continue }
        let groups = stride(from: 0, to: 12, by: 3).map { String(characters[$0..<$0 + 3]) }
        return groups.joined(separator: "-") as NSString
    }
}

private func missingAssociatedDomain(_ fqdn: CFString?) -> KeychainError {
    let domain = fqdn.map { " for \($0)" } ?? ""
    return KeychainError(
        .errSecMissingEntitlement,
        "shared web credentials\(domain) need the com.apple.developer.associated-domains entitlement, which no app "
            + "has on Linux"
    )
}
