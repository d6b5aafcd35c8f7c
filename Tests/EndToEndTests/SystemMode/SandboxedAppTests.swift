import Testing

@testable import KeychainDaemon

/// What a sandbox's words are taken to claim, before the daemon checks the claim against the
/// file the process runs (``AppIdentityTests`` runs a Flatpak sandbox for real; no machine here
/// has AppArmor, so a snap's label is checked as the kernel would give it).
@Suite struct SandboxedAppTests {
    @Test func aFlatpakInfoInTheSystemInstallationClaimsItsApp() {
        let info = """
            [Application]
            name=org.gnome.Calculator
            runtime=runtime/org.gnome.Platform/x86_64/46

            [Instance]
            instance-id=1234
            app-path=/var/lib/flatpak/app/org.gnome.Calculator/x86_64/stable/9f2e/files
            """
        #expect(
            SandboxedApp.flatpakClaim(info)
                == .app(
                    SandboxedApp(
                        registryKey: "flatpak:org.gnome.Calculator", sandboxPrefix: "/app/",
                        hostDirectory: "/var/lib/flatpak/app/org.gnome.Calculator/x86_64/stable/9f2e/files/")))
    }

    @Test(arguments: [
        "[Application]\nname=org.gnome.Calculator\n[Instance]\n"
            + "app-path=/home/alice/.local/share/flatpak/app/org.gnome.Calculator/x86_64/stable/1/files",
        "[Application]\nname=org.gnome.Calculator\n[Instance]\n"
            + "app-path=/var/lib/flatpak/app/org.other.App/x86_64/stable/1/files",
        "[Application]\nname=org.gnome.Calculator\n[Instance]\n"
            + "app-path=/var/lib/flatpak/app/org.gnome.Calculator/../../../../tmp/x",
        "[Application]\nname=org.gnome.Calculator\n",
        "[Application]\nname=../etc\n[Instance]\napp-path=/var/lib/flatpak/app/../etc/",
        "[Application]\nname=calculator\n[Instance]\napp-path=/var/lib/flatpak/app/calculator/x",
        "[Instance]\napp-path=/var/lib/flatpak/app/org.gnome.Calculator/x86_64/stable/1/files",
    ])
    func aFlatpakInfoOutsideTheSystemInstallationIsRefused(_ info: String) {
        guard case .refused = SandboxedApp.flatpakClaim(info) else {
            Issue.record("claimed: \(info)")
            return
        }
    }

    @Test func anEnforcedSnapLabelClaimsItsSnap() {
        #expect(
            SandboxedApp.snapClaim("snap.firefox.firefox (enforce)")
                == .app(
                    SandboxedApp(
                        registryKey: "snap:firefox", sandboxPrefix: "/snap/firefox/", hostDirectory: "/snap/firefox/")))
        #expect(
            SandboxedApp.snapClaim("snap.my-app.hook.configure (enforce)")
                == .app(
                    SandboxedApp(
                        registryKey: "snap:my-app", sandboxPrefix: "/snap/my-app/", hostDirectory: "/snap/my-app/")))
    }

    @Test func otherLabelsClaimNothingAndAnUnenforcedSnapIsRefused() {
        #expect(SandboxedApp.snapClaim(nil) == SandboxedApp.Claim.none)
        #expect(SandboxedApp.snapClaim("unconfined") == SandboxedApp.Claim.none)
        #expect(SandboxedApp.snapClaim("/usr/bin/man (enforce)") == SandboxedApp.Claim.none)
        for label in [
            "snap.firefox.firefox (complain)", "snap.firefox.firefox", "snap.Firefox.x (enforce)", "snap..x (enforce)",
            "snap.firefox (enforce)",
        ] {
            guard case .refused = SandboxedApp.snapClaim(label) else {
                Issue.record("claimed: \(label)")
                continue
            }
        }
    }
}
