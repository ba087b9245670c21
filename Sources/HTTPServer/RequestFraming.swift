/// Refuses requests whose body length two parties could read differently (request smuggling): a proxy in
/// front and this server must agree where a request ends, so anything ambiguous is refused with 400 and the
/// connection is closed instead of guessing.
enum RequestFraming {
    /// What the framing headers of one request say, gathered field by field (`RequestHead` reads each field once).
    struct Fields {
        private var lengths = 0
        private var malformedLength = false
        /// The transfer codings of every Transfer-Encoding line, in order, lower-cased.
        private var transferCodings: [Substring] = []
        private var transferEncoding = false

        /// `name`: the field's name as received (ASCII bytes).
        mutating func add(name: UnsafeBufferPointer<UInt8>, value: String) {
            if ASCII.equalsIgnoringCase(name, "content-length") {
                lengths += 1
                if !isPlainDecimal(value) { malformedLength = true }
            } else if ASCII.equalsIgnoringCase(name, "transfer-encoding") {
                transferEncoding = true
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
            guard transferEncoding else { return nil }
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
        for field in headers {
            var name = field.name
            name.withUTF8 { fields.add(name: $0, value: field.value) }
        }
        return fields.problem(isHTTP11: isHTTP11)
    }

    /// One to eighteen ASCII digits and nothing else (no sign, spaces, commas or hex); fits in an Int.
    static func isPlainDecimal(_ value: String) -> Bool {
        let digits = value.utf8
        return !digits.isEmpty && digits.count <= 18 && digits.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}

enum ASCII {
    /// Whether `bytes` spell `lowercase` in any letter case. `lowercase`: a literal of lower-case ASCII letters and
    /// punctuation.
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for index in 0..<bytes.count {
            var byte = bytes[index]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte |= 0x20 }
            if byte != expected[index] { return false }
        }
        return true
    }
}
