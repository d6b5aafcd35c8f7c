import Foundation
import Testing

/// The modules named `Security` and `LocalAuthentication` declare Apple's names only, so that
/// they collide with no name of the code that imports them (wrappers define their own
/// `Keychain`, `KeychainError`, `Accessibility`…); this package's names live in other modules.
@Suite struct AppleModuleNamesTests {
    /// Apple's prefixes for these frameworks, and the few plain names they declare.
    static let applePrefixes = ["Sec", "kSec", "errSec", "errSSL", "CF", "kCF", "LA", "kLA"]
    static let appleNames: Set = ["OSStatus", "noErr", "NSErrorPointer"]

    @Test(arguments: ["Security", "LocalAuthentication"])
    func everyTopLevelPublicNameIsApples(module: String) throws {
        let directory = ReadmeTests.root.appendingPathComponent("Sources/App/\(module)")
        let declaration = try Regex(
            #"^(?:@\w+(?:\([^)]*\))?\s+)*(?:nonisolated\(unsafe\)\s+)?(?:public|open)\s+(?:final\s+)?"#
                + #"(?:let|var|func|struct|class|enum|typealias|protocol|actor)\s+([A-Za-z_][A-Za-z0-9_]*)"#
        )
        var names: [String] = []
        let files = try #require(FileManager.default.subpathsOfDirectory(atPath: directory.path) as [String]?)
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            // Top level only: members of Apple's types are not names the importer sees alone.
            for line in text.split(separator: "\n") where !line.hasPrefix(" ") {
                if let match = String(line).firstMatch(of: declaration), let name = match.output[1].substring {
                    names.append(String(name))
                }
            }
        }
        #expect(names.count > 5, "the scan found the module's declarations")
        let foreign = names.filter { name in
            !Self.appleNames.contains(name) && !Self.applePrefixes.contains { name.hasPrefix($0) }
        }
        #expect(foreign.isEmpty, "\(module) declares names that are not Apple's: \(foreign)")
    }
}
