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

    /// What stands before each line of a sheet's reason, on the terminal and on the desktop, so
    /// that no reason can draw a line that starts as the sheet's first line does
    /// (`"firefox" is trying to authenticate you.` under the genuine one).
    static let reasonIndent = "  "

    /// `text` in lines of at most `width` columns, broken at spaces where it can be; `columns`
    /// says how many a character takes (one, unless a sheet counts otherwise).
    static func wrap(_ text: String, width: Int, columns: (Character) -> Int = { _ in 1 }) -> [String] {
        var lines: [String] = []
        var line = ""
        var used = 0
        func end() {
            lines.append(line)
            line = ""
            used = 0
        }
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let size = word.reduce(0) { $0 + columns($1) }
            if !line.isEmpty, used + 1 + size > width { end() }
            if !line.isEmpty {
                line += " "
                used += 1
            }
            for character in word {
                if used > 0, used + columns(character) > width { end() }
                line.append(character)
                used += columns(character)
            }
        }
        lines.append(line)
        return lines
    }

    /// The columns a character takes on the desktop sheet, counted wide: two for East Asian wide
    /// and full-width characters and emoji, one for every other. No Latin glyph is wider than an
    /// em, so a line of `n` columns is at most `n` ems wide.
    static func desktopColumns(_ character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 1 }
        if scalar.properties.isEmojiPresentation { return 2 }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1FAFF, 0x20000...0x3FFFD:
            return 2
        default: return 1
        }
    }
}
