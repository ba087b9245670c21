/// Refuses requests whose body length two parties could read differently (request smuggling): a proxy in
/// front and this server must agree where a request ends, so anything ambiguous is refused with 400 and the
/// connection is closed instead of guessing.
enum RequestFraming {
    /// What the framing headers of one request say, gathered field by field (`RequestHead` reads each field once).
    struct Fields {
        private var lengths = 0
        private var malformedLength = false
        private var transferEncoding = false

        /// `name`: the field's name as received (ASCII bytes).
        mutating func add(name: UnsafeBufferPointer<UInt8>, value: String) {
            if ASCII.equalsIgnoringCase(name, "content-length") {
                lengths += 1
                if !isPlainDecimal(value) { malformedLength = true }
            } else if ASCII.equalsIgnoringCase(name, "transfer-encoding") {
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
        for field in headers {
            var name = field.name
            name.withUTF8 { fields.add(name: $0, value: field.value) }
        }
        return fields.problem
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
