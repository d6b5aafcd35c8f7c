// The idiom of key stores that report their own failures as a CFError, as Security's
// functions do (Auth0's DPoP key stores among them): CFErrorCreate with the OSStatus domain.
import Foundation
import Security

enum KeyStoreErrors {
    static func unimplemented() -> CFError {
        CFErrorCreate(nil, kCFErrorDomainOSStatus, CFIndex(errSecUnimplemented), nil)
    }

    /// The error reads back as Security's own: its domain, its code, and as a Swift `Error`.
    static func readBackAsSecuritysOwn() -> Bool {
        let error = unimplemented()
        let bridged = error as Error as NSError
        return CFErrorGetDomain(error) as String == kCFErrorDomainOSStatus as String
            && CFErrorGetCode(error) == CFIndex(errSecUnimplemented) && bridged.code == Int(errSecUnimplemented)
    }
}
