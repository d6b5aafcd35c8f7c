import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// keychaind's log on standard error, a line per event in the format of swift-log's
/// `StreamLogHandler`, which it replaces:
///
///     2026-11-25T02:09:04+0000 info keychaind: app=/usr/bin/git audit=true class=genp connection=5
/// result=ok service=github.com uid=1000 [KeychainDaemon] read
///
/// The daemon logs every item an app reads or changes (the audit trail), on the thread that
/// answers it. `StreamLogHandler` spent about 40,000 instructions on such a line (callgrind): it
/// merges the logger's metadata and the line's into a new dictionary, sorts and joins it
/// through closures, and formats the time with `localtime`, which checks `/etc/localtime` at
/// every call. That was a quarter of the daemon's work to answer a miss. This handler sorts the few
/// pairs in an array, formats the time once a second, and writes each line with one `write(2)`.
public struct DaemonLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let descriptor: Int32

    /// A handler for the logger `label`, writing to `descriptor` (standard error by default).
    public init(
        label: String, descriptor: Int32 = STDERR_FILENO,
        metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider
    ) {
        self.label = label
        self.descriptor = descriptor
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        write(line(event, at: time(nil)))
    }

    /// The line for `event` at `second`, as `StreamLogHandler` writes it: the line's metadata
    /// over the provider's over the logger's, sorted by key. Built as bytes: a `String` grown
    /// piece by piece cost a few hundred instructions a piece.
    func line(_ event: LogEvent, at second: time_t) -> [UInt8] {
        var pairs: [(key: String, value: Logger.Metadata.Value)] = []
        let provided = metadataProvider?.get() ?? [:]
        let explicit = event.metadata ?? [:]
        pairs.reserveCapacity(metadata.count + provided.count + explicit.count + 2)
        for (key, value) in metadata where provided[key] == nil && explicit[key] == nil { pairs.append((key, value)) }
        for (key, value) in provided where explicit[key] == nil { pairs.append((key, value)) }
        for (key, value) in explicit { pairs.append((key, value)) }
        if let error = event.error {
            pairs.removeAll { $0.key == "error.message" || $0.key == "error.type" }
            pairs.append(("error.message", "\(error)"))
            pairs.append(("error.type", "\(String(reflecting: type(of: error)))"))
        }
        pairs.sort { $0.key < $1.key }
        var line: [UInt8] = []
        line.reserveCapacity(256)
        line += Self.timestamp(second).utf8
        line.append(UInt8(ascii: " "))
        line += event.level.rawValue.utf8
        if !label.isEmpty {
            line.append(UInt8(ascii: " "))
            line += label.utf8
        }
        line.append(UInt8(ascii: ":"))
        for (key, value) in pairs {
            line.append(UInt8(ascii: " "))
            line += key.utf8
            line.append(UInt8(ascii: "="))
            line += value.description.utf8
        }
        line += " [".utf8
        line += event.source.utf8
        line += "] ".utf8
        line += event.message.description.utf8
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// Writes `line` whole: lines from several threads do not interleave in this process.
    private func write(_ line: [UInt8]) {
        line.withUnsafeBytes { bytes in
            Self.writing.withLock { _ in
                var offset = 0
                while offset < bytes.count {
                    let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { return }
                    offset += written
                }
            }
        }
    }

    private static let writing = Mutex(())

    /// The last second formatted, and its text.
    private static let lastTimestamp = Mutex<(second: time_t, text: String)?>(nil)

    /// `second` as local time, `%Y-%m-%dT%H:%M:%S%z` (as `StreamLogHandler`).
    static func timestamp(_ second: time_t) -> String {
        if let last = lastTimestamp.withLock({ $0 }), last.second == second { return last.text }
        var seconds = second
        var local = tm()
        var buffer = [CChar](repeating: 0, count: 64)
        guard localtime_r(&seconds, &local) != nil, strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local) > 0
        else { return "<unknown>" }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        lastTimestamp.withLock { $0 = (second, text) }
        return text
    }
}
