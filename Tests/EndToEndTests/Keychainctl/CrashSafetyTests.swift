import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Killing `keychainctl` with SIGKILL loses nothing that was acknowledged and erases no
/// failed passcode attempt.
@Suite struct CrashSafetyTests {
    @Test func aKilledStreamOfAddsLosesNoAcknowledgedItem() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        // A shell loop adding items, printing "ack N" only after keychainctl reported success.
        let script =
            "for i in $(seq 1 400); do printf 'secret-%s' $i | '\(CommandRunner.binary.path)' add-generic-password "
            + "-s stream -a item$i && echo ack $i; done"
        let loop = try SpawnedProgram(
            ChildSpawn.find("bash") ?? "/bin/bash", ["-c", script], environment: shell.environment,
            capturingOutput: true)
        usleep(1_500_000)
        // Kill the loop and the keychainctl it is running, wherever that one is in its write.
        let children =
            (try? String(
                contentsOfFile: "/proc/\(loop.processIdentifier)/task/\(loop.processIdentifier)/children",
                encoding: .utf8)) ?? ""
        kill(loop.processIdentifier, SIGKILL)
        for child in children.split(separator: " ").compactMap({ Int32($0) }) { kill(child, SIGKILL) }
        loop.waitUntilExit()
        let acknowledged = String(decoding: loop.readOutputToEnd(), as: UTF8.self)
        let acks = acknowledged.split(separator: "\n").compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
        #expect(acks.count > 3, "the loop acknowledged too few items to prove anything")
        let dump = try shell.run(["dump-keychain"])
        #expect(dump.status == 0, "the database does not open cleanly: \(dump.stderr)")
        for i in acks {
            let found = try shell.run(["find-generic-password", "-s", "stream", "-a", "item\(i)", "-w"])
            #expect(found.stdout == "secret-\(i)\n", "acknowledged item \(i) was lost")
        }
    }

    @Test func aFailedAttemptIsCountedEvenWhenTheProcessIsKilledDuringTheCheck() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        #expect(try shell.run(["passcode", "set"], input: "1234\n").status == 0)
        try shell.run(["lock"])
        let attempts = shell.keychainDirectory.appendingPathComponent("attempts")
        let before = try Data(contentsOf: attempts)
        let unlock = try shell.launch(["unlock"])
        unlock.stdin.fileHandleForWriting.write(Data("0000\n".utf8))
        // Kill it the moment the attempt is on disk, while the key derivation still runs.
        let deadline = Date().addingTimeInterval(10)
        while (try? Data(contentsOf: attempts)) == before && Date() < deadline { usleep(1000) }
        kill(unlock.process.processIdentifier, SIGKILL)
        unlock.process.waitUntilExit()
        #expect(
            unlock.process.endedBySignal,
            "the check finished before the kill; the test proved nothing")
        #expect(try shell.run(["status"]).stdout.contains("failed passcode attempts: 1"))
    }
}
