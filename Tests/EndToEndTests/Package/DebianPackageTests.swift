import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 54: the Debian package, built with Debian's tools (`dpkg-buildpackage`, debug
/// configuration: `DEB_BUILD_OPTIONS=noopt`), checked by lintian, then installed, used,
/// upgraded, removed and purged as an administrator would, in a copy of this machine
/// (``OverlayRoot``), using the installed paths alone. Issue 53: the README's Install block is
/// what the test runs — its build line, its `sudo apt-get install` lines as written — and its
/// PAM block's `passcode set` is the one before the PAM login.
@Suite(.serialized) struct DebianPackageTests {
    /// The README's Install block: the build tools' install, the build, the packages' install.
    static func installBlock() throws -> (tools: String, build: String, install: String) {
        let lines = try ReadmeTests.commands(ofBlockWith: "dpkg-buildpackage")
        try #require(lines.count == 3, "\(lines)")
        return (lines[0], lines[1], lines[2])
    }

    /// The packages, built once per run with the README's build line (`noopt` for a debug
    /// build's time, `-tc` to leave the tree clean): `swift-keychain` and `libpam-keychain`.
    static let built: Result<(directory: URL, log: String), PackageBuildFailure> = {
        let directory = URL(fileURLWithPath: "/tmp/kc-deb-\(UUID().uuidString.prefix(8))")
        do {
            let buildLine = try installBlock().build
            guard buildLine.hasPrefix("dpkg-buildpackage ") else {
                return .failure(PackageBuildFailure(description: "the README's build line: \(buildLine)"))
            }
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            let build = try SpawnedProgram(
                "/bin/sh",
                [
                    "-c",
                    """
                    set -e
                    cd '\(ReadmeTests.root.path)'
                    DEB_BUILD_OPTIONS='noopt nocheck noddebs' \(buildLine) -tc
                    mv ../swift-keychain_*.deb ../libpam-keychain_*.deb ../swift-keychain_*.buildinfo \
                        ../swift-keychain_*.changes '\(directory.path)/'
                    """,
                ], environment: ProcessInfo.processInfo.environment, capturingOutput: true, capturingErrors: true)
            let log = String(decoding: build.readOutputToEnd(), as: UTF8.self)
            guard build.terminationStatus == 0 else {
                return .failure(PackageBuildFailure(description: String(log.suffix(4000))))
            }
            return .success((directory, log))
        } catch {
            return .failure(PackageBuildFailure(description: "\(error)"))
        }
    }()

    struct PackageBuildFailure: Error, CustomStringConvertible {
        var description: String
    }

    static func package(_ name: String) throws -> URL {
        let directory = try built.get().directory
        let file = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).first {
                $0.hasPrefix(name + "_") && $0.hasSuffix(".deb")
            })
        return directory.appendingPathComponent(file)
    }

    /// lintian finds no error in either package.
    @Test func lintianFindsNoError() throws {
        let packages = [try Self.package("swift-keychain").path, try Self.package("libpam-keychain").path]
        let lintian = try SpawnedProgram(
            "/usr/bin/lintian", ["--fail-on", "error", "--tag-display-limit", "0"] + packages,
            environment: ProcessInfo.processInfo.environment, capturingOutput: true, capturingErrors: true)
        let report = String(decoding: lintian.readOutputToEnd(), as: UTF8.self)
        #expect(lintian.terminationStatus == 0, "\(report)")
        print("lintian:\n\(report)")
    }

    /// No installed program carries a run path. Each links the Swift runtime in, so none loads a
    /// library from beside itself, and `$ORIGIN` (SwiftPM's default) would only have the loader
    /// search `/usr/bin`'s hardware-capability folders for libc and libm at every start.
    @Test func noProgramCarriesARunPath() throws {
        let unpacked = "/tmp/kc-deb-unpacked-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: unpacked) }
        let environment = ProcessInfo.processInfo.environment
        let extract = try SpawnedProgram(
            "/usr/bin/dpkg-deb", ["-x", try Self.package("swift-keychain").path, unpacked], environment: environment)
        try #require(extract.terminationStatus == 0)
        for program in ["keychainctl", "keychaind", "keychain-secret-service", "git-credential-keychain"] {
            let readelf = try SpawnedProgram(
                "/usr/bin/readelf", ["--dynamic", "\(unpacked)/usr/bin/\(program)"], environment: environment,
                capturingOutput: true)
            let dynamicSection = String(decoding: readelf.readOutputToEnd(), as: UTF8.self)
            #expect(readelf.terminationStatus == 0 && dynamicSection.contains("(NEEDED)"), "\(dynamicSection)")
            #expect(
                !dynamicSection.contains("(RUNPATH)") && !dynamicSection.contains("(RPATH)"),
                "\(program) carries a run path:\n\(dynamicSection)")
        }
    }

    /// Installed with apt-get into a copy of this machine: keychainctl adds and reads for a
    /// user, the session bus starts the Secret Service through the installed activation file,
    /// a PAM login unlocks the user's keychain, the system daemon serves two users as its unit
    /// starts it, the man page renders and bash completes a subcommand. An upgrade keeps every
    /// item; remove and purge leave every keychain's data.
    @Test func theInstalledPackageWorksUpgradesAndRemovesCleanly() throws {
        _ = try Self.package("libpam-keychain")
        let machine = try OverlayRoot()
        defer { machine.cleanUp() }
        let alice = try LocalUser.alice()
        let bob = try LocalUser.bob()
        // The packages' directory (in /tmp) shows through.
        let debs = try Self.package("swift-keychain").deletingLastPathComponent().path
        // The earlier version: the same files, numbered 0.0.1 (the package's first release has
        // no earlier one).
        var result = try machine.run(
            """
            set -e
            cd \(debs)
            for deb in swift-keychain libpam-keychain; do
                rm -rf /tmp/$deb && dpkg-deb -R ${deb}_*.deb /tmp/$deb
                sed -i 's/^Version: .*/Version: 0.0.1/; s/(= [^)]*)/(= 0.0.1)/' /tmp/$deb/DEBIAN/control
                dpkg-deb -Zgzip -z1 -b /tmp/$deb /tmp/earlier-$deb.deb >/dev/null && rm -rf /tmp/$deb
            done
            apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confnew /tmp/earlier-swift-keychain.deb /tmp/earlier-libpam-keychain.deb
            dpkg-query -W swift-keychain libpam-keychain
            """)
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("swift-keychain\t0.0.1"), "\(result.stdout)")

        // A user's keychain, through the installed programs alone.
        // Alice as a login leaves her (HOME from the password database), as the PAM module runs
        // keychainctl for her.
        let home = "/home/kc-test-alice"
        let asAlice =
            "setpriv --reuid=\(alice.uid) --regid=\(alice.gid) --clear-groups env -i PATH=/usr/bin:/bin "
            + "HOME=\(home) USER=kc-test-alice LOGNAME=kc-test-alice "
        result = try machine.run(
            """
            set -e
            mkdir -p \(home) && chown \(alice.uid):\(alice.gid) \(home) && chmod 700 \(home)
            printf 'hunter2' | \(asAlice) keychainctl add-generic-password -s github.com -a alice
            \(asAlice) keychainctl find-generic-password -s github.com -a alice -w
            """)
        #expect(result.stdout.hasSuffix("hunter2\n"), "\(result.stdout)")

        // The upgrade, with alice's keychaind running, by the README's lines as written (from a
        // directory beside the packages, as after the build): her item reads after it.
        let block = try Self.installBlock()
        result = try machine.run(
            """
            set -e
            \(block.tools) </dev/null
            mkdir -p \(debs)/source && cd \(debs)/source
            \(block.install) </dev/null
            dpkg-query -W swift-keychain libpam-keychain
            """)
        #expect(result.status == 0, "\(result.stdout)")
        for package in ["swift-keychain", "libpam-keychain"] {
            #expect(
                result.stdout.contains("\(package)\t0.1.0\n"),
                "the README's install line did not install \(package) 0.1.0:\n\(result.stdout)")
        }
        result = try machine.run("\(asAlice) keychainctl find-generic-password -s github.com -a alice -w")
        #expect(result.stdout == "hunter2\n", "\(result.stdout)")

        // Installed where Debian's conventions put them.
        result = try machine.run(
            """
            dpkg -L swift-keychain libpam-keychain | sort
            grep -q 'deb-systemd-invoke $_dh_action' /var/lib/dpkg/info/swift-keychain.postinst && echo restarts-once-enabled
            dpkg-divert --list '*/org.freedesktop.secrets.service'
            """)
        for path in [
            "/usr/bin/keychainctl", "/usr/bin/keychaind", "/usr/bin/keychain-secret-service",
            "/usr/bin/git-credential-keychain", "/lib/systemd/system/keychaind.service",
            "/usr/lib/systemd/user/keychaind.socket", "/usr/share/dbus-1/services/org.freedesktop.secrets.service",
            "/usr/share/man/man1/keychainctl.1.gz", "/usr/share/bash-completion/completions/keychainctl",
            "/usr/lib/sysusers.d/swift-keychain.conf", "/usr/share/pam-configs/keychain",
            "/usr/lib/x86_64-linux-gnu/security/pam_keychain.so",
        ] {
            #expect(result.stdout.contains(path + "\n"), "\(path) is not installed:\n\(result.stdout)")
        }
        #expect(result.stdout.contains("diversion of /usr/share/dbus-1/services/org.freedesktop.secrets.service"))
        // An upgrade restarts the system daemon once it is enabled (debhelper's snippet).
        #expect(result.stdout.contains("restarts-once-enabled\n"))

        // The session bus starts the Secret Service from the installed activation file.
        result = try machine.run(
            """
            \(asAlice) dbus-run-session -- sh -c "printf 'ghp_token' | secret-tool store --label=GitHub service github.com \
            user alice && secret-tool lookup service github.com user alice"
            """)
        #expect(result.stdout.hasSuffix("ghp_token"), "\(result.stdout)")

        // The man page renders; bash completes a subcommand.
        result = try machine.run("MANWIDTH=80 man keychainctl 2>&1 | head -20")
        #expect(result.stdout.contains("keychainctl"), "\(result.stdout)")
        result = try machine.run(
            """
            bash -c '. /usr/share/bash-completion/completions/keychainctl; COMP_WORDS=(keychainctl dae); COMP_CWORD=1; \
            COMP_LINE="keychainctl dae"; COMP_POINT=15; _keychainctl keychainctl dae keychainctl; echo "${COMPREPLY[@]}"'
            """)
        #expect(result.stdout.contains("daemon"), "\(result.stdout)")

        // PAM: the installed profile is on (pam-auth-update), and stays on when enabled again;
        // a login with the password that is the keychain's passcode unlocks it.
        let password = "Login-pw-4711"
        let passcodeSet = try #require(try ReadmeTests.commands(ofBlockWith: "type your login password").first)
        #expect(passcodeSet == "keychainctl passcode set")
        result = try machine.run(
            """
            set -e
            grep -q pam_keychain.so /etc/pam.d/common-auth
            pam-auth-update --enable keychain
            grep -q pam_keychain.so /etc/pam.d/common-auth
            echo 'kc-test-alice:\(password)' | chpasswd
            printf '\(password)\\n' | \(asAlice) \(passcodeSet) >/dev/null
            \(asAlice) keychainctl lock
            \(asAlice) keychainctl status | grep -i locked
            printf '\(password)\\n' | pamtester login kc-test-alice authenticate open_session
            \(asAlice) keychainctl status
            """)
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("unlocked"), "\(result.stdout)")

        // The system daemon, as its installed unit starts it, serves alice and bob apart.
        result = try machine.run(
            """
            set -e
            trap 'cat /tmp/keychaind.log' EXIT
            getent passwd keychaind
            exec=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/keychaind.service)
            mkdir -p /run/keychain && chown keychaind:keychaind /run/keychain
            systemd-socket-activate -l /run/keychain/socket setpriv --reuid=keychaind --regid=keychaind \
                --init-groups --inh-caps=+sys_ptrace --ambient-caps=+sys_ptrace $exec >/tmp/keychaind.log 2>&1 &
            echo $! >/tmp/keychaind.pid
            for i in $(seq 50); do [ -S /run/keychain/socket ] && break; sleep 0.1; done
            chown keychaind:keychaind /run/keychain/socket && chmod 666 /run/keychain/socket  # SocketUser=, SocketMode=
            printf 'hers' | setpriv --reuid=\(alice.uid) --regid=\(alice.gid) --clear-groups keychainctl add-generic-password -s mail -a a
            printf 'his' | setpriv --reuid=\(bob.uid) --regid=\(bob.gid) --clear-groups keychainctl add-generic-password -s mail -a b
            setpriv --reuid=\(alice.uid) --regid=\(alice.gid) --clear-groups keychainctl find-generic-password -s mail -w
            setpriv --reuid=\(bob.uid) --regid=\(bob.gid) --clear-groups keychainctl find-generic-password -s mail -w
            ls /var/lib/keychain
            """)
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.stdout.contains("hers\nhis\n"), "\(result.stdout)")

        // Remove, then purge: the programs go, every keychain's data stays, gnome-keyring's
        // activation file is its own again.
        result = try machine.run(
            """
            # The system daemon, by its pid: the overlay shares the machine's processes.
            kill $(cat /tmp/keychaind.pid); sleep 0.5
            apt-get remove -y -qq libpam-keychain swift-keychain >/dev/null && echo removed
            ls /usr/bin/keychainctl /lib/systemd/system/keychaind.service 2>&1
            grep -c pam_keychain /etc/pam.d/common-auth
            apt-get purge -y -qq libpam-keychain swift-keychain >/dev/null && echo purged
            ls -d /var/lib/keychain \(home)/.local/share/keychain
            dpkg-divert --list '*/org.freedesktop.secrets.service' | wc -l
            ls /etc/keychain/apps.d 2>&1
            """)
        #expect(result.stdout.contains("removed\n"), "\(result.stdout)")
        #expect(result.stdout.contains("cannot access '/usr/bin/keychainctl'"), "\(result.stdout)")
        #expect(
            result.stdout.contains("purged\n\(home)/.local/share/keychain\n/var/lib/keychain\n0\n"),
            "\(result.stdout)")
        print("package lifecycle:\n\(result.stdout)")
    }
}
