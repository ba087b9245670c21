#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Ordered name/value pairs from a query string or an `application/x-www-form-urlencoded` body.
public struct FormFields: Sendable, Equatable {
    public private(set) var pairs: [Pair]

    public struct Pair: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) { self.name = name; self.value = value }
    }

    public init(_ pairs: [Pair] = []) { self.pairs = pairs }

    public init(_ pairs: [(String, String)]) { self.pairs = pairs.map { Pair($0.0, $0.1) } }

    /// The first value of the field, if present.
    public subscript(name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }

    /// The first non-empty value among several accepted field names.
    public func first(of names: [String]) -> String? {
        for name in names {
            if let value = self[name], !value.isEmpty { return value }
        }
        return nil
    }

    public var isEmpty: Bool { pairs.isEmpty }

    /// The names that appear more than once (OAuth 2.0 forbids repeating a parameter, RFC 6749 §3.1).
    public var repeatedNames: Set<String> {
        var seen = Set<String>(), repeated = Set<String>()
        for pair in pairs where !seen.insert(pair.name).inserted {
            repeated.insert(pair.name)
        }
        return repeated
    }

    public mutating func append(_ name: String, _ value: String) { pairs.append(Pair(name, value)) }

    /// Parses `a=1&b=two+words&c=%2F`. Invalid percent escapes are kept literally.
    public init(urlEncoded bytes: some Collection<UInt8>) {
        // On contiguous bytes: every web sign-in parses a form of about a kilobyte (the identity token), and
        // generic Collection splitting and indexing was about 5 % of a sign-in's CPU.
        if let pairs = bytes.withContiguousStorageIfAvailable({ Self.parse($0) }) {
            self.pairs = pairs
        } else {
            self.pairs = Array(bytes).withUnsafeBufferPointer { Self.parse($0) }
        }
    }

    /// Splits on `&` and `=` with `memchr`, which scans many bytes per instruction: most of a sign-in's form is
    /// one long value (the identity token), and a byte-at-a-time loop over it cost about 3 % of a sign-in.
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> [Pair] {
        guard let base = bytes.baseAddress else { return [] }
        var pairs: [Pair] = []
        pairs.reserveCapacity(8)  // a callback's form has four or five fields; growing from one copied it thrice
        var start = 0
        while start < bytes.count {
            let end = firstIndex(of: UInt8(ascii: "&"), in: base, start..<bytes.count) ?? bytes.count
            if end > start {
                if let equals = firstIndex(of: UInt8(ascii: "="), in: base, start..<end) {
                    pairs.append(Pair(decode(base, start..<equals), decode(base, equals + 1..<end)))
                } else {
                    pairs.append(Pair(decode(base, start..<end), ""))
                }
            }
            start = end + 1
        }
        return pairs
    }

    private static func firstIndex(of byte: UInt8, in base: UnsafePointer<UInt8>, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, let found = memchr(base + range.lowerBound, Int32(byte), range.count) else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }

    /// Decodes `+` (unless `plusIsSpace` is false, as in a path) and `%XX` in `range`; a part with neither (most of
    /// them, the identity token among them) becomes a String straight from the bytes.
    static func decode(_ base: UnsafePointer<UInt8>, _ range: Range<Int>, plusIsSpace: Bool = true) -> String {
        let plus = plusIsSpace ? firstIndex(of: UInt8(ascii: "+"), in: base, range) : nil
        let percent = firstIndex(of: UInt8(ascii: "%"), in: base, plus.map { range.lowerBound..<$0 } ?? range)
        guard let first = percent ?? plus else {
            return String(decoding: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count), as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        out.append(contentsOf: UnsafeBufferPointer(start: base + range.lowerBound, count: first - range.lowerBound))
        var index = first
        while index < range.upperBound {
            let byte = base[index]
            if byte == UInt8(ascii: "+") && plusIsSpace {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < range.upperBound,
                      let high = hexValue(base[index + 1]), let low = hexValue(base[index + 2]) {
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    public init(urlEncoded string: String) { self.init(urlEncoded: Array(string.utf8)) }

    /// Serialises as `application/x-www-form-urlencoded`.
    public var urlEncoded: String {
        pairs.map { FormFields.encode($0.name) + "=" + FormFields.encode($0.value) }.joined(separator: "&")
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters (space becomes %20).
    public static func encode(_ string: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
