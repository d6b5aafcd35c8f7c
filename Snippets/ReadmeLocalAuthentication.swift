import Foundation
import LocalAuthentication

let context = LAContext()
var error: NSError?
if context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error) {
    // A command-line program waits for the reply before it returns from main: the async form
    // (or a DispatchSemaphore signalled in the reply closure of the other form).
    do {
        try await context.evaluatePolicy(
            .deviceOwnerAuthenticationWithBiometrics, localizedReason: "To add a new chore")
        print("authenticated: go ahead")
    } catch LAError.userFallback {
        print("the user chose the fallback: offer the app's own")
    } catch {
        print("not authenticated: \(error)")
    }
} else if LAError.Code(rawValue: error?.code ?? 0) == .biometryNotEnrolled {
    print("no finger is enrolled")
} else {
    print("biometry is not available: \(error?.localizedDescription ?? "")")
}
