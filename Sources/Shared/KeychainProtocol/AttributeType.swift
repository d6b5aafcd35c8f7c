import Foundation

/// How Apple's keychain types an attribute (the `SECDB_ATTR` table of its `SecItemSchema.c`),
/// which decides the values the attribute takes and how it keeps them.
///
/// Apple's conversions (`copyBlob`, `copyNumber` and `copyData` in `SecDbItem.c`) happen before
/// an item is stored or a query compared; the client applies them here, so a value reaches the
/// server in the form iOS keeps. A value keeps its type: an account given as `Data` is not the
/// same account as that text given as a string, as on iOS, where the two are separate items and
/// a query must use the type the item was stored with.
public enum AttributeType: String, Sendable {
    /// Apple's Blob (`acct`, `svce`, `labl`, `desc`, `icmt`, `gena`, `sdmn`, `srvr`, `atyp`,
    /// `path`): a string, data or a number, kept as given.
    case blob
    /// Apple's Number (`crtr`, `type`, `port`): a number; a boolean becomes 0 or 1, a string that
    /// is an integer's decimal form becomes that number, and any other string (a four-character
    /// code such as `"aapl"`) is kept as the string.
    case number
    /// Apple's Data: data; a string becomes its UTF-8 bytes.
    case data
    /// A string only.
    case string
    /// A boolean (a number 0 or 1 is one).
    case bool
    /// A date.
    case date

    /// Whether a stored or queried value has a form this type keeps.
    public func accepts(_ value: AttributeValue) -> Bool {
        switch (self, value) {
        case (.blob, .string), (.blob, .data), (.blob, .number): true
        case (.number, .number), (.number, .string): true
        case (.data, .data), (.string, .string), (.bool, .bool), (.date, .date): true
        default: false
        }
    }

    /// The value a primary-key attribute takes when an item is added without it (Apple's
    /// default-empty and default-zero flags). UNCONFIRMED which type iOS gives an absent Blob;
    /// the empty string is chosen, so an absent account equals `""`, not empty `Data`.
    public var emptyValue: AttributeValue {
        switch self {
        case .blob, .string: .string("")
        case .number: .number(0)
        case .data: .data(Data())
        case .bool: .bool(false)
        case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
        }
    }

    /// What the type takes, for error messages.
    public var takes: String {
        switch self {
        case .blob: "a string or data"
        case .number: "a number"
        case .data: "data"
        case .string: "a string"
        case .bool: "a boolean"
        case .date: "a date"
        }
    }
}
