import Foundation
import KeychainProtocol

/// The fuzz target for the wire decoders (`RequestCoder`, which keychaind runs on every
/// client's bytes, and `ReplyCoder`, which a client runs on the daemon's).
///
/// Each input is one message body given to both decoders. A decoder may refuse it (a
/// `WireError`), never crash, hang or allocate without bound; and what it accepts must encode to
/// bytes it accepts again and that encode the same way (the encoding is a fixed point after one
/// round), so that the encoder and the decoder cannot disagree.
enum WireFuzzer {
    static func check(_ body: [UInt8]) {
        if let request = try? RequestCoder.decode(body) {
            checkFixedPoint(
                "request", RequestCoder.encode(request), decode: RequestCoder.decode, encode: RequestCoder.encode)
        }
        if let reply = try? ReplyCoder.decode(body) {
            checkFixedPoint("reply", ReplyCoder.encode(reply), decode: ReplyCoder.decode, encode: ReplyCoder.encode)
        }
    }

    /// `encoded`, the encoding of an accepted `what`, is accepted again and encodes the same.
    private static func checkFixedPoint<Message>(
        _ what: String, _ encoded: [UInt8], decode: ([UInt8]) throws(WireError) -> Message,
        encode: (Message) -> [UInt8]
    ) {
        guard let again = try? decode(encoded) else { fatalError("an accepted \(what)'s encoding is refused") }
        guard encode(again) == encoded else { fatalError("a \(what)'s encoding changes when decoded again") }
    }
}

#if FUZZING
/// libFuzzer's driver (`-sanitize=fuzzer` links it): runs `callback` on input after input and
/// takes libFuzzer's options from the command line.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32
#endif

/// With libFuzzer (built with `-DFUZZING`): libFuzzer's driver, with its options
/// (`wire-fuzzer -max_total_time=600 CORPUS`). Without: `wire-fuzzer FILE…` runs each file (a
/// crash libFuzzer saved, say) through the same checks, and `wire-fuzzer --seeds DIR` writes one
/// valid message of each kind into DIR as a starting corpus.
@main
struct WireFuzzerMain {
    static func main() throws {
        #if FUZZING
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(
            runFuzzerDriver(&argc, &argv) { data, size in
                WireFuzzer.check(Array(UnsafeBufferPointer(start: data, count: size)))
                return 0
            })
        #else
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--seeds", arguments.count == 2 {
            try writeSeeds(to: URL(fileURLWithPath: arguments[1]))
            return
        }
        guard !arguments.isEmpty else {
            FileHandle.standardError.write(Data("usage: wire-fuzzer FILE… | wire-fuzzer --seeds DIR\n".utf8))
            exit(64)
        }
        for path in arguments {
            guard let bytes = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("wire-fuzzer: cannot read \(path)\n".utf8))
                exit(66)
            }
            WireFuzzer.check(Array(bytes))
            print("\(path): ok")
        }
        #endif
    }

    static func writeSeeds(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let context = AuthenticationContextID.random()
        let item = NewItem(
            itemClass: .genericPassword, attributes: ["svce": .string("s"), "acct": .string("a")],
            secret: SecretBytes(utf8: "x"))
        let query = ItemQuery(
            itemClass: .genericPassword, attributes: ["svce": .string("s")], returns: [.data, .attributes])
        let requests: [KeychainRequest] = [
            .add(item), .copyMatching(query), .update(query, ItemChanges(attributes: ["labl": .string("l")])),
            .delete(query),
            .verifyPasscode(SecretBytes(utf8: "1234"), context: context),
            .awaitBiometricMatch(timeout: 1, context: context), .deviceStatus, .lock,
        ]
        let replies: [Result<KeychainReply, KeychainError>] = [
            .success(.done), .success(.count(3)), .failure(KeychainError(.errSecItemNotFound, "not found")),
            .failure(KeychainError.errSecDecode),
        ]
        for (index, body) in (requests.map(RequestCoder.encode) + replies.map(ReplyCoder.encode)).enumerated() {
            try Data(body).write(to: directory.appendingPathComponent("seed-\(index)"))
        }
    }
}
