/// The code `keychainctl sync join` prints once a member answered: its first line,
/// `code NNNNNN`.
enum SyncJoinCode {
    /// The six digits `stdout` shows, or nil.
    static func shown(_ stdout: String) -> String? {
        guard let line = stdout.split(separator: "\n").first(where: { $0.hasPrefix("code ") }) else { return nil }
        let code = String(line.dropFirst("code ".count))
        return code.count == 6 && code.allSatisfy(\.isNumber) ? code : nil
    }
}
