/// Text from callers made safe to show on a terminal: a program name or a reason could carry
/// escape sequences that clear the screen, move the cursor over the sheet or set the window
/// title.
enum PromptText {
    /// `text` without escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL or ST`, and
    /// two-character ones), without other control characters (C0, DEL, C1) and without format
    /// characters (Unicode's Cf: the bidirectional overrides and isolates U+202A–U+202E and
    /// U+2066–U+2069, which could reorder what follows, and the zero-width ones); newlines, tabs
    /// and the line and paragraph separators become spaces, and a run of spaces one. At most
    /// `limit` characters, ending in "…" when cut.
    static func clean(_ text: String, limit: Int) -> String {
        var cleaned = String.UnicodeScalarView()
        var scalars = text.unicodeScalars.makeIterator()
        func space() { if cleaned.last != " " { cleaned.append(" ") } }
        while let scalar = scalars.next() {
            switch scalar.value {
            case 0x1b:
                skipEscapeSequence(&scalars)
            case 0x09, 0x0a, 0x0d, 0x20: space()
            case 0x00...0x1f, 0x7f...0x9f: continue
            default:
                switch scalar.properties.generalCategory {
                case .format: continue
                case .lineSeparator, .paragraphSeparator, .spaceSeparator: space()
                default: cleaned.append(scalar)
                }
            }
        }
        let result = String(cleaned)
        return result.count > limit ? String(result.prefix(limit - 1)) + "…" : result
    }

    private static func skipEscapeSequence(_ scalars: inout String.UnicodeScalarView.Iterator) {
        guard let introducer = scalars.next() else { return }
        switch introducer {
        case "[":
            // Parameters and intermediates, up to a final byte in @…~.
            while let scalar = scalars.next(), !(0x40...0x7e).contains(scalar.value) {}
        case "]", "P", "_", "^":
            // A string, up to BEL or ESC \.
            while let scalar = scalars.next() {
                if scalar.value == 0x07 { return }
                if scalar.value == 0x1b { _ = scalars.next(); return }
            }
        default:
            return
        }
    }

    /// `text` in lines of at most `width` characters, broken at spaces where it can be.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            var word = Substring(word)
            while word.count > width {
                if !line.isEmpty { lines.append(line); line = "" }
                lines.append(String(word.prefix(width)))
                word = word.dropFirst(width)
            }
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        lines.append(line)
        return lines
    }
}
