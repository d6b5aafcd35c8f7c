import Crypto
import Enclave
import Foundation
import Testing

/// Issue 56: the remote joined the circle. The code was six digits of SHA-256 of the two public
/// keys, so the remote, which reads both, ground a P-256 key to the code the member would show
/// (7 s on two cores), swapped the request for its own, and the owner's `sync approve CODE`
/// approved it. Now the code comes from both keys and both nonces, committed before either is
/// known (Docs/Sync.md, "Joining"): these tests play that remote.
@Suite(.serialized) struct SyncJoinTests {
    /// The remote swaps the new machine's request for its own, gets the member's answer, and then
    /// does the best it can: it serves the new machine that answer, and, having seen the member's
    /// nonce, puts a request of a new key in place whose code it chose, and has the owner type
    /// exactly that code. Every step is refused and the member's list never holds its key; the
    /// real machine then joins.
    @Test func aRemoteThatSwapsTheRequestCannotJoinTheCircle() throws {
        let (circle, desktop) = try Self.laptopCircleAndDesktopAsking()
        defer { circle.end() }

        let files = try circle.remote.files()
        let requestPath = try #require(files.keys.first { $0.hasPrefix("circle/requests/") })
        let real = try #require(SyncJoin.Request.decode(Array(files[requestPath]!)))
        // Nothing in the request to grind toward: a commitment, and no code yet.
        #expect(real.nonce == nil && real.commitment.count == 32)
        let laptop = try SyncDeviceList.decode(files["circle/list"]!).members[0]

        // The swap: the remote's own key asks, under the same name.
        let intruder = P256.Signing.PrivateKey()
        let intruderNonce = SyncJoin.nonce()
        var swapped = SyncJoin.Request(
            name: "desktop", publicKey: intruder.publicKey.x963Representation,
            commitment: SyncJoin.commitment(publicKey: intruder.publicKey.x963Representation, nonce: intruderNonce))
        try circle.remote.tamper { clone in
            try FileManager.default.removeItem(at: clone.appendingPathComponent(requestPath))
            try swapped.encoded.write(to: clone.appendingPathComponent(Self.requestPath(swapped)))
        }
        let answered = try circle["laptop"].run(["sync", "approve"])
        #expect(answered.status == 0, "\(answered.stderr)")
        let answerPath = try #require(
            try circle.remote.files().keys.first { $0.hasPrefix("circle/answers/\(Hex.encode(swapped.member.id))/") })
        let answer = try #require(
            SyncJoin.Answer.decode(Array(try circle.remote.files()[answerPath]!), signedBy: laptop))

        // The desktop is served the laptop's answer, and the real request back: the answer is for
        // another commitment, so the desktop shows no code.
        try circle.remote.tamper { clone in
            let folder = clone.appendingPathComponent("circle/answers/\(Hex.encode(real.member.id))")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try answer.encoded.write(to: folder.appendingPathComponent(Hex.encode(laptop.id)))
            try real.encoded.write(to: clone.appendingPathComponent(requestPath))
        }
        let shown = try desktop.run(["sync", "join"])
        #expect(shown.status != 0 && SyncJoinCode.shown(shown.stdout) == nil, "\(shown.stdout)")
        #expect(shown.stderr.contains("no device of the circle has answered"), "\(shown.stderr)")

        // Having seen the laptop's nonce, the remote grinds: a new nonce for its key, revealed,
        // whose code with the laptop's nonce it computes; here it simply takes whatever code that
        // gives, as if grinding had reached it, and the owner is fooled into typing it.
        let chosenNonce = SyncJoin.nonce()
        let chosenRequest = SyncJoin.Request(
            name: "desktop", publicKey: swapped.publicKey,
            commitment: SyncJoin.commitment(publicKey: swapped.publicKey, nonce: chosenNonce), nonce: chosenNonce)
        let chosenCode = SyncJoin.code(
            member: laptop.publicKey, joining: chosenRequest.publicKey, commitment: chosenRequest.commitment,
            memberNonce: answer.nonce, joiningNonce: chosenNonce)
        try circle.remote.tamper { clone in
            try chosenRequest.encoded.write(to: clone.appendingPathComponent(Self.requestPath(swapped)))
        }
        let approvedChosen = try circle["laptop"].run(["sync", "approve", chosenCode])
        #expect(
            approvedChosen.status != 0 && approvedChosen.stderr.contains("replaced on the remote"),
            "\(approvedChosen.stderr)")
        // Put back, revealed: the request the laptop answered, with the remote's own nonce. Its
        // code was fixed when the laptop answered; the owner types what the desktop shows, and
        // the desktop shows none. A code typed at random is one guess in 10⁶.
        swapped.nonce = intruderNonce
        try circle.remote.tamper { clone in
            try swapped.encoded.write(to: clone.appendingPathComponent(Self.requestPath(swapped)))
        }
        let intruderCode = SyncJoin.code(
            member: laptop.publicKey, joining: swapped.publicKey, commitment: swapped.commitment,
            memberNonce: answer.nonce, joiningNonce: intruderNonce)
        let guess = intruderCode == "000000" ? "000001" : "000000"
        let guessed = try circle["laptop"].run(["sync", "approve", guess])
        #expect(guessed.status != 0 && guessed.stderr.contains("nothing is approved"), "\(guessed.stderr)")
        let devices = try circle["laptop"].run(["sync", "devices"])
        #expect(devices.stdout.split(separator: "\n").count == 3, "\(devices.stdout)")
        #expect(!devices.stdout.contains("code"), "a member never shows a code: \(devices.stdout)")
        let list = try SyncDeviceList.decode(try circle.remote.files()["circle/list"]!)
        #expect(list.members.map(\.id) == [laptop.id])

        // The real desktop asks again, is chosen by its id among the two "desktop"s, and joins.
        try circle.join("desktop", approvedBy: "laptop", device: String(Hex.encode(real.member.id).prefix(8)))
        #expect(try circle["desktop"].run(["sync", "status"]).stdout.contains("2 devices"))
        let joined = try SyncDeviceList.decode(try circle.remote.files()["circle/list"]!)
        #expect(Set(joined.members.map(\.id)) == [laptop.id, real.member.id])
    }

    /// A code the owner mistypes is refused and approves nothing; the right one then does, and
    /// the new machine confirms only the code it shows.
    @Test func aMistypedCodeApprovesNothingAndTheRightOneThenDoes() throws {
        let (circle, desktop) = try Self.laptopCircleAndDesktopAsking()
        defer { circle.end() }
        let early = try desktop.run(["sync", "join"])
        #expect(early.status != 0 && early.stderr.contains("no device of the circle has answered"), "\(early.stderr)")
        #expect(try circle["laptop"].run(["sync", "approve"]).status == 0)
        let code = try #require(SyncJoinCode.shown(try desktop.run(["sync", "join"]).stdout))
        // Shown again, the same code: the answer it revealed for is fixed.
        #expect(SyncJoinCode.shown(try desktop.run(["sync", "join"]).stdout) == code)
        let wrong = String(code.reversed()) == code ? "123456" : String(code.reversed())
        let refused = try circle["laptop"].run(["sync", "approve", wrong])
        #expect(refused.status != 0 && refused.stderr.contains("nothing is approved"), "\(refused.stderr)")
        let early2 = try desktop.run(["sync", "join", "--code", code])
        #expect(early2.status != 0 && early2.stderr.contains("not approved yet"), "\(early2.stderr)")
        #expect(try circle["laptop"].run(["sync", "approve", code]).status == 0)
        let mistyped = try desktop.run(["sync", "join", "--code", wrong])
        #expect(mistyped.status != 0 && mistyped.stderr.contains("not the code"), "\(mistyped.stderr)")
        let joined = try desktop.run(["sync", "join", "--code", code])
        #expect(joined.status == 0 && joined.stdout.contains("joined"), "\(joined.stdout)\(joined.stderr)")
    }

    /// A circle of the laptop alone, and a desktop (a machine of the circle's, ended with it) that
    /// has asked to join.
    static func laptopCircleAndDesktopAsking() throws -> (SyncCommandTests.Circle, CommandRunner) {
        let circle = try SyncCommandTests.Circle(["laptop"])
        do {
            let desktop = try CommandRunner.withPasscode(simulator: false)
            circle.machines["desktop"] = desktop
            for arguments in [["owner", "login"], ["sync", "join", circle.remote.url, "--name", "desktop"]] {
                let run = try desktop.run(arguments, input: "1234\n")
                guard run.status == 0 else { throw SetUpFailure(command: arguments, stderr: run.stderr) }
            }
            return (circle, desktop)
        } catch {
            circle.end()
            throw error
        }
    }

    static func requestPath(_ request: SyncJoin.Request) -> String {
        "circle/requests/" + Hex.encode(request.member.id)
    }
}
