import Foundation
import KeychainEmbedded
import KeychainProtocol
import KeychainServer
import Testing

/// Every request's facts have one home (``RequestKind``), and the wire tags they give never move.
@Suite struct RequestKindTests {
    /// The tags as released: a client and a daemon built apart agree on them. A new request
    /// takes the next free tag and adds its line here; no line ever changes.
    static let releasedTags: [RequestKind: UInt8] = [
        .add: 1, .copyMatching: 2, .update: 3, .delete: 4, .deviceStatus: 5, .lock: 6, .unlock: 7, .setPasscode: 8,
        .removePasscode: 9, .erase: 10, .countItems: 11, .setEraseAfterFailedAttempts: 12, .verifyPasscode: 13,
        .biometryStatus: 14, .awaitBiometricMatch: 15, .endBiometricMatch: 16, .invalidateContext: 17,
        .enrollFinger: 18,
        .removeFinger: 19, .setSimulatedSensor: 20, .simulateTouch: 21, .daemonStatus: 22, .openOwnerSession: 23,
        .closeOwnerSession: 24, .setEntitlement: 25, .listEntitlements: 26, .eraseUnopenableKeychain: 27,
        .openOwnerSessionByBiometry: 28, .identify: 29, .beginImport: 30, .importChunk: 31, .finishImport: 32,
        .declareApp: 33, .listDeclaredApps: 34, .createEnclaveKey: 35, .useEnclaveKey: 36, .authenticateOwner: 37,
        .servePrompts: 38, .unlockBySheet: 39, .openOwnerSessionBySheet: 40, .actForProcess: 41,
        .searchSecretItems: 42, .readOtherAppSecretItem: 43, .allowOtherAppSecretItem: 44, .unlockByBiometry: 45,
        .openLoginSession: 46, .closeLoginSession: 47, .beginBackup: 48, .continueBackup: 49, .beginRestore: 50,
        .restoreChunk: 51, .finishRestore: 52, .keychainProtection: 53, .sync: 54, .watchChanges: 55,
        .searchSecretItemsWithContentTypes: 56,
    ]

    @Test func tagsNeverMove() {
        let untagged = Set(RequestKind.allCases).subtracting(Self.releasedTags.keys)
        #expect(untagged.isEmpty, "requests without their released tag here: \(untagged)")
        for kind in RequestKind.allCases {
            #expect(kind.rawValue == Self.releasedTags[kind], "\(kind)")
        }
    }

    /// Each request goes out under its kind's tag and comes back as the same kind.
    @Test func everyKindCrossesTheWireUnderItsTag() throws {
        let requests = WireFormatTests.everyRequest
        let unsampled = Set(RequestKind.allCases).subtracting(requests.map(\.kind))
        #expect(unsampled.isEmpty, "kinds without a sample request in WireFormatTests.everyRequest: \(unsampled)")
        for request in requests {
            let body = RequestCoder.encode(request)
            #expect(body[1] == request.kind.rawValue, "\(request.kind)")
            #expect(try RequestCoder.decode(body).kind == request.kind)
        }
    }

    /// keychaind moves its change number after every request but these, which read alone (a
    /// request wrongly among them would leave the bridge's kept search standing after a change):
    /// a new request moves it unless it is added here on purpose.
    @Test func onlyReadsLeaveTheChangeNumberStill() {
        let reads: Set<RequestKind> = [
            .copyMatching, .deviceStatus, .biometryStatus, .countItems, .keychainProtection, .daemonStatus, .identify,
            .listEntitlements, .listDeclaredApps, .actForProcess, .searchSecretItems, .watchChanges,
            .searchSecretItemsWithContentTypes,
        ]
        #expect(Set(RequestKind.allCases.filter(\.facts.readOnly)) == reads)
    }

    /// Without a keychain, exactly the requests whose facts say they create one are refused as
    /// an internal error: an empty keychain answers every other one (perhaps with an error of
    /// its own), and ``OnDemandKeychain`` never sends those here.
    @Test func theRequestsThatCreateAKeychainAreTheOnesAnEmptyOneCannotAnswer() {
        for request in WireFormatTests.everyRequest {
            var unanswered = false
            do { _ = try KeychainServer.replyWithoutKeychain(request) } catch {
                unanswered = error.status == KeychainError.errSecInternalComponent.status
            }
            #expect(unanswered == request.kind.facts.createsKeychain, "\(request.kind)")
        }
    }

    /// Requests only a daemon answers are refused by the embedded keychain, whatever the caller.
    @Test func theDaemonsOwnRequestsAreNotTheKeychains() throws {
        let keychain = try TestKeychain.make()
        let transport = keychain.transport()
        let keychains: [RequestFacts.Handler] = [.keychain, .embeddedKeychain]
        for request in WireFormatTests.everyRequest where !keychains.contains(request.kind.facts.answeredBy) {
            #expect(throws: KeychainError.self, "\(request.kind)") { try transport.perform(request) }
        }
    }
}
