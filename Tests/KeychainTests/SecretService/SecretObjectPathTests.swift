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
}
