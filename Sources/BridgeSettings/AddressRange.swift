import Foundation

/// An IPv4 or IPv6 network (`10.0.0.0/8`, `2001:db8::/32`, or one address), and the numeric addresses it holds.
package struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    package let network: [UInt8]
    package let prefixLength: Int

    package static let loopback = [AddressRange("127.0.0.0/8")!, AddressRange("::1")!]

    /// Nil unless `text` is a numeric address, optionally followed by `/bits` within the address's length.
    package init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = Self.bytes(of: String(parts[0])) else { return nil }
        var length = bytes.count * 8
        if parts.count == 2 {
            guard let bits = Int(parts[1]), parts[1].allSatisfy(\.isASCII), (0...length).contains(bits) else { return nil }
            length = bits
        }
        network = Self.masked(bytes, to: length)
        prefixLength = length
    }

    package init(network: [UInt8], prefixLength: Int) {
        self.network = Self.masked(network, to: prefixLength)
        self.prefixLength = prefixLength
    }

    /// Whether `address` (numeric, IPv6 optionally in brackets) lies in this network. An IPv4-mapped IPv6 address
    /// (`::ffff:127.0.0.1`) counts as its IPv4 address.
    package func contains(_ address: String) -> Bool {
        guard let bytes = Self.bytes(of: address) else { return false }
        return contains(bytes: bytes)
    }

    /// Compares in place: every request from a proxy asks this, and the arrays of unmapping and masking were most
    /// of its cost.
    package func contains(bytes: [UInt8]) -> Bool {
        var start = 0
        if bytes.count == 16, network.count == 4, Self.isMapped(bytes) { start = 12 }
        guard bytes.count - start == network.count else { return false }
        for index in 0..<network.count {
            let kept = min(8, max(0, prefixLength - index * 8))
            let mask = kept == 8 ? UInt8(0xFF) : ~(UInt8(0xFF) >> kept)
            if bytes[start + index] & mask != network[index] { return false }
        }
        return true
    }

    private static func isMapped(_ bytes: [UInt8]) -> Bool {
        bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF
    }

    package var description: String {
        let family = network.count == 4 ? AF_INET : AF_INET6
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = network.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/\(prefixLength)"
    }

    /// The 4 or 16 bytes of a numeric address; nil for anything else (host names included).
    package static func bytes(of address: String) -> [UInt8]? {
        var text = address
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        // withCString lends a short string from the stack; passing the String itself copied it into an array.
        return text.withCString { cText in
            var v4 = in_addr()
            if inet_pton(AF_INET, cText, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
            var v6 = in6_addr()
            if inet_pton(AF_INET6, cText, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
            return nil
        }
    }

    /// An IPv4-mapped IPv6 address as its IPv4 bytes; anything else unchanged.
    package static func unmapped(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count == 16, isMapped(bytes) else { return bytes }
        return Array(bytes[12...])
    }

    package static func masked(_ bytes: [UInt8], to prefixLength: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(8, max(0, prefixLength - index * 8))
            return kept == 8 ? byte : byte & ~(UInt8(0xFF) >> kept)
        }
    }
}
