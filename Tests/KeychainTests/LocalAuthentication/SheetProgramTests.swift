import Testing

@testable import KeychainPrompt

/// Which program draws the keychain's sheets, and what it is told.
@Suite struct SheetProgramTests {
    /// Issue 53: pinentry-curses, the terminal's default, ignored Escape. A terminal gets the
    /// keychain's own sheet unless a pinentry is configured.
    @Test func aTerminalGetsTheConfiguredPinentryElseTheKeychainsOwnSheet() {
        #expect(SheetProgram.forTerminal(configured: "/opt/pinentry") == .pinentry("/opt/pinentry"))
        #expect(
            SheetProgram.forTerminal(configured: "/usr/bin/pinentry-curses") == .pinentry("/usr/bin/pinentry-curses"))
        #expect(SheetProgram.forTerminal(configured: "none") == .keychain)
        #expect(SheetProgram.forTerminal(configured: nil) == .keychain)
        #expect(SheetProgram.forTerminal(configured: "") == .keychain)
    }

    @Test func aDesktopAppGetsTheConfiguredOrTheFirstDesktopPinentry() {
        #expect(SheetProgram.forDesktop(configured: "none", isProgram: { _ in true }) == nil)
        #expect(SheetProgram.forDesktop(configured: "/usr/bin/pinentry-curses", isProgram: { _ in true }) == nil)
        #expect(SheetProgram.forDesktop(configured: "/opt/p", isProgram: { _ in false }) == "/opt/p")
        #expect(SheetProgram.forDesktop(configured: nil, isProgram: { _ in true }) == "/usr/bin/pinentry-gtk-2")
        #expect(
            SheetProgram.forDesktop(configured: "", isProgram: { $0.hasSuffix("gnome3") })
                == "/usr/bin/pinentry-gnome3")
        #expect(SheetProgram.forDesktop(configured: nil, isProgram: { _ in false }) == nil)
    }

    /// The app's environment names the desktop, so it is checked: a remote X display, a
    /// Wayland name that is a path, a relative authority file are not used.
    @Test func onlyALocalDesktopFromTheAppsEnvironmentIsUsed() {
        #expect(DesktopDisplay(environment: ["DISPLAY": ":0"])?.x11 == ":0")
        #expect(DesktopDisplay(environment: ["DISPLAY": "unix:1.0"])?.x11 == "unix:1.0")
        #expect(DesktopDisplay(environment: ["DISPLAY": "attacker.example:0"]) == nil)
        #expect(DesktopDisplay(environment: ["DISPLAY": ":0; rm"]) == nil)
        #expect(DesktopDisplay(environment: ["WAYLAND_DISPLAY": "wayland-0"])?.wayland == "wayland-0")
        #expect(DesktopDisplay(environment: ["WAYLAND_DISPLAY": "../../tmp/evil"]) == nil)
        let display = DesktopDisplay(environment: ["DISPLAY": ":1", "XAUTHORITY": "../x"])
        #expect(display?.xAuthority == nil)
        #expect(display?.variables == ["DISPLAY": ":1"])
    }

    @Test func textForPinentryCarriesNoControlCharactersAndEscapesItsOwn() {
        #expect(Pinentry.escaped("100% sure\nnext\r\u{1b}[2J\u{7}") == "100%25 sure%0Anext%0D[2J")
        #expect(Pinentry.unescaped(Array("a%25b%0Ac%zz%4".utf8)) == Array("a%b\nc%zz%4".utf8))
    }

    @Test(arguments: [
        ("xterm-256color", true), ("screen.xterm", true), ("", false), ("x y", false),
        ("xterm\u{1b}", false), (String(repeating: "a", count: 65), false),
    ])
    func aTerminalTypeFromTheAppIsChecked(_ type: String, _ accepted: Bool) {
        #expect(PinentryPrompt.isTerminalType(type) == accepted)
    }
}
