import Foundation
import KeychainProtocol

/// Proof, issued by the Enclave, that the device owner just authenticated with one factor.
///
/// Grants never leave the keychain server: it keeps them under the authentication context the
/// evaluation named (``KeychainProtocol/AuthenticationContextID``), bound to the caller's
/// connection, and presents them to the Enclave when a request names that context. The Enclave
/// checks the tag, the boot and the age (at most 300 s) before it unwraps anything. A client
/// that skipped the prompt has no grant and gets no secret (DESIGN.md, "keys, grants and
/// touches never leave it"). Outside the Enclave a grant is opaque: it is carried and handed
/// back, never read or made.
public struct AuthenticationGrant: Sendable, Hashable, Codable {
    /// What was proven.
    let factor: AuthenticationFactor
    /// For biometry: the enrolled set it matched against (biometryCurrentSet items compare it).
    let domainState: Data?
    /// The boot it was issued in.
    let bootID: String
    /// Boot-clock time of issue.
    let issuedAt: Double
    /// Random, so no two grants are alike.
    let nonce: Data
    /// The Enclave's MAC over everything above.
    let tag: Data

    /// Creates a grant from its parts (the Enclave does this).
    init(factor: AuthenticationFactor, domainState: Data?, bootID: String, issuedAt: Double, nonce: Data, tag: Data) {
        self.factor = factor
        self.domainState = domainState
        self.bootID = bootID
        self.issuedAt = issuedAt
        self.nonce = nonce
        self.tag = tag
    }

    /// The bytes the tag covers.
    var taggedBytes: Data {
        LengthPrefixed.encode(
            label: "grant v1",
            [
                Data(factor.rawValue.utf8), domainState ?? Data(), Data(bootID.utf8),
                withUnsafeBytes(of: issuedAt.bitPattern.bigEndian) { Data($0) }, nonce,
            ])
    }
}
