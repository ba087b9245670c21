import Testing
@testable import Storage

/// Names and addresses from Apple are kept trimmed, and a blank one is none.
@Suite("Trimming a profile field")
struct NonBlankTests {
    @Test("whitespace and newlines at either end go, Unicode's too; what is inside stays", arguments: [
        ("Kim", "Kim"),
        ("Kim Minji", "Kim Minji"),
        ("a@example.com", "a@example.com"),
        (" Kim", "Kim"),
        ("Kim\n", "Kim"),
        ("\t Kim Minji \r\n", "Kim Minji"),
        ("\u{3000}김민지\u{3000}", "김민지"),
        ("\u{00A0}Kim\u{2028}", "Kim"),
        ("김민지", "김민지"),
        ("Zoë", "Zoë"),
        ("e\u{301}", "e\u{301}"),
    ])
    func trimmed(value: String, expected: String) {
        #expect(Optional(value).nonBlank == expected)
    }

    @Test("nothing, an empty string or only whitespace is no value", arguments: [nil, "", " ", "\n\t", "\u{3000}", "\u{00A0} \u{2029}"])
    func blank(value: String?) {
        #expect(value.nonBlank == nil)
    }
}
