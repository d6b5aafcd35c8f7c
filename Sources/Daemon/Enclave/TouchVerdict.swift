/// What the Enclave made of one touch: a match earns a grant, which the server keeps under the
/// authentication context that waited for the touch; a miss is counted toward the lockout.
public enum TouchVerdict: Sendable {
    /// The touch matched an enrolled finger.
    case matched(AuthenticationGrant)
    /// The touch matched no enrolled finger.
    case notMatched
}
