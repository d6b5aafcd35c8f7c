// The start of a Swift command that links Foundation, as keychainctl is built (static Swift
// runtime and Foundation, the same linker flags: Benchmarks/compare.sh builds it): it writes one
// line and ends. keychainctl's whole-process lookup can be no faster than this.
import Foundation

FileHandle.standardOutput.write(Data("correct-horse-battery-staple\n".utf8))
