import Foundation

/// keychainctl's messages on standard error.
enum StandardError {
    /// Writes `text`'s UTF-8.
    ///
    /// From the string's own buffer, not through `Data(text.utf8)`: that initializer asks at run
    /// time whether `String.UTF8View` is `ContiguousBytes`, and the first such question in a
    /// process searches every protocol conformance of this statically linked program (335,000
    /// instructions, a ninth of a whole lookup that finds nothing, `valgrind --tool=callgrind`).
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { FileHandle.standardError.write(Data(buffer: $0)) }
    }
}
