import Foundation

/// One chore, as the guide's sample has it.
struct Chore: Codable, Equatable {
    var title: String
    var notes: String
    var done: Bool
}

/// The chore list, kept as JSON under `$XDG_DATA_HOME/chores/chores.json`. Anyone may read it;
/// changing it is what needs the device owner.
struct ChoreList {
    let url: URL
    var chores: [Chore]

    static func defaultURL() -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".local/share")
        return base.appendingPathComponent("chores/chores.json")
    }

    /// The list on disk, or the guide's two sample chores on first run.
    static func load(_ url: URL = defaultURL()) -> ChoreList {
        let chores = (try? Data(contentsOf: url)).flatMap { try? JSONDecoder().decode([Chore].self, from: $0) }
        return ChoreList(url: url, chores: chores ?? [
            Chore(title: "Groceries", notes: "Milk, eggs, bread", done: false),
            Chore(title: "Devices", notes: "Charge the laptop", done: false),
        ])
    }

    func save() throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(chores).write(to: url, options: .atomic)
    }
}
