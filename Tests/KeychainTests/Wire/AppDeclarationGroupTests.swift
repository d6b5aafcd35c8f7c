import Foundation
import KeychainProtocol
import Testing

/// An app's access groups from its declaration, in Apple's documented order.
@Suite struct AppDeclarationGroupTests {
    /// Apple: an app's keychain access groups are its `keychain-access-groups`, then its
    /// application identifier, then its application groups; the first is the default.
    @Test func applicationGroupsComeAfterTheIdentifier() {
        let declaration = AppDeclaration(
            applicationIdentifier: "T.com.example.app", keychainAccessGroups: ["T.shared"],
            applicationGroups: ["group.com.example", "T.shared"])
        #expect(declaration.accessGroups == ["T.shared", "T.com.example.app", "group.com.example"])
        let noKeychainGroups = AppDeclaration(applicationIdentifier: "T.a", applicationGroups: ["group.a"])
        #expect(noKeychainGroups.accessGroups == ["T.a", "group.a"])
    }

    /// A declaration stored before application groups were read has none, and still reads.
    @Test func aDeclarationStoredWithoutApplicationGroupsReads() throws {
        let stored = #"{"applicationIdentifier":"T.a","keychainAccessGroups":["T.g"]}"#
        let declaration = try JSONDecoder().decode(AppDeclaration.self, from: Data(stored.utf8))
        #expect(declaration == AppDeclaration(applicationIdentifier: "T.a", keychainAccessGroups: ["T.g"]))
    }

    @Test func applicationGroupsAreValidatedAsGroups() {
        let bad = AppDeclaration(applicationIdentifier: "T.a", applicationGroups: ["/usr/bin/other"])
        #expect(throws: KeychainError.errSecParam) { try bad.validate() }
    }
}
