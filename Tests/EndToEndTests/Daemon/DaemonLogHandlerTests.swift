#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Synchronization
import Testing

@testable import KeychainDaemon

/// keychaind's log handler writes what swift-log's `StreamLogHandler` wrote, line for line, so
/// that a reader of the audit trail (or a script) sees no change.
@Suite struct DaemonLogHandlerTests {
    /// What `StreamLogHandler` writes, kept.
    private final class Lines: TextOutputStream, Sendable {
        let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
    }

    private struct Failure: Error, CustomStringConvertible {
        var description: String { "the disk is full" }
    }

    private static let events: [LogEvent] = [
        LogEvent(
            level: .info, message: "read",
            metadata: [
                "uid": "1000", "app": "/usr/bin/git", "service": "github.com", "result": "ok", "connection": "5",
            ], source: "KeychainDaemon", file: #fileID, function: #function, line: #line),
        LogEvent(
            level: .critical, message: "integrity check failed: nothing was returned",
            metadata: ["audit": "overridden", "list": ["a", "b"]], source: "KeychainDaemon", file: #fileID,
            function: #function, line: #line),
        LogEvent(
            level: .notice, message: "keychaind listening", metadata: nil, source: "KeychainDaemon", file: #fileID,
            function: #function, line: #line),
        LogEvent(
            level: .error, message: "failed", error: Failure(), metadata: ["b": "2"], source: "S", file: #fileID,
            function: #function, line: #line),
    ]

    @Test(arguments: ["keychaind", ""], [[:], ["audit": "true"]] as [Logger.Metadata])
    func linesAreStreamLogHandlersLines(label: String, loggerMetadata: Logger.Metadata) {
        let lines = Lines()
        var stream = StreamLogHandler(label: label, stream: lines, metadataProvider: nil)
        var handler = DaemonLogHandler(label: label, descriptor: -1, metadataProvider: nil)
        for (key, value) in loggerMetadata {
            stream[metadataKey: key] = value
            handler[metadataKey: key] = value
        }
        for event in Self.events {
            lines.text.withLock { $0 = "" }
            let second = time(nil)
            stream.log(event: event)
            let expected = lines.text.withLock { $0 }
            let written = String(decoding: handler.line(event, at: second), as: UTF8.self)
            // The same after the time; the time as StreamLogHandler gives it (unless the second
            // turned meanwhile).
            #expect(written.drop { $0 != " " } == expected.drop { $0 != " " })
            if time(nil) == second { #expect(written.prefix { $0 != " " } == expected.prefix { $0 != " " }) }
        }
    }

    @Test func theTimeIsFormattedOncePerSecond() {
        let second = time(nil) - 3600
        let first = DaemonLogHandler.timestamp(second)
        #expect(first.count == "2026-11-25T02:09:04+0000".count)
        #expect(DaemonLogHandler.timestamp(second) == first)
        #expect(DaemonLogHandler.timestamp(second + 1) != first)
    }

    @Test func aLineIsWrittenWhole() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let handler = DaemonLogHandler(label: "keychaind", descriptor: ends[1], metadataProvider: nil)
        handler.log(event: Self.events[0])
        close(ends[1])
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(ends[0], &buffer, buffer.count)
        let line = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
        #expect(
            line.hasSuffix(
                " keychaind: app=/usr/bin/git connection=5 result=ok service=github.com uid=1000 [KeychainDaemon] "
                    + "read\n"
            ), "\(line)")
    }
}
