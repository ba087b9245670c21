/// Refuses requests whose body length two parties could read differently (request smuggling): a proxy in
/// front and this server must agree where a request ends, so anything ambiguous is refused with 400 and the
/// connection is closed instead of guessing.
enum RequestFraming {
    /// Why the request's framing is ambiguous, or nil when it is not.
    static func problem(in headers: HTTPHeaders) -> String? {
        var lengths = 0
        var transferEncoding = false
        var malformedLength = false
        for field in headers {
            if HTTPHeaders.sameName(field.name, "Content-Length") {
                lengths += 1
                if !isPlainDecimal(field.value) { malformedLength = true }
            } else if HTTPHeaders.sameName(field.name, "Transfer-Encoding") {
                transferEncoding = true
            }
        }
        if lengths > 1 { return "The request has more than one Content-Length header." }
        if malformedLength { return "The request's Content-Length is not a plain decimal number." }
        if lengths == 1 && transferEncoding { return "The request has both Content-Length and Transfer-Encoding." }
        return nil
    }

    /// One to eighteen ASCII digits and nothing else (no sign, spaces, commas or hex); fits in an Int.
    static func isPlainDecimal(_ value: String) -> Bool {
        let digits = value.utf8
        return !digits.isEmpty && digits.count <= 18 && digits.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
