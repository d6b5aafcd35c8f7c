import Foundation
import Security
import Testing

/// The Core Foundation data functions keychain code calls.
@Suite struct CoreFoundationDataTests {
    /// The data outlives the buffer it was made from, as Apple's sample code needs.
    @Test func dataMadeWithoutACopyOutlivesItsBuffer() {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4)
        buffer.initialize(from: [1, 2, 3, 4], count: 4)
        let data = CFDataCreateWithBytesNoCopy(nil, buffer, 4, kCFAllocatorNull)
        buffer.update(repeating: 0, count: 4)
        buffer.deallocate()
        #expect(data as Data? == Data([1, 2, 3, 4]))
        #expect(CFDataGetLength(data) == 4)
        #expect(Array(UnsafeBufferPointer(start: CFDataGetBytePtr(data), count: 4)) == [1, 2, 3, 4])
    }

    @Test func emptyAndNegativeLengths() {
        #expect(CFDataGetLength(CFDataCreate(nil, nil, 0)) == 0)
        #expect(CFDataCreate(nil, nil, -1) == nil)
        #expect(kCFBundleIdentifierKey as String == "CFBundleIdentifier")
    }

    /// Each kind of keychain result has its own type identifier, as on Apple platforms.
    @Test func typeIdentifiersTellResultsApart() throws {
        let attributes: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
        ]
        let key = try #require(SecKeyCreateRandomKey(attributes as CFDictionary, nil))
        let identifiers = [
            CFGetTypeID(key), CFGetTypeID(Data() as CFData), CFGetTypeID("s" as CFString),
            CFGetTypeID(NSDictionary()), CFGetTypeID(NSArray()), CFGetTypeID(kCFBooleanTrue),
            CFGetTypeID(NSNumber(value: 7)), CFGetTypeID(NSDate()),
        ]
        #expect(
            identifiers == [
                SecKeyGetTypeID(), CFDataGetTypeID(), CFStringGetTypeID(), CFDictionaryGetTypeID(), CFArrayGetTypeID(),
                CFBooleanGetTypeID(), CFNumberGetTypeID(), CFDateGetTypeID(),
            ])
        #expect(Set(identifiers).count == identifiers.count)
    }
}
