/// Refuses requests whose body length two parties could read differently (request smuggling): a proxy in
/// front and this server must agree where a request ends, so anything ambiguous is refused with 400 and the
/// connection is closed instead of guessing.
enum RequestFraming {
    /// What the framing headers of one request say, gathered field by field (`RequestHead` reads each field once).
    struct Fields {
        private var lengths = 0
        private var malformedLength = false
        /// The transfer codings of every Transfer-Encoding line, in order, lower-cased (an empty line is one empty
        /// coding, so any Transfer-Encoding leaves this non-empty).
        private var transferCodings: [Substring] = []

        /// `name`: the field's name as received (ASCII bytes).
        mutating func add(name: UnsafeBufferPointer<UInt8>, value: String) {
            if ASCII.equalsIgnoringCase(name, "content-length") {
                lengths += 1
                if !isPlainDecimal(value) { malformedLength = true }
            } else if ASCII.equalsIgnoringCase(name, "transfer-encoding") {
                transferCodings += value.lowercased().split(separator: ",", omittingEmptySubsequences: false)
                    .map { $0.trimmingCharacters(in: [" ", "\t"])[...] }
            }
        }

        /// Why the request's framing is ambiguous, or nil when it is not, with the status to answer (400, or 501
        /// for a transfer coding that libmicrohttpd cannot undo: it would read such a body until the connection
        /// closed, and answer nothing).
        func problem(isHTTP11: Bool) -> (status: Int, message: String)? {
            if lengths > 1 { return (400, "The request has more than one Content-Length header.") }
            if malformedLength { return (400, "The request's Content-Length is not a plain decimal number.") }
            guard !transferCodings.isEmpty else { return nil }
            if lengths == 1 { return (400, "The request has both Content-Length and Transfer-Encoding.") }
            // RFC 9112, 6.1 and 6.3: an HTTP/1.0 message's Transfer-Encoding makes its framing faulty; chunked must
            // come last, once.
            if !isHTTP11 { return (400, "An HTTP/1.0 request cannot have a Transfer-Encoding.") }
            if transferCodings.last != "chunked" || transferCodings.dropLast().contains("chunked") {
                return (400, "The request's Transfer-Encoding does not end in chunked, once.")
            }
            if transferCodings.count > 1 { return (501, "The server only takes request bodies sent chunked or with a length.") }
            return nil
        }
    }

    static func problem(in headers: HTTPHeaders, isHTTP11: Bool = true) -> (status: Int, message: String)? {
        var fields = Fields()
        headers.forEachField { fields.add(name: $0, value: $1) }
        return fields.problem(isHTTP11: isHTTP11)
    }

    /// One to eighteen ASCII digits and nothing else (no sign, spaces, commas or hex); fits in an Int.
    static func isPlainDecimal(_ value: String) -> Bool {
        let digits = value.utf8
        return !digits.isEmpty && digits.count <= 18 && digits.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}

enum ASCII {
    /// Whether two ASCII texts are equal but for the case of their letters.
    static func equalsIgnoringCase(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        guard x.count == y.count else { return false }
        for index in 0..<x.count where x[index] != y[index] {
            let folded = x[index] | 0x20
            if folded != y[index] | 0x20 || !(folded >= 0x61 && folded <= 0x7A) { return false }
        }
        return true
    }

    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        equalsIgnoringCase(bytes, UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
