// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "swift-keychain",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Keychain", targets: ["Keychain"]),
        .library(name: "Security", targets: ["Security"]),
        .library(name: "LocalAuthentication", targets: ["LocalAuthentication"]),
        .executable(name: "keychainctl", targets: ["keychainctl"]),
        .executable(name: "chores", targets: ["chores"]),
        .executable(name: "keychaind", targets: ["keychaind"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // Certificates (SecCertificate): X.509 parsing and DER.
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.0"),
        // The benchmark suite only (Benchmarks/); the malloc interposer counts allocations.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        // What Swift cannot call by itself: variadic syscalls (kernel keyring), prctl, and glibc calls behind _GNU_SOURCE (pipe2, closefrom for spawn).
        .target(name: "CKeychainSupport"),
        // keychaind's first steps, before any thread: its capabilities and its seccomp filter
        // (libseccomp, libseccomp-dev to build).
        .target(name: "CKeychaindStartup", linkerSettings: [.linkedLibrary("seccomp")]),
        // libdbus: keychaind follows logind's session locks on the system bus.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // Typed requests, replies, attribute values and errors shared by client and server.
        .target(name: "KeychainProtocol", swiftSettings: strict),
        // The only code that touches key material.
        .target(
            name: "Enclave",
            dependencies: [
                "KeychainProtocol", "CKeychainSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // Sealed rows in SQLite. Never depends on Enclave: the store never sees a key.
        .target(
            name: "KeychainStore",
            dependencies: ["KeychainProtocol", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift")],
            swiftSettings: strict),
        // Fingerprint sensors behind one protocol: simulated, and fprintd (loaded at run time).
        .target(name: "Biometrics", dependencies: ["KeychainProtocol"], swiftSettings: strict),
        // SecItem semantics for one caller identity, on Store + Enclave.
        .target(
            name: "KeychainServer",
            dependencies: ["KeychainProtocol", "Enclave", "KeychainStore", "Biometrics", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        // How a program reaches the keychain: the transport protocol, the embedded transport,
        // device administration.
        .target(name: "KeychainClient", dependencies: ["KeychainProtocol", "KeychainServer", "CKeychainSupport"], swiftSettings: strict),
        // keychaind's server side: the socket, the caller's identity from the kernel, one
        // KeychainServer for every app. Holds the keys; apps never link it. Its connections are
        // read with recvmsg, not SwiftNIO: every request's writer comes with it from the kernel
        // (SCM_CREDENTIALS), which NIO's stream channels do not pass on.
        // A server's Unix socket read with recvmsg: every frame's writer from the kernel
        // (SCM_CREDENTIALS), one thread per connection. keychaind and the ssh-agent serve with it.
        .target(name: "ProcessBoundSockets", dependencies: ["CKeychainSupport"], swiftSettings: strict),
        .target(
            name: "KeychainDaemon",
            dependencies: [
                "KeychainProtocol", "KeychainServer", "Enclave", "CKeychainSupport", "CDBus", "ProcessBoundSockets",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "keychaind",
            dependencies: ["KeychainDaemon", "CKeychaindStartup", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict),
        // PKCS #12's legacy 3DES and RC2 encryption, which swift-crypto lacks: OpenSSL's libcrypto
        // with its legacy provider, behind one C function (SecPKCS12Import). Built against its
        // headers (libssl-dev); the library is loaded when the first legacy file is decrypted.
        .target(name: "CPKCS12Legacy"),
        // Apple's API under Apple's module name, so that iOS code compiles with its imports
        // unchanged: SecItem*, kSec* constants, SecAccessControl, CF types. Apple's names only.
        .target(
            name: "Security",
            dependencies: [
                "KeychainProtocol", "KeychainClient", "LocalAuthentication", "Enclave", "CPKCS12Legacy",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // One import for everything: Security, LocalAuthentication, the typed API and the facade.
        .target(
            name: "Keychain",
            dependencies: ["KeychainProtocol", "KeychainClient", "KeychainPrompt", "LocalAuthentication", "Security"],
            swiftSettings: strict),
        // LocalAuthentication: LAContext under Apple's module name, Apple's names only; the rules
        // stay in the Enclave.
        .target(name: "LocalAuthentication", dependencies: ["KeychainClient", "KeychainPrompt"], swiftSettings: strict),
        // The sheet LAContext draws (on the terminal by default) and the protocol to draw it
        // otherwise: this package's names, apart from Apple's.
        .target(name: "KeychainPrompt", dependencies: ["KeychainProtocol", "CKeychainSupport"], swiftSettings: strict),
        .executableTarget(
            name: "keychainctl",
            dependencies: ["Keychain", "KeychainSSH", "LocalAuthentication", "Enclave", "CKeychainSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict,
            // keychainctl is a short process that a shell or git starts for one lookup, so its
            // start is most of its time (Benchmarks/README.md). On Linux:
            // - With --static-swift-stdlib the toolchain exports every symbol of the program (for
            //   Swift libraries it might load, which keychainctl never does), and the Swift
            //   runtime's search for its crash backtracer then reads all 27,706 of them at every
            //   start: a seventh of a whole lookup's instructions (--no-export-dynamic).
            // - SQLite and libstdc++ come from their static archives (Linking/keychainctl holds
            //   the two linker scripts that say so): Debian builds both shared libraries with
            //   immediate binding, and resolving their 3,200 symbols was half of a whole lookup's
            //   instructions. GCC's unwinder comes from its archive too (-static-libgcc): one
            //   library fewer to load (38,000 instructions).
            // - The program's 113,000 relative relocations are packed (DT_RELR, glibc 2.36 and
            //   later), which lld writes and the toolchain's default linker (gold) does not.
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-use-ld=lld", "-L", "\(Context.packageDirectory)/Linking/keychainctl",
                        "-Xclang-linker", "-static-libgcc", "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker",
                        "pack-relative-relocs",
                    ], .when(platforms: [.linux])),
            ]),
        // The guide's walkthrough app: a chore list where changes need the device owner.
        .executableTarget(name: "chores", dependencies: ["Keychain", "CKeychainSupport"], swiftSettings: strict),
        // An ssh-agent on Enclave keys (`keychainctl ssh-agent`): the OpenSSH agent protocol,
        // its SSH encodings, and the keys kept in the keychain.
        .target(
            name: "KeychainSSH",
            dependencies: [
                "Keychain", "ProcessBoundSockets", "CKeychainSupport", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict),
        // The wire decoders under libFuzzer (README, "Fuzzing the wire decoders"); without it,
        // a replayer of saved inputs.
        .executableTarget(name: "wire-fuzzer", dependencies: ["KeychainProtocol"], swiftSettings: strict),
        // The benchmark suite (Benchmarks/README.md): `swift package --disable-sandbox benchmark`.
        .executableTarget(
            name: "KeychainBenchmarks",
            dependencies: [
                "Keychain", "LocalAuthentication", "keychaind",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/KeychainBenchmarks",
            swiftSettings: strict,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        // One operation repeated under callgrind (Benchmarks/README.md).
        .executableTarget(name: "keychain-profile", dependencies: ["Keychain"], swiftSettings: strict),
        .testTarget(
            name: "KeychainTests",
            dependencies: [
                "Keychain", "KeychainServer", "Enclave", "KeychainStore", "KeychainProtocol", "KeychainPrompt", "LocalAuthentication", "Biometrics", "KeychainSSH",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // iOS-style keychain code (Tests/SourceCompatibility/Corpus) compiled in both language
        // modes and run by the end-to-end tests (SourceCompatibilityCorpusTests).
        .executableTarget(
            name: "source-compatibility-swift5", dependencies: ["Security", "LocalAuthentication", .product(name: "Crypto", package: "swift-crypto")], path: "Tests/SourceCompatibility/Swift5",
            swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(
            name: "source-compatibility-swift6", dependencies: ["Security", "LocalAuthentication", .product(name: "Crypto", package: "swift-crypto")], path: "Tests/SourceCompatibility/Swift6",
            swiftSettings: strict),
        .testTarget(
            name: "KeychainctlTests",
            dependencies: [
                "keychainctl", "chores", "keychaind", "KeychainBenchmarks", "KeychainDaemon", "Biometrics", "CKeychainSupport", "KeychainProtocol",
                "source-compatibility-swift5", "source-compatibility-swift6", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
    ]
)
