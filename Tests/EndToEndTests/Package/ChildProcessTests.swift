import Foundation
import Testing

/// What a program a test starts inherits from the test: no blocked and no ignored signal (the
/// test thread blocks HUP, INT, TERM and CHLD; a child that kept that mask would outlive the
/// SIGTERM a test sends it), and no descriptor but its standard three.
@Suite struct ChildProcessTests {
    @Test func aCommandStartsWithNoSignalHeldBackAndOnlyItsStandardDescriptors() throws {
        let runner = try CommandRunner()
        defer { runner.cleanUp() }
        // grep, run in bash's place, reports the state it began with; bash's own is its own.
        // ls writes to a file, not a pipe: while a pipeline starts, bash itself holds the pipe's
        // descriptors, and ls could list them (it did in 138 of 300 runs by hand).
        let output = try runner.script(
            "cd '\(runner.home.path)'; ls /proc/$$/fd > fds.$$; sort -n fds.$$ | tr '\\n' ' '; rm fds.$$; echo; "
                + "exec grep -E '^Sig(Blk|Ign):' /proc/self/status")
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        // The standard signals, 1 to 31: glibc keeps 32 and 33 for itself, out of any sigset.
        func standardSignals(_ field: String) -> UInt64? {
            lines.first { $0.hasPrefix(field + ":\t") }.flatMap { UInt64($0.dropFirst(field.count + 2), radix: 16) }
                .map { $0 & 0x7fff_ffff }
        }
        #expect(standardSignals("SigBlk") == 0, "\(output.stdout)")
        #expect(standardSignals("SigIgn") == 0, "\(output.stdout)")
        #expect(lines.first == "0 1 2 ", "\(output.stdout)")
    }
}
