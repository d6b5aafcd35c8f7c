import Foundation
import KeychainProtocol
import Testing

@testable import KeychainServer

/// The sealed attribute record: the binary form it is written in, the JSON form earlier versions
/// wrote (still read, so an upgrade loses nothing), and bytes that are neither, refused.
@Suite struct AttributeRecordTests {
    static let attributes: [String: AttributeValue] = [
        "acct": .string("alice"), "svce": .string("Café"), "gena": .data(Data([0, 1, 2])), "crtr": .number(-7),
        "invi": .bool(true), "cdat": .date(Date(timeIntervalSinceReferenceDate: 12.5)),
    ]

    @Test func aRecordSurvivesItsBinaryForm() throws {
        let bytes = ItemRecord(attributes: Self.attributes).encoded()
        #expect(bytes.first == AttributeRecordEncoding.formatByte)
        #expect(try ItemRecord.decode(bytes).attributes == Self.attributes)
    }

    @Test func aRecordWrittenAsJSONByAnEarlierVersionIsStillRead() throws {
        // What `JSONEncoder().encode(ItemRecord)` wrote before the binary form.
        let legacy = try JSONEncoder().encode(LegacyRecord(attributes: Self.attributes))
        #expect(legacy.first == UInt8(ascii: "{"))
        #expect(try ItemRecord.decode(legacy).attributes == Self.attributes)
    }

    @Test(arguments: [
        Data(), Data([0]), Data([0, 0xFF, 0xFF, 0xFF, 0xFF]), Data([7, 1, 2]), Data("{\"attributes\":".utf8),
        AttributeRecordEncoding.encode(["acct": .string("a")]) + Data([0]),
    ])
    func malformedRecordsAreRefusedWithErrSecDecode(_ bytes: Data) {
        #expect(throws: KeychainError.errSecDecode) { try ItemRecord.decode(bytes) }
    }

    /// The Codable shape the earlier versions encoded.
    struct LegacyRecord: Encodable {
        var attributes: [String: AttributeValue]
    }
}
