/// The polkit rule that lets the system daemon verify a user's finger through fprintd
/// (`keychainctl daemon install --system` writes it to ``directory``).
///
/// fprintd verifies the user its caller runs as. The system daemon runs as ``KeychainPaths/systemUserName``
/// and asks for the finger of the user who sent the request, which fprintd allows only with
/// `net.reactivated.fprint.device.setusername`. fprintd also checks
/// `net.reactivated.fprint.device.verify` on every `Claim`, `VerifyStart` and
/// `ListEnrolledFingers`, and polkit gives it by default to the active session's user only,
/// which a system daemon never is. So the rule gives the daemon's user exactly those two
/// actions, and nothing else: not `net.reactivated.fprint.device.enroll`, so the daemon can
/// neither enroll nor delete anybody's prints (each user enrolls their own, with
/// `fprintd-enroll`, in their session).
///
/// A compromised daemon could, with these rights, start a verification for any user, which
/// waits for that user's touch on the reader; it learns nothing but a match or not.
public enum FingerprintPolkitRule {
    /// Where polkit reads the rules an administrator adds.
    public static let directory = "/etc/polkit-1/rules.d"
    /// The rule file's name: polkit runs rules in file-name order, 50 being the default's.
    public static let fileName = "50-keychaind-fprintd.rules"
    /// The rule, in polkit's JavaScript.
    public static let text = """
        // swift-keychain: the system keychain daemon (user \(KeychainPaths.systemUserName)) verifies the finger
        // of the user whose request it serves. It may verify (for another user, too) and do
        // nothing else with fprintd: no enrollment, no deletion.
        polkit.addRule(function(action, subject) {
            if (subject.user == "\(KeychainPaths.systemUserName)" &&
                (action.id == "net.reactivated.fprint.device.setusername" ||
                 action.id == "net.reactivated.fprint.device.verify")) {
                return polkit.Result.YES;
            }
        });

        """
}
