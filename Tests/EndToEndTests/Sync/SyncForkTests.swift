import Foundation
import Testing

/// Issue 57: a forked circle kept a removed device in. Circle of laptop, phone and desktop; the
/// phone and the desktop offline; the laptop removes the phone. The remote serves the desktop
/// the history from before the removal, on which the phone, a member of that version, removes
/// the laptop: the desktop took that list and wrote items the phone read, and when the laptop's
/// history came back it refused the laptop's list for good ("this device has accepted version
/// 6"), telling nobody. Now each list names the digest of the one it follows and every version
/// stays on the remote: the desktop finds the fork, publishes nothing, says so in `sync now`,
/// `sync status` and `keychainctl status`, and the owner picks the branch.
@Suite(.serialized) struct SyncForkTests {
    @Test func aForkedCircleIsFoundAndTheOwnerPicksTheBranch() throws {
        let circle = try SyncCommandTests.Circle(["laptop", "phone", "desktop"])
        defer { circle.end() }
        let devices = try circle["laptop"].run(["sync", "devices"]).stdout
        func id(_ name: String) throws -> String {
            let line = try #require(devices.split(separator: "\n").first { $0.contains("  \(name)") })
            return String(line.prefix(8))
        }
        let (laptop, phone) = (try id("laptop"), try id("phone"))
        let shared = try circle.remote.head()
        #expect(try circle["laptop"].run(["sync", "remove-device", phone]).status == 0)
        let laptopsHistory = try circle.remote.head()

        // The remote serves the history from before the removal; the phone removes the laptop.
        try circle.remote.reset(to: shared)
        let removal = try circle["phone"].run(["sync", "remove-device", laptop])
        #expect(removal.status == 0, "\(removal.stderr)")
        // Before the desktop sees the laptop's history, nothing tells the forks apart: what it
        // writes now, the phone reads (Docs/Sync.md, "What a forking remote can still do").
        #expect(try circle["desktop"].run(["sync", "now"]).status == 0)
        #expect(
            try circle["desktop"].addPassword("during", account: "me", ["--synchronizable"], secret: "on the fork"))
        #expect(try circle["desktop"].run(["sync", "now"]).status == 0)
        #expect(try circle["phone"].run(["sync", "now"]).status == 0)
        #expect(try circle.secret("during", on: "phone") == "on the fork")

        // The laptop's history comes back: the desktop finds the fork and stops.
        try circle.remote.reset(to: laptopsHistory)
        let found = try circle["desktop"].run(["sync", "now"])
        #expect(found.status != 0 && found.stderr.contains("history forked"), "\(found.stdout)\(found.stderr)")
        #expect(found.stderr.contains("phone (") && found.stderr.contains("laptop ("), "\(found.stderr)")
        let before = try circle.remote.files().filter { $0.key.hasPrefix("devices/") }
        #expect(
            try circle["desktop"].addPassword("held", account: "me", ["--synchronizable"], secret: "not published"))
        let again = try circle["desktop"].run(["sync", "now"])
        #expect(again.status != 0 && again.stderr.contains("history forked"), "on every sync: \(again.stderr)")
        #expect(try circle.remote.files().filter { $0.key.hasPrefix("devices/") } == before, "it published nothing")
        let status = try circle["desktop"].run(["sync", "status"])
        #expect(status.stdout.contains("history forked"), "\(status.stdout)")
        let device = try circle["desktop"].run(["status"])
        #expect(device.stdout.contains("sync: STOPPED: the circle's history forked"), "\(device.stdout)")

        // The owner takes the laptop's branch on the desktop: it syncs again, and its items reach
        // the laptop, sealed under the laptop's key; the phone, removed there, reads nothing more.
        let picked = try circle["desktop"].run(["sync", "pick-branch", "--take"])
        #expect(picked.status == 0, "\(picked.stdout)\(picked.stderr)")
        #expect(!(try circle["desktop"].run(["status"]).stdout.contains("STOPPED")))
        #expect(try circle["laptop"].run(["sync", "now"]).status == 0)
        #expect(try circle.secret("held", on: "laptop") == "not published")
        #expect(try circle.secret("during", on: "laptop") == "on the fork")
        #expect(try circle["desktop"].addPassword("after", account: "me", ["--synchronizable"], secret: "later"))
        #expect(try circle["desktop"].run(["sync", "now"]).status == 0)
        let phoneSync = try circle["phone"].run(["sync", "now"])
        #expect(phoneSync.status != 0, "\(phoneSync.stdout)")
        #expect(try circle.secret("after", on: "phone") == nil)
        let listed = try circle["desktop"].run(["sync", "devices"]).stdout
        #expect(listed.contains("  laptop") && !listed.contains("  phone"), "\(listed)")
    }
}
