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

    public mutating func append(_ name: String, _ value: String) { pairs.append(Pair(name, value)) }

    /// Parses `a=1&b=two+words&c=%2F`. Invalid percent escapes are kept literally.
    public init(urlEncoded bytes: some Collection<UInt8>) {
        var pairs: [Pair] = []
        for part in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            if let equals = part.firstIndex(of: UInt8(ascii: "=")) {
                pairs.append(Pair(FormFields.decode(part[part.startIndex..<equals]),
                                  FormFields.decode(part[part.index(after: equals)...])))
            } else {
                pairs.append(Pair(FormFields.decode(part), ""))
            }
        }
        self.pairs = pairs
    }

    public init(urlEncoded string: String) { self.init(urlEncoded: Array(string.utf8)) }

    /// Serialises as `application/x-www-form-urlencoded`.
    public var urlEncoded: String {
        pairs.map { FormFields.encode($0.name) + "=" + FormFields.encode($0.value) }.joined(separator: "&")
    }

    static func decode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"),
                      let first = bytes.index(index, offsetBy: 1, limitedBy: bytes.endIndex), first != bytes.endIndex,
                      let second = bytes.index(first, offsetBy: 1, limitedBy: bytes.endIndex), second != bytes.endIndex,
                      let high = hexValue(bytes[first]), let low = hexValue(bytes[second]) {
                out.append(high << 4 | low)
                index = second
            } else {
                out.append(byte)
            }
            index = bytes.index(after: index)
        }
        return String(decoding: out, as: UTF8.self)
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
