// Form bodies and query strings (FormFields) and the Cookie header (Request.cookies).
import HTTPServer

/// The first byte picks form or cookies. Properties: no crash; a parsed form serializes to a form that parses
/// back to the same fields.
func fuzzForms(_ input: UnsafeBufferPointer<UInt8>) {
    guard let selector = input.first else { return }
    let rest = UnsafeBufferPointer(rebasing: input.dropFirst())
    if selector & 1 == 0 {
        checkForm(rest)
    } else {
        checkCookies(rest)
    }
}

private func checkForm(_ bytes: UnsafeBufferPointer<UInt8>) {
    let fields = FormFields(urlEncoded: Array(bytes))
    let encoded = fields.urlEncoded
    let reparsed = FormFields(urlEncoded: encoded)
    guard reparsed == fields else { fatalError("form round trip changed \(fields.pairs) into \(reparsed.pairs)") }
    _ = fields.first(of: ["code", "state", "id_token", "user"])
    _ = fields["state"]

    // The same bytes as a request body.
    let request = Request(method: "POST", path: "/apple_redirect",
                          headers: HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")]),
                          body: Array(bytes))
    guard request.formBody == fields else { fatalError("the form body differs from the same bytes parsed as a form") }
}

/// Each line is one Cookie header.
private func checkCookies(_ bytes: UnsafeBufferPointer<UInt8>) {
    let text = String(decoding: bytes, as: UTF8.self)
    let headers = text.split(separator: "\n", omittingEmptySubsequences: false).map { ("Cookie", String($0)) }
    let request = Request(method: "GET", path: "/session", headers: HTTPHeaders(headers))
    let cookies = request.cookies
    // The separator is the byte ';' (as browsers split): compared as Characters, U+037E GREEK QUESTION MARK
    // equals ";" by canonical equivalence, but it is a value's content, not a separator.
    let separator = UInt8(ascii: ";")
    for (name, value) in cookies where name.utf8.contains(separator) || value.utf8.contains(separator) {
        fatalError("cookie \(name) kept a separator: \(value)")
    }
    for (name, value) in cookies where request.cookie(name) != value {
        fatalError("cookie(\(name)) differs from cookies[\(name)]")
    }
}
