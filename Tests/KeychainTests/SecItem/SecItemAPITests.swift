import Foundation
import Keychain
import Testing

/// Every suite that goes through the process-wide transport (the SecItem functions and the
/// `Keychain` facade) is nested here, so they run one at a time.
@Suite(.serialized) struct SecItemAPITests {}
