/// How long the Enclave refuses passcode attempts after consecutive failures.
///
/// Apple's table (Platform Security guide, "Passcodes and passwords"; confirmed only through a
/// third-party copy): attempts 1–4 no delay, 5: 1 minute, 6: 5 minutes, 7–8: 15 minutes, 9 and
/// more: 1 hour.
public enum PasscodeDelay {
    /// Seconds to wait after `failures` consecutive failed attempts.
    public static func seconds(afterFailures failures: Int) -> Double {
        switch failures {
        case ..<5: 0
        case 5: 60
        case 6: 300
        case 7, 8: 900
        default: 3600
        }
    }
}
