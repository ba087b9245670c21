/// Refuses requests whose body length two parties could read differently (request smuggling): a proxy in
/// front and this server must agree where a request ends, so anything ambiguous is refused with 400 and the
/// connection is closed instead of guessing.
enum RequestFraming {
    /// What the framing headers of one request say, gathered field by field (`RequestHead` reads each field once).
    struct Fields {
        private var lengths = 0
        private var malformedLength = false
        private var transferEncoding = false

        mutating func add(name: String, value: String) {
            let count = name.utf8.count
            if count == 14 && HTTPHeaders.sameName(name, "Content-Length") {
                lengths += 1
                if !isPlainDecimal(value) { malformedLength = true }
            } else if count == 17 && HTTPHeaders.sameName(name, "Transfer-Encoding") {
                transferEncoding = true
            }
        }

        /// Why the request's framing is ambiguous, or nil when it is not.
        var problem: String? {
            if lengths > 1 { return "The request has more than one Content-Length header." }
            if malformedLength { return "The request's Content-Length is not a plain decimal number." }
            if lengths == 1 && transferEncoding { return "The request has both Content-Length and Transfer-Encoding." }
            return nil
        }
    }

    static func problem(in headers: HTTPHeaders) -> String? {
        var fields = Fields()
        for field in headers { fields.add(name: field.name, value: field.value) }
        return fields.problem
    }

    /// One to eighteen ASCII digits and nothing else (no sign, spaces, commas or hex); fits in an Int.
    static func isPlainDecimal(_ value: String) -> Bool {
        let digits = value.utf8
        return !digits.isEmpty && digits.count <= 18 && digits.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
