import Testing
import TextBytes

@Suite("Text compared as UTF-8 bytes")
struct SameUTF8Tests {
    @Test("canonically equivalent spellings differ; the same bytes are equal, however the strings were made")
    func bytes() {
        #expect(!"caf\u{E9}".hasSameUTF8(as: "cafe\u{301}"))  // == says they are equal
        #expect("caf\u{E9}" == "cafe\u{301}")
        #expect(!"/\u{331}x".hasSameUTF8(as: "/x"))
        #expect(!"\u{212A}allback".hasSameUTF8(as: "Kallback"))
        #expect("https://appleid.apple.com".hasSameUTF8(as: String("xhttps://appleid.apple.com".dropFirst())))
        #expect("".hasSameUTF8(as: ""))
        #expect(!"a".hasSameUTF8(as: ""))
        #expect(!"abc".hasSameUTF8(as: "abd"))
        // A string without contiguous UTF-8 (a lazily bridged one would be; a Substring's String copy is not) still
        // compares by bytes through the views.
        let long = String(repeating: "k", count: 40)
        #expect(long.hasSameUTF8(as: String(repeating: "k", count: 40)))
    }

    @Test("a byte prefix: one followed by a combining mark still begins the string, and spellings do not mix")
    func prefixes() {
        #expect("asb_\u{301}session".hasUTF8Prefix("asb_"))
        #expect(!"asb_\u{301}session".hasPrefix("asb_"))  // hasPrefix compares Characters
        #expect(!"cafe\u{301}".hasUTF8Prefix("caf\u{E9}"))
        #expect("__Host-asb_session".hasUTF8Prefix("__Host-asb_"))
        #expect(!"asb".hasUTF8Prefix("asb_"))
        #expect("x".hasUTF8Prefix(""))
    }
}
