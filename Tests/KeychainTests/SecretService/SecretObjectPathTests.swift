import Testing

@testable import SecretService

/// What a Secret Service object path names, read from the UTF-8 bytes.
@Suite struct SecretObjectPathTests {
    @Test func eachKindOfPathIsNamed() {
        #expect(SecretObjectPath("/org/freedesktop/secrets") == .service)
        #expect(SecretObjectPath("/org/freedesktop/secrets/collection/login") == .collection("login"))
        #expect(
            SecretObjectPath("/org/freedesktop/secrets/collection/login/abc_123")
                == .item(
                    collection: "login", id: "abc_123"))
        #expect(SecretObjectPath("/org/freedesktop/secrets/aliases/default") == .collection("login"))
        #expect(
            SecretObjectPath("/org/freedesktop/secrets/aliases/session/x")
                == .item(
                    collection: SessionSecretItems.name, id: "x"))
        #expect(SecretObjectPath("/org/freedesktop/secrets/session/s1") == .session("s1"))
        #expect(SecretObjectPath("/org/freedesktop/secrets/prompt/p1") == .prompt("p1"))
        for path in ["collection/login", "collection/login/a", "session/s1", "prompt/p"] {
            #expect(SecretObjectPath("/org/freedesktop/secrets/" + path)?.path == "/org/freedesktop/secrets/" + path)
        }
    }

    @Test func anythingElseNamesNothing() {
        for path in [
            "", "/", "/org/freedesktop/secrets/", "/org/freedesktop/secretsx/collection/login",
            "/org/freedesktop/secrets/collection", "/org/freedesktop/secrets/collection/",
            "/org/freedesktop/secrets/collection//a", "/org/freedesktop/secrets/collection/login/a/b",
            "/org/freedesktop/secrets/collection/login/a/b/c/d", "/org/freedesktop/secrets/collection/lo-gin",
            "/org/freedesktop/secrets/collection/löгin", "/org/freedesktop/secrets/unknown/x",
            "/org/freedesktop/secrets/session/s1/extra",
        ] {
            #expect(SecretObjectPath(path) == nil, "\(path)")
        }
    }

    /// Paths a client might send, made at random from the characters that matter: each is named
    /// or refused without a trap, and one named outside `aliases/` is its object's path again.
    @Test func randomPathsAreNamedOrRefusedAndNamedOnesRoundTrip() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["/", "collection", "aliases", "session", "prompt", "login", "a", "_", "9", "-", "é", "//", ""]
        for _ in 0..<10_000 {
            let path =
                SecretObjectPath.root
                + (0..<Int.random(in: 0...7, using: &generator)).map { _ in
                    pieces.randomElement(using: &generator)!
                }.joined()
            guard let named = SecretObjectPath(path) else { continue }
            if !path.contains("/aliases/") { #expect(named.path == path, "\(path)") }
        }
    }
}
