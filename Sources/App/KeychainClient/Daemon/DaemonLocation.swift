import Foundation
import KeychainProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Where the `keychaind` executable is.
public enum DaemonLocation {
    /// `keychaind` beside this program (as the package builds and installs them), else the
    /// first on `PATH`.
    ///
    /// - Throws: `errSecIO` when there is none.
    public static func keychaind() throws(KeychainError) -> String {
        let beside = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("keychaind").path
        if access(beside, X_OK) == 0 { return beside }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where directory.hasPrefix("/") {
            let candidate = "\(directory)/keychaind"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw KeychainError(
            .errSecIO, "keychaind was not found beside this program or on PATH: install it beside keychainctl")
    }
}
