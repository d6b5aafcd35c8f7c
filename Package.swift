// swift-tools-version:6.2
import PackageDescription

// Every target reaches the metadata of a generic type it names (`[String: AttributeValue]`,
// `Result<KeychainReply, KeychainError>`) by calling the type's metadata accessor, not through the
// type's mangled name. The runtime checks a mangled name's generic requirements by searching every
// protocol conformance in the program (8,926 in keychainctl) for each requirement it has not met
// before: two such searches were a third of a whole `keychainctl` lookup's instructions
// (Benchmarks/README.md). A long-running daemon meets each type once, so the flag changes only how
// a short command starts. It is an unsafe flag, which a package that depends on this one by path
// or branch (Docs/SwiftAPI.md) accepts and one that depended on a version would not.
let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"]),
]
let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
let cryptoExtras = Target.Dependency.product(name: "CryptoExtras", package: "swift-crypto")

// How the commands a shell or git starts for one lookup are linked (keychainctl,
// git-credential-keychain): their start is most of their time (Benchmarks/README.md). On Linux:
// - With --static-swift-stdlib the toolchain exports every symbol of the program (for Swift
//   libraries it might load, which these never do), and the Swift runtime's search for its crash
//   backtracer then reads all of them at every start (--no-export-dynamic).
// - SQLite and libstdc++ come from their static archives (Linking/static-archives holds the two
//   linker scripts that say so): Debian builds both shared libraries with immediate binding, and
//   resolving their symbols was half of a whole lookup's instructions. GCC's unwinder comes from
//   its archive too (-static-libgcc).
// - The program's relative relocations are packed (DT_RELR, glibc 2.36 and later), which lld
//   writes and the toolchain's default linker (gold) does not.
let shortCommandLinking: [LinkerSetting] = [
    .unsafeFlags(
        [
            "-use-ld=lld", "-L", "\(Context.packageDirectory)/Linking/static-archives", "-Xclang-linker",
            "-static-libgcc", "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
        ], .when(platforms: [.linux]))
]

// The package is cut at the socket (DESIGN.md, "Components and trust boundaries"):
//
// - Sources/App: what an app links. Apple's `Security` and `LocalAuthentication`, this
//   package's `Keychain`, the client that reaches keychaind, and the prompt it draws. Nothing
//   here may depend on the daemon side; PackageGraphTests fails the build's tests if it does.
// - Sources/Daemon: what holds the keys. The Enclave (the only code that touches key material),
//   the store, the sensors, the server, keychaind, and the embedded keychain: the server in an
//   app's own process, for the tests, the benchmarks and the programs that opt into it.
// - Sources/Shared: what both sides need. The wire and model types, directory checks, process
//   hardening and paths, per-process sockets, and the C calls Swift cannot make itself.
// - Sources/Tools and Sources/Examples: keychainctl and its ssh-agent, the fuzzer, the
//   profiler; chores, the guide's app.
let package = Package(
    name: "swift-keychain",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Keychain", targets: ["Keychain"]),
        .library(name: "Security", targets: ["Security"]),
        .library(name: "LocalAuthentication", targets: ["LocalAuthentication"]),
        // The keychain server inside the program that links it, with none of keychaind's
        // protections (Docs/SecurityModel.md, "Embedded mode").
        .library(name: "KeychainEmbedded", targets: ["KeychainEmbedded"]),
        .executable(name: "keychainctl", targets: ["keychainctl"]),
        .executable(name: "chores", targets: ["chores"]),
        .executable(name: "keychaind", targets: ["keychaind"]),
        .executable(name: "git-credential-keychain", targets: ["git-credential-keychain"]),
        .executable(name: "keychain-secret-service", targets: ["keychain-secret-service"]),
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
        // MARK: Shared

        // What Swift cannot call by itself: variadic syscalls (kernel keyring), prctl, socket
        // credentials, and glibc calls behind _GNU_SOURCE (pipe2, closefrom for spawn).
        .target(name: "CKeychainSupport", path: "Sources/Shared/CKeychainSupport"),
        // Typed requests, replies, attribute values and errors, and their wire format.
        .target(name: "KeychainProtocol", path: "Sources/Shared/KeychainProtocol", swiftSettings: strict),
        // What both sides need of the system: private directories checked for their owner, process
        // hardening, the standard paths, a digest computed elsewhere.
        .target(
            name: "KeychainSupport", dependencies: ["KeychainProtocol", "CKeychainSupport", crypto],
            path: "Sources/Shared/KeychainSupport", swiftSettings: strict),
        // A server's Unix socket read with recvmsg: every frame's writer from the kernel
        // (SCM_CREDENTIALS), one thread per connection. keychaind and the ssh-agent serve with it.
        .target(
            name: "ProcessBoundSockets", dependencies: ["CKeychainSupport"], path: "Sources/Shared/ProcessBoundSockets",
            swiftSettings: strict),

        // libdbus, the reference D-Bus library: keychaind follows logind's session locks on the
        // system bus, and the Secret Service bridge serves the session bus.
        .systemLibrary(
            name: "CDBus", path: "Sources/Shared/CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),

        // MARK: App side

        // How a program reaches the keychain: the transport, keychaind (started on demand),
        // device administration.
        .target(
            name: "KeychainClient", dependencies: ["KeychainProtocol", "KeychainSupport", "CKeychainSupport"],
            path: "Sources/App/KeychainClient", swiftSettings: strict),
        // LocalAuthentication: LAContext under Apple's module name, Apple's names only; the rules
        // stay in the Enclave.
        .target(
            name: "LocalAuthentication", dependencies: ["KeychainClient"],
            path: "Sources/App/LocalAuthentication",
            swiftSettings: strict),
        // PKCS #12's legacy 3DES and RC2 encryption, which swift-crypto lacks: OpenSSL's libcrypto
        // with its legacy provider, behind one C function (SecPKCS12Import). Built against its
        // headers (libssl-dev); the library is loaded when the first legacy file is decrypted.
        .target(name: "CPKCS12Legacy", path: "Sources/App/CPKCS12Legacy"),
        // Apple's API under Apple's module name, so that iOS code compiles with its imports
        // unchanged: SecItem*, kSec* constants, SecAccessControl, CF types. Apple's names only.
        .target(
            name: "Security",
            dependencies: [
                "KeychainProtocol", "KeychainClient", "KeychainSupport", "LocalAuthentication", "CPKCS12Legacy",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                crypto, .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Sources/App/Security", swiftSettings: strict),
        // One import for everything: Security, LocalAuthentication, the typed API and the facade.
        .target(
            name: "Keychain",
            dependencies: ["KeychainProtocol", "KeychainClient", "LocalAuthentication", "Security"],
            path: "Sources/App/Keychain", swiftSettings: strict),

        // MARK: Daemon side

        // What the Enclave and the store agree on without either seeing the other: the row
        // ledger's keyed hashes and what a database says of itself.
        .target(
            name: "StorageContracts", dependencies: ["KeychainProtocol"],
            path: "Sources/Daemon/StorageContracts", swiftSettings: strict),
        // The only code that touches key material.
        .target(
            name: "Enclave",
            dependencies: [
                "KeychainProtocol", "KeychainSupport", "StorageContracts", "CKeychainSupport", "CKeychainTPM", crypto,
                cryptoExtras,
            ],
            path: "Sources/Daemon/Enclave", swiftSettings: strict),
        // Sync's transport: the circle's files on a remote the person has (git). Moves only
        // ciphertext; never a key.
        .target(
            name: "KeychainSync", dependencies: ["KeychainProtocol", "KeychainSupport", "CKeychainSupport"],
            path: "Sources/Daemon/KeychainSync", swiftSettings: strict),
        // A TPM 2.0 through tpm2-tss's ESAPI, loaded when a keychain first opens one (libtss2-dev
        // to build): the device secret sealed to it, and a monotonic counter in its NV memory.
        .target(name: "CKeychainTPM", path: "Sources/Daemon/CKeychainTPM"),
        // Sealed rows in SQLite. Never depends on Enclave: the store never sees a key.
        .target(
            name: "KeychainStore",
            dependencies: [
                "KeychainProtocol", "StorageContracts", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Sources/Daemon/KeychainStore", swiftSettings: strict),
        // Fingerprint sensors behind one protocol: simulated, and fprintd (loaded at run time).
        .target(
            name: "Biometrics", dependencies: ["KeychainProtocol", "KeychainSupport"],
            path: "Sources/Daemon/Biometrics", swiftSettings: strict),
        // The sheet the keychain draws when an app asks it to authenticate the owner: pinentry's
        // (on the app's terminal or desktop), the keychain's own terminal sheet, or a script in
        // tests; and the choice between them.
        .target(
            name: "KeychainPrompt", dependencies: ["KeychainProtocol", "KeychainSupport", "CKeychainSupport"],
            path: "Sources/Daemon/KeychainPrompt", swiftSettings: strict),
        // SecItem semantics for one caller identity, on Store + Enclave.
        .target(
            name: "KeychainServer",
            dependencies: [
                "KeychainProtocol", "KeychainSupport", "StorageContracts", "Enclave", "KeychainStore", "Biometrics",
                "KeychainPrompt", "KeychainSync",
                crypto,
            ],
            path: "Sources/Daemon/KeychainServer", swiftSettings: strict),
        // The server in the program's own process (KEYCHAIN_MODE=embedded for the programs that
        // link it): no isolation between a user's programs.
        .target(
            name: "KeychainEmbedded",
            dependencies: ["KeychainClient", "KeychainPrompt", "KeychainServer", "KeychainSupport", "Enclave"],
            path: "Sources/Daemon/KeychainEmbedded", swiftSettings: strict),
        // keychaind's first steps, before any thread: its capabilities, its seccomp filter
        // (libseccomp, libseccomp-dev to build), and a worker's inspector and Landlock domain.
        .target(
            name: "CKeychaindStartup", dependencies: ["CKeychainSupport"], path: "Sources/Daemon/CKeychaindStartup",
            linkerSettings: [.linkedLibrary("seccomp")]),
        // keychaind's server side: the socket, the caller's identity from the kernel, one
        // KeychainServer for every app. Holds the keys; apps never link it.
        .target(
            name: "KeychainDaemon",
            dependencies: [
                "KeychainProtocol", "KeychainSupport", "KeychainServer", "Enclave", "CKeychainSupport", "CDBus",
                "ProcessBoundSockets", "KeychainPrompt", "Biometrics",
                crypto, .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Daemon/KeychainDaemon", swiftSettings: strict),
        .executableTarget(
            name: "keychaind",
            dependencies: [
                "KeychainDaemon", "KeychainSupport", "KeychainSync", "CKeychaindStartup",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/Daemon/keychaind", swiftSettings: strict),

        // MARK: Tools and examples

        // An ssh-agent on Enclave keys (`keychainctl ssh-agent`): the OpenSSH agent protocol,
        // its SSH encodings, and the keys kept in the keychain.
        .target(
            name: "KeychainSSH",
            dependencies: [
                "Keychain", "ProcessBoundSockets", "CKeychainSupport", crypto, cryptoExtras,
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/Tools/KeychainSSH", swiftSettings: strict),
        // The Secret Service (org.freedesktop.secrets) on the keychain: `keychain-secret-service`
        // serves the user's session bus and asks keychaind for each D-Bus client
        // as that client (KeychainRequest.actForProcess), so each app sees its own items.
        .target(
            name: "SecretService",
            dependencies: [
                "KeychainProtocol", "KeychainClient", "KeychainSupport", "CDBus", "CModularExponentiation", crypto,
                cryptoExtras,
            ],
            path: "Sources/Tools/SecretService", swiftSettings: strict),
        // The Secret Service's Diffie-Hellman: OpenSSL's constant-time modular exponentiation,
        // which swift-crypto keeps internal; libcrypto is loaded at the first session that
        // needs it (libssl-dev to build).
        .target(name: "CModularExponentiation", path: "Sources/Tools/CModularExponentiation"),
        // `keychain-secret-service`: the Secret Service bridge's program, and its installation.
        .executableTarget(
            name: "keychain-secret-service",
            dependencies: [
                "SecretService", "KeychainProtocol", "KeychainSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/Tools/keychain-secret-service", swiftSettings: strict),
        // The owner's tool. It links the embedded keychain: `KEYCHAIN_MODE=embedded`, and moving
        // a per-user keychain into the system daemon.
        .executableTarget(
            name: "keychainctl",
            dependencies: [
                "Keychain", "KeychainEmbedded", "KeychainPrompt", "KeychainSSH", "KeychainSupport",
                "LocalAuthentication", "CKeychainSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/Tools/keychainctl", swiftSettings: strict, linkerSettings: shortCommandLinking),
        // The guide's walkthrough app: a chore list where changes need the device owner.
        .executableTarget(
            name: "chores",
            dependencies: [
                "Keychain", "CKeychainSupport", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ], path: "Sources/Examples/chores",
            swiftSettings: strict),
        // git's credential helper on the keychain (`credential.helper keychain`), written against
        // the Apple API as git-credential-osxkeychain is.
        .executableTarget(
            name: "git-credential-keychain",
            dependencies: ["Security", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/Tools/git-credential-keychain",
            swiftSettings: strict, linkerSettings: shortCommandLinking),
        // The wire decoders under libFuzzer (Docs/WireProtocol.md); without it, a replayer of
        // saved inputs.
        .executableTarget(
            name: "wire-fuzzer", dependencies: ["KeychainProtocol"], path: "Sources/Tools/wire-fuzzer",
            swiftSettings: strict),
        // One operation repeated under callgrind (Benchmarks/README.md).
        .executableTarget(
            name: "keychain-profile", dependencies: ["Keychain", "KeychainEmbedded"],
            path: "Sources/Tools/keychain-profile",
            swiftSettings: strict),
        // The benchmark suite (Benchmarks/README.md): `swift package --disable-sandbox benchmark`.
        .executableTarget(
            name: "KeychainBenchmarks",
            dependencies: [
                "Keychain", "KeychainEmbedded", "KeychainPrompt", "LocalAuthentication", "keychaind", "KeychainSync",
                "KeychainSupport", "Enclave", .product(name: "Benchmark", package: "benchmark"),
                .product(name: "GRDB", package: "GRDB.swift"), crypto,
            ],
            path: "Benchmarks/KeychainBenchmarks", swiftSettings: strict,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),

        // MARK: Tests

        .testTarget(
            name: "KeychainTests",
            dependencies: [
                "Keychain", "KeychainEmbedded", "KeychainServer", "Enclave", "KeychainStore", "StorageContracts",
                "KeychainSupport", "KeychainSync",
                "KeychainProtocol", "KeychainPrompt", "LocalAuthentication", "Biometrics", "KeychainSSH",
                "SecretService",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"), crypto, cryptoExtras,
            ],
            exclude: ["Vectors"],
            swiftSettings: strict),
        // iOS-style keychain code (Tests/SourceCompatibility/Corpus) compiled in both language
        // modes and run by the end-to-end tests (SourceCompatibilityCorpusTests): apps that link
        // Security and LocalAuthentication alone.
        .executableTarget(
            name: "source-compatibility-swift5", dependencies: ["Security", "LocalAuthentication", crypto],
            path: "Tests/SourceCompatibility/Swift5", swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(
            name: "source-compatibility-swift6", dependencies: ["Security", "LocalAuthentication", crypto],
            path: "Tests/SourceCompatibility/Swift6", swiftSettings: strict),
        // The end-to-end suite: the real executables, keychaind in both modes, OpenSSH, fprintd.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "keychainctl", "chores", "keychaind", "keychain-secret-service", "KeychainBenchmarks", "KeychainDaemon",
                "KeychainSupport", "Enclave",
                "Biometrics",
                "CKeychainSupport", "KeychainProtocol", "source-compatibility-swift5", "source-compatibility-swift6",
                crypto,
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
    ]
)
