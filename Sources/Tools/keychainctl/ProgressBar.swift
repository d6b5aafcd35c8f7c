import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A count and a bar on standard error, redrawn in place, while it is a terminal; nothing at
/// all otherwise, so that scripts stay quiet.
struct ProgressBar {
    private let label: String
    private let shown = isatty(STDERR_FILENO) == 1
    private static let width = 30

    init(_ label: String) {
        self.label = label
    }

    /// Draws `items` and the bar at `fraction` (0 to 1).
    func show(items: Int, fraction: Double) {
        guard shown else { return }
        let filled = Int((min(max(fraction, 0), 1) * Double(Self.width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: Self.width - filled)
        StandardError.write("\r\(label) \(items) items [\(bar)] \(Int((fraction * 100).rounded(.down)))%")
    }

    /// Ends the line the bar was drawn on.
    func end() {
        guard shown else { return }
        StandardError.write("\n")
    }
}
