import Foundation
import Testing

/// The package is cut at the socket (DESIGN.md, "Components and trust boundaries"): the modules
/// an app links reach the keychain through keychaind and hold no key code, no store and no
/// sensor. The package graph says so, and these tests fail the day it stops saying so.
@Suite struct PackageGraphTests {
    /// What an app links: Apple's two modules, this package's facade, and what they stand on.
    static let appSide: Set = [
        "KeychainProtocol", "KeychainSupport", "CKeychainSupport", "KeychainClient",
        "LocalAuthentication", "CPKCS12Legacy", "Security", "Keychain",
    ]
    /// What holds the keys, and the server in a process of its own or embedded in one.
    static let daemonSide: Set = [
        "StorageContracts", "Enclave", "KeychainStore", "Biometrics", "KeychainPrompt", "KeychainServer",
        "KeychainEmbedded", "KeychainDaemon", "CKeychaindStartup", "CKeychainTPM", "KeychainSync", "keychaind",
    ]
    /// Packages only the daemon side may link: SQLite through GRDB, and the daemon's plumbing.
    static let daemonPackages: Set = ["GRDB", "GRDBSQLite", "ServiceLifecycle", "Logging"]

    /// Each target's dependencies, as `swift package dump-package` reads the manifest.
    static func dependencies() throws -> [String: [String]] {
        let runner = try CommandRunner()
        defer { runner.cleanUp() }
        // A scratch path of its own: the manifest is read without the build folder's lock,
        // which the running `swift test` holds.
        let scratch = runner.home.appendingPathComponent("scratch").path
        let output = try runner.script(
            "cd '\(ReadmeTests.root.path)' && swift package --scratch-path '\(scratch)' dump-package")
        #expect(output.status == 0, "\(output.stderr)")
        struct Manifest: Decodable {
            struct Target: Decodable {
                let name: String
                let dependencies: [[String: [String?]]]
            }
            let targets: [Target]
        }
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(output.stdout.utf8))
        return Dictionary(
            uniqueKeysWithValues: manifest.targets.map { target in
                (target.name, target.dependencies.compactMap { $0.values.first?.first ?? nil })
            })
    }

    /// Every target `name` depends on, directly or through others.
    static func closure(of name: String, in graph: [String: [String]]) -> Set<String> {
        var seen: Set<String> = []
        var pending = graph[name] ?? []
        while let next = pending.popLast() {
            guard seen.insert(next).inserted else { continue }
            pending += graph[next] ?? []
        }
        return seen
    }

    @Test func noAppSideModuleDependsOnTheDaemonSide() throws {
        let graph = try Self.dependencies()
        #expect(Self.appSide.isSubset(of: Set(graph.keys)), "a module was renamed: update this test and the README")
        #expect(Self.daemonSide.isSubset(of: Set(graph.keys)), "a module was renamed: update this test and the README")
        for module in Self.appSide {
            let reached = Self.closure(of: module, in: graph)
            #expect(
                reached.isDisjoint(with: Self.daemonSide),
                "\(module) depends on \(reached.intersection(Self.daemonSide).sorted())")
            #expect(
                reached.isDisjoint(with: Self.daemonPackages),
                "\(module) links \(reached.intersection(Self.daemonPackages).sorted())")
        }
        // The wire and model types stand alone: both sides and the fuzzer read them.
        #expect(graph["KeychainProtocol"] == [])
        // An app that imports only Apple's modules links the app side alone.
        for program in ["source-compatibility-swift5", "source-compatibility-swift6"] {
            #expect(Self.closure(of: program, in: graph).isDisjoint(with: Self.daemonSide.union(Self.daemonPackages)))
        }
    }

    /// A module can import another that the build happens to have made without depending on it;
    /// the source says what it means to use.
    @Test func noAppSideSourceImportsADaemonSideModule() throws {
        let sources = ReadmeTests.root.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.subpathsOfDirectory(atPath: sources.path) as [String]?)
        let appFiles = files.filter { ($0.hasPrefix("App/") || $0.hasPrefix("Shared/")) && $0.hasSuffix(".swift") }
        #expect(appFiles.count > 50, "the scan found the app side's sources")
        let importLine = try Regex(#"^\s*(?:@\w+\s+)*import\s+(?:\w+\s+)?(\w+)"#).anchorsMatchLineEndings()
        for file in appFiles {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: importLine) {
                let module = String(match.output[1].substring ?? "")
                #expect(
                    !Self.daemonSide.contains(module) && !Self.daemonPackages.contains(module),
                    "\(file) imports \(module)")
            }
        }
    }
}
