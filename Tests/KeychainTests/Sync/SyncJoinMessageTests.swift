import Crypto
import Foundation
import Testing

@testable import Enclave

/// The join's messages and code (Docs/Sync.md, "Joining"): the code is fixed only once both
/// nonces are out, a commitment opens for its own key and nonce alone, and an answer holds only
/// with its member's signature.
@Suite struct SyncJoinMessageTests {
    let member = P256.Signing.PrivateKey()
    let joining = P256.Signing.PrivateKey().publicKey.x963Representation

    var memberKey: Data { member.publicKey.x963Representation }

    @Test func theCodeIsKnownOnlyOnceBothNoncesAreOut() {
        let joiningNonce = SyncJoin.nonce()
        let commitment = SyncJoin.commitment(publicKey: joining, nonce: joiningNonce)
        let memberNonce = SyncJoin.nonce()
        func code(_ memberNonce: Data, _ joiningNonce: Data) -> String {
            SyncJoin.code(
                member: memberKey, joining: joining, commitment: commitment, memberNonce: memberNonce,
                joiningNonce: joiningNonce)
        }
        let fixed = code(memberNonce, joiningNonce)
        #expect(fixed.count == 6 && fixed.allSatisfy(\.isNumber))
        #expect(code(memberNonce, joiningNonce) == fixed)
        // Before the member's nonce, and before the joining machine's, the code is any of 10⁶:
        // a thousand draws of either one give (nearly) a thousand codes.
        let byMemberNonce = Set((0..<1000).map { _ in code(SyncJoin.nonce(), joiningNonce) })
        let byJoiningNonce = Set((0..<1000).map { _ in code(memberNonce, SyncJoin.nonce()) })
        #expect(byMemberNonce.count >= 990 && byJoiningNonce.count >= 990)
        // Another key, either side, another code.
        let otherKey = P256.Signing.PrivateKey().publicKey.x963Representation
        #expect(
            SyncJoin.code(
                member: otherKey, joining: joining, commitment: commitment, memberNonce: memberNonce,
                joiningNonce: joiningNonce) != fixed
                || SyncJoin.code(
                    member: memberKey, joining: otherKey, commitment: commitment, memberNonce: memberNonce,
                    joiningNonce: joiningNonce) != fixed
        )
    }

    @Test func aCommitmentOpensForItsOwnKeyAndNonceAlone() throws {
        let nonce = SyncJoin.nonce()
        let asked = SyncJoin.Request(
            name: "desktop", publicKey: joining, commitment: SyncJoin.commitment(publicKey: joining, nonce: nonce))
        #expect(SyncJoin.Request.decode(Array(asked.encoded)) == asked)
        var revealed = asked
        revealed.nonce = nonce
        #expect(SyncJoin.Request.decode(Array(revealed.encoded)) == revealed)
        // Another nonce revealed, or another key put in with the same commitment: refused.
        var otherNonce = asked
        otherNonce.nonce = SyncJoin.nonce()
        var otherKey = revealed
        otherKey.publicKey = P256.Signing.PrivateKey().publicKey.x963Representation
        for refused in [otherNonce, otherKey] { #expect(SyncJoin.Request.decode(Array(refused.encoded)) == nil) }
        // The request before this protocol (a name and a key, nothing committed) is not one.
        var old = [UInt8]()
        for part in [Data("swift-keychain join request v1".utf8), Data("desktop".utf8), joining] {
            withUnsafeBytes(of: UInt32(part.count).bigEndian) { old += $0 }
            old += part
        }
        #expect(SyncJoin.Request.decode(old) == nil)
    }

    @Test func anAnswerHoldsOnlyWithItsMembersSignature() throws {
        let request = SyncJoin.Request(
            name: "desktop", publicKey: joining,
            commitment: SyncJoin.commitment(publicKey: joining, nonce: SyncJoin.nonce()))
        let answer = try SyncJoin.Answer.make(to: request, nonce: SyncJoin.nonce(), identity: member)
        let signer = SyncDeviceList.Member(name: "laptop", publicKey: memberKey)
        #expect(SyncJoin.Answer.decode(Array(answer.encoded), signedBy: signer) == answer)
        #expect(answer.joining == request.member.id && answer.commitment == request.commitment)
        let other = SyncDeviceList.Member(
            name: "laptop", publicKey: P256.Signing.PrivateKey().publicKey.x963Representation)
        #expect(SyncJoin.Answer.decode(Array(answer.encoded), signedBy: other) == nil)
        let bytes = Array(answer.encoded)
        for index in bytes.indices {
            var altered = bytes
            altered[index] ^= 0x01
            #expect(SyncJoin.Answer.decode(altered, signedBy: signer) == nil, "byte \(index) flipped")
        }
    }
}
