import Testing

@testable import SecretService

/// What the bridge remembers of a client's latest search (``RecentlyUnlockedItems``), whose
/// table by path is made at the first question: every question answers from the latest search
/// alone, whether or not one was asked after the search before it. The end-to-end suite of the
/// same name shows the moment ending and the client's own changes.
@Suite struct RecentlyUnlockedItemsMemoryTests {
    /// What `memory` answers for `path`: listed or not, and the label (a question makes the table).
    private func answers(_ memory: inout RecentlyUnlockedItems, _ path: String) -> (listed: Bool, label: String?) {
        (memory.listedUnlocked(path), memory.label(of: path))
    }

    private func item(_ path: String, _ label: String?) -> RecentlyUnlockedItems.Item {
        RecentlyUnlockedItems.Item(path: path, label: label, contentType: "text/plain")
    }

    let mail = "/org/freedesktop/secrets/collection/login/mail"
    let wifi = "/org/freedesktop/secrets/collection/login/wifi"
    let ssh = "/org/freedesktop/secrets/collection/login/ssh"

    @Test func aSearchsItemsAnswerWithTheirLabels() {
        var memory = RecentlyUnlockedItems()
        memory.remember([item(mail, "Mail"), item(wifi, nil), item(mail, "Mail again")])
        #expect(answers(&memory, mail).listed)
        #expect(answers(&memory, mail).label == "Mail")
        #expect(answers(&memory, wifi).listed)
        #expect(answers(&memory, wifi).label == nil)
        #expect(!answers(&memory, ssh).listed)
        #expect(answers(&memory, ssh).label == nil)
    }

    @Test func theLatestSearchAloneAnswersAskedOrNotBetween() {
        var asked = RecentlyUnlockedItems()
        asked.remember([item(mail, "Mail")])
        #expect(answers(&asked, mail).label == "Mail")
        asked.remember([item(ssh, "SSH")])
        #expect(!answers(&asked, mail).listed)
        #expect(answers(&asked, ssh).label == "SSH")

        var unasked = RecentlyUnlockedItems()
        unasked.remember([item(mail, "Mail")])
        unasked.remember([item(ssh, "SSH")])
        #expect(!answers(&unasked, mail).listed)
        #expect(answers(&unasked, ssh).listed)
    }

    /// Without keychaind's change number watched, a search's content types are not used: a
    /// change of the secret by another program would not show at once.
    @Test func noContentTypeWithoutTheChangeNumber() {
        var memory = RecentlyUnlockedItems()
        memory.remember([item(mail, "Mail")])
        #expect(answers(&memory, mail).label == "Mail")
        #expect(memory.contentType(of: mail) == nil)
    }

    @Test func forgettingAnswersNothing() {
        var memory = RecentlyUnlockedItems()
        memory.remember([item(mail, "Mail")])
        memory.forget()
        #expect(!answers(&memory, mail).listed)
        #expect(answers(&memory, mail).label == nil)
        memory.remember([item(wifi, "Wi-Fi")])
        memory.forget()
        #expect(!answers(&memory, wifi).listed)
    }
}
