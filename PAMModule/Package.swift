// swift-tools-version:6.2
import PackageDescription

// The PAM module (Docs/PAM.md): logging in unlocks the keychain. It is loaded into login, sshd,
// su and display managers, so it is C and loads no Swift runtime: it runs keychainctl for
// everything else.
//
// It is a package of its own because of how swiftc links: every product gets the Swift
// runtime's start file (swiftrt.o) and libswiftCore, which this one must not load, and leaving
// them out takes linker flags (-nostartfiles; -static-stdlib, from which nothing is then
// taken). In swift-keychain's package those flags would reach its snippets too, which SwiftPM
// links with every library target of the package, and which need both.
//
//     swift build -c release --package-path PAMModule
//     readelf -d PAMModule/.build/release/libpam_keychain.so
//
// readelf lists libpam and libc, and libstdc++ and libm, which -static-stdlib names and the
// module never calls; no libswiftCore.
let package = Package(
    name: "pam_keychain",
    products: [.library(name: "pam_keychain", type: .dynamic, targets: ["pam_keychain"])],
    targets: [
        .target(
            name: "pam_keychain", publicHeadersPath: ".",
            cSettings: [.unsafeFlags(["-fvisibility=hidden", "-Wall", "-Wextra", "-Werror"])],
            linkerSettings: [.linkedLibrary("pam"), .unsafeFlags(["-nostartfiles", "-static-stdlib"])])
    ]
)
