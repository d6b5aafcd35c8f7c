// The start of a Swift command that links Foundation, as keychainctl is built (static Swift
// runtime and Foundation, the same linker flags: Benchmarks/compare.sh builds it): it writes one
// line and ends. keychainctl's whole-process lookup can be no faster than this.
//
// The line's bytes are copied from the string's own buffer: `Data(_:)` of a `String.UTF8View`
// would ask the runtime whether the view is `ContiguousBytes`, and that first question searches
// every protocol conformance in the program, a sixth of the floor's instructions that keychainctl
// does not spend.
import Foundation

var line = "correct-horse-battery-staple\n"
FileHandle.standardOutput.write(line.withUTF8 { Data(buffer: $0) })
