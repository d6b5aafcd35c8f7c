import KeychainProtocol

extension PromptSheet {
    /// The asking program's name as every sheet shows it: cleaned of control characters, cut
    /// to 64 characters.
    var shownProgramName: String { PromptText.clean(programName, limit: 64) }

    /// What every drawing of the sheet says, each cleaned and bounded: who asks, why, and, while
    /// a touch can answer, that it waits for one. A question says its text alone.
    var paragraphs: [String] {
        if isQuestion { return [PromptText.clean(reason, limit: 400)] }
        var paragraphs = [
            "\"\(shownProgramName)\" is trying to authenticate you.", PromptText.clean(reason, limit: 400),
        ]
        if asksForTouch { paragraphs.append("Touch the fingerprint sensor.") }
        return paragraphs
    }
}
