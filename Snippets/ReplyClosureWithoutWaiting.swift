// What the README warns against: a program that starts an evaluation with the reply closure and
// returns from main without waiting for it. The reply never comes, but the terminal the sheet
// had taken over is given back as it was (the sheet's guard restores it at exit).
import Foundation
import LocalAuthentication

let context = LAContext()
context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "To add a new chore") { success, _ in
    print(success ? "authenticated" : "not authenticated")
}
// Long enough for the sheet to be on the screen, then main returns with it open.
Thread.sleep(forTimeInterval: 1)
