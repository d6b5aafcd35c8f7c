import Foundation
import Testing

/// `git-credential-keychain` driven by git itself (`git credential approve|fill|reject`, as git
/// calls a helper when it pushes or fetches over HTTPS): credentials stored, found, replaced and
/// erased in the keychain, and kept from other apps.
@Suite struct GitCredentialTests {
    /// Runs `git -c credential.helper=keychain credential ACTION` with `description` on its
    /// standard input, the helper found on `PATH` as git finds it, git's own configuration and
    /// prompts left out.
    func git(_ shell: CommandRunner, _ action: String, _ description: [String]) throws -> CommandRunner.Output {
        let input = (description + ["", ""]).joined(separator: "\n")
        return try shell.script(
            """
            export PATH="$(dirname "$KEYCHAINCTL"):$PATH" HOME='\(shell.home.path)' GIT_CONFIG_NOSYSTEM=1 \
            GIT_TERMINAL_PROMPT=0
            printf '%s' '\(input)' | git -c credential.helper=keychain credential \(action)
            """)
    }

    @Test func gitStoresFindsReplacesAndErasesItsCredentials() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let alice = ["protocol=https", "host=git.example.com", "username=alice", "password=token-one"]
        #expect(try git(shell, "approve", alice).status == 0)
        var filled = try git(shell, "fill", ["protocol=https", "host=git.example.com"])
        #expect(filled.status == 0, "\(filled.stderr)")
        #expect(filled.stdout.contains("username=alice\npassword=token-one\n"), "\(filled.stdout)")

        // Another port, another protocol, another host: not the same credential.
        for other in [
            ["protocol=https", "host=git.example.com:8443"], ["protocol=http", "host=git.example.com"],
            ["protocol=https", "host=example.com"],
        ] {
            #expect(try git(shell, "fill", other).status != 0, "\(other)")
        }

        // A second user on the same host; a new password for the first replaces the old.
        #expect(
            try git(shell, "approve", ["protocol=https", "host=git.example.com", "username=bob", "password=b"]).status
                == 0)
        #expect(try git(shell, "approve", Array(alice.dropLast()) + ["password=token-two"]).status == 0)
        filled = try git(shell, "fill", ["protocol=https", "host=git.example.com", "username=alice"])
        #expect(filled.stdout.contains("password=token-two\n"), "\(filled.stdout)")
        filled = try git(shell, "fill", ["protocol=https", "host=git.example.com", "username=bob"])
        #expect(filled.stdout.contains("password=b\n"), "\(filled.stdout)")

        // git rejects the password it was refused with: an older one leaves the newer stored.
        #expect(try git(shell, "reject", alice).status == 0)
        filled = try git(shell, "fill", ["protocol=https", "host=git.example.com", "username=alice"])
        #expect(filled.stdout.contains("password=token-two\n"), "\(filled.stdout)")
        #expect(try git(shell, "reject", Array(alice.dropLast()) + ["password=token-two"]).status == 0)
        #expect(try git(shell, "fill", ["protocol=https", "host=git.example.com", "username=alice"]).status != 0)
        filled = try git(shell, "fill", ["protocol=https", "host=git.example.com", "username=bob"])
        #expect(filled.stdout.contains("password=b\n"), "bob's stays: \(filled.stdout)")
    }

    /// Issue 53: on a locked keychain git showed "User interaction is not allowed. (OSStatus
    /// -25308)". The helper says the keychain is locked, and how to unlock it.
    @Test func aLockedKeychainIsSaidToBeLocked() throws {
        let shell = try CommandRunner.withPasscode(simulator: false)
        defer { shell.cleanUp() }
        let alice = ["protocol=https", "host=git.example.com", "username=alice", "password=token-one"]
        #expect(try git(shell, "approve", alice).status == 0)
        #expect(try shell.run(["lock"]).status == 0)
        let filled = try git(shell, "fill", ["protocol=https", "host=git.example.com"])
        #expect(filled.status != 0 && !filled.stdout.contains("token-one"), "\(filled.stdout)")
        #expect(
            filled.stderr.contains("the keychain is locked") && filled.stderr.contains("keychainctl unlock"),
            "\(filled.stderr)")
    }

    /// git's own calls skip the argument parser; everything else still goes through it: help,
    /// an action git does not have, a second argument.
    @Test func anythingButAnActionAloneGoesThroughTheParser() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let helper = "\"$(dirname \"$KEYCHAINCTL\")/git-credential-keychain\""
        let help = try shell.script("\(helper) --help </dev/null")
        #expect(help.status == 0 && help.stdout.contains("USAGE: git-credential-keychain <action>"), "\(help.stdout)")
        let unknown = try shell.script("\(helper) fetch </dev/null")
        #expect(unknown.status == 64 && unknown.stderr.contains("'fetch'"), "\(unknown.stderr)")
        let twoArguments = try shell.script("\(helper) get erase </dev/null")
        #expect(twoArguments.status == 64 && twoArguments.stderr.contains("'erase'"), "\(twoArguments.stderr)")
        let get = try shell.script("printf 'protocol=https\\nhost=git.example.com\\n\\n' | \(helper) get")
        #expect(get.status == 0 && get.stdout.isEmpty, "\(get.stdout)\(get.stderr)")
    }

    /// The helper's items are its own: keychainctl, another app, does not find them.
    @Test func anotherAppDoesNotSeeGitsCredentials() throws {
        let shell = try CommandRunner()
        defer { shell.cleanUp() }
        let stored = try git(
            shell, "approve", ["protocol=https", "host=git.example.com", "username=alice", "password=token-one"])
        #expect(stored.status == 0, "\(stored.stderr)")
        let found = try shell.run(["find-internet-password", "-s", "git.example.com", "-w"])
        #expect(found.status != 0)
        #expect(found.stderr.contains("OSStatus -25300"), "\(found.stderr)")
        #expect(!found.stdout.contains("token-one"))
    }
}
