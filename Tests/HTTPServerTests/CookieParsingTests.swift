import HTTPServer
import Testing

@Suite("Cookie header parsing")
struct CookieParsingTests {
    static func request(_ cookieHeaders: String...) -> Request {
        Request(method: "GET", path: "/", headers: HTTPHeaders(cookieHeaders.map { ("Cookie", $0) }))
    }

    @Test("names and values are trimmed of spaces and tabs around each pair, quotes are removed")
    func trimmingAndQuotes() {
        let request = Self.request(" a=1 ;\tb=\"two\";c= 3 ;d=\"\";e=\"x")
        #expect(request.cookies == ["a": "1", "b": "two", "c": " 3", "d": "", "e": "\"x"])
        #expect(request.cookie("b") == "two")
        #expect(request.cookie("c") == " 3")
    }

    @Test("the first cookie of a name wins, across several Cookie headers too")
    func firstWins() {
        let request = Self.request("a=1; b=2", "a=3; c=4", "b=5")
        #expect(request.cookie("a") == "1")
        #expect(request.cookie("b") == "2")
        #expect(request.cookie("c") == "4")
        #expect(request.cookies == ["a": "1", "b": "2", "c": "4"])
        #expect(request.sentCookieNames == ["a", "b", "a", "c", "b"])
    }

    @Test("pairs without '=', empty pairs and an empty header are skipped; a value may hold '='")
    func oddPairs() {
        let request = Self.request("flag; ;=v; k=a=b;;", "")
        #expect(request.cookies == ["": "v", "k": "a=b"])
        #expect(request.cookie("flag") == nil)
        #expect(request.cookie("k") == "a=b")
        #expect(request.sentCookieNames == ["", "k"])
    }

    @Test("names match exactly: case, prefixes and non-ASCII bytes matter")
    func exactNames() {
        let request = Self.request("Session=1; session_x=2; séance=3; session=4")
        #expect(request.cookie("session") == "4")
        #expect(request.cookie("SESSION") == nil)
        #expect(request.cookie("séance") == "3")
        #expect(request.cookie("s") == nil)
    }

    @Test("only the byte ';' separates pairs: U+037E, which Swift's String equality takes for ';', stays in a value")
    func byteSeparator() {
        let request = Self.request("a=x\u{037E}b=y; c=z")
        #expect(request.cookies == ["a": "x\u{037E}b=y", "c": "z"])
        #expect(request.cookie("b") == nil)
    }

    @Test("no Cookie header: nothing")
    func none() {
        let request = Request(method: "GET", path: "/", headers: HTTPHeaders([("Cookies", "a=1")]))
        #expect(request.cookies.isEmpty)
        #expect(request.cookie("a") == nil)
        #expect(request.sentCookieNames.isEmpty)
    }
}
