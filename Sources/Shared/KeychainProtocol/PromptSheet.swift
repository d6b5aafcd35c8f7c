/// What the prompt shows: Apple's sheet, in words.
public struct PromptSheet: Sendable, Hashable {
    /// The program asking ("keychainctl", "chores").
    public var programName: String
    /// Why it asks (`localizedReason`).
    public var reason: String
    /// True while biometry is in play: the sheet tells the user to touch the sensor.
    public var asksForTouch: Bool
    /// The Cancel button's title.
    public var cancelTitle: String
    /// The fallback button's title, or nil when the sheet has no fallback button.
    public var fallbackTitle: String?
    /// True for a question the owner answers with a button and no authentication (the keychain
    /// asking whether one app may read another's item): the sheet says `reason` alone, and its
    /// two buttons are the answers (Cancel's title, the fallback's).
    public var isQuestion: Bool

    /// Creates a sheet.
    public init(
        programName: String, reason: String, asksForTouch: Bool, cancelTitle: String, fallbackTitle: String?,
        isQuestion: Bool = false
    ) {
        self.programName = programName
        self.reason = reason
        self.asksForTouch = asksForTouch
        self.cancelTitle = cancelTitle
        self.fallbackTitle = fallbackTitle
        self.isQuestion = isQuestion
    }
}
