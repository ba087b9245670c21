import BridgeSettings
import Foundation
import HTTPServer

/// Who a request comes from. A peer in `trustedProxies` (BRIDGE_TRUSTED_PROXIES, loopback by default) is a reverse
/// proxy: the client is the last `X-Forwarded-For` entry, the one that proxy appended (entries further left are
/// client-supplied). Any other peer is the client itself, whatever headers it sends.
package struct ClientAddresses: Sendable {
    package let trustedProxies: [AddressRange]

    package init(trustedProxies: [AddressRange]) {
        self.trustedProxies = trustedProxies
    }

    /// Whether a connection's peer is a trusted reverse proxy; the listener's per-client cap asks it too.
    package func isTrustedProxy(_ peer: String) -> Bool {
        guard let bytes = AddressRange.bytes(of: peer) else { return false }
        return trustedProxies.contains { $0.contains(bytes: bytes) }
    }

    /// The client's address, from the connection's `peer` and the request's `X-Forwarded-For` fields.
    package func clientAddress(peer: String, forwardedFor: [String]) -> String {
        guard isTrustedProxy(peer),
              let last = forwardedFor.last.flatMap(Self.lastEntry).flatMap(Self.address(ofEntry:)) else { return peer }
        return last.text
    }

    /// The address of an `X-Forwarded-For` entry, and its bytes. Some proxies write the client's port too
    /// (`203.0.113.7:51234`, `[2001:db8::1]:51234`): the address without it is still the client, not the proxy.
    package static func address(ofEntry entry: String) -> (text: String, bytes: [UInt8])? {
        if let bytes = AddressRange.bytes(of: entry) { return (entry, bytes) }
        let utf8 = entry.utf8
        let address: Substring
        if utf8.first == UInt8(ascii: "["), let close = utf8.firstIndex(of: UInt8(ascii: "]")) {
            let port = entry[utf8.index(after: close)...]
            guard isPort(port) else { return nil }
            address = entry[utf8.index(after: utf8.startIndex)..<close]
        } else if let colon = utf8.firstIndex(of: UInt8(ascii: ":")), utf8.lastIndex(of: UInt8(ascii: ":")) == colon {
            guard isPort(entry[colon...]) else { return nil }
            address = entry[..<colon]
        } else {
            return nil
        }
        guard let bytes = AddressRange.bytes(of: String(address)) else { return nil }
        return (String(address), bytes)
    }

    /// `:` and 1-5 ASCII digits.
    private static func isPort(_ text: Substring) -> Bool {
        let digits = text.utf8.dropFirst()
        return text.utf8.first == UInt8(ascii: ":") && (1...5).contains(digits.count)
            && digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// `field.split(separator: ",").last` trimmed of white space, without the array of every entry or, for an entry
    /// with plain ASCII at both ends (the usual one), Foundation's character-set walk: every request from a proxy
    /// asks this for the listener's per-client cap.
    package static func lastEntry(of field: String) -> String? {
        var rest = Substring(field)
        var entry: Substring?
        while entry == nil {
            guard let comma = rest.utf8.lastIndex(of: UInt8(ascii: ",")) else {
                if rest.isEmpty { return nil }
                entry = rest
                break
            }
            let after = rest[rest.utf8.index(after: comma)...]
            if after.isEmpty { rest = rest[..<comma] } else { entry = after }
        }
        guard let entry else { return nil }
        func isPlain(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x80 }
        if let first = entry.utf8.first, let last = entry.utf8.last, isPlain(first), isPlain(last) { return String(entry) }
        return entry.trimmingCharacters(in: .whitespaces)
    }

    package func clientAddress(of request: Request) -> String {
        clientAddress(peer: request.remoteAddress, forwardedFor: request.headers.values("X-Forwarded-For"))
    }

    /// The key a per-client limit counts under: the address, or for IPv6 its /64 (one subscriber's usual share,
    /// so a client cannot step past a limit by rotating addresses inside it).
    package func limitKey(of request: Request) -> String { Self.limitKey(clientAddress(of: request)) }

    /// The same key from the connection's `peer` and the request's `X-Forwarded-For` fields: the listener's
    /// per-client cap on requests in flight counts under it too, so that rotating addresses inside one /64 gets
    /// past neither.
    package func limitKey(peer: String, forwardedFor: [String]) -> String {
        Self.limitKey(clientAddress(peer: peer, forwardedFor: forwardedFor))
    }

    /// The same key for a peer already known to be a trusted proxy: the listener asks only for those, so the peer
    /// is not parsed again, nor the forwarded address a second time for its key.
    package func limitKey(trustedPeer peer: String, forwardedFor: [String]) -> String {
        if let last = forwardedFor.last.flatMap(Self.lastEntry).flatMap(Self.address(ofEntry:)) {
            return Self.limitKey(last.text, bytes: last.bytes)
        }
        return Self.limitKey(peer)
    }

    package static func limitKey(_ address: String) -> String {
        guard let bytes = AddressRange.bytes(of: address) else { return address }
        return limitKey(address, bytes: bytes)
    }

    /// An IPv4-mapped IPv6 address (`::ffff:203.0.113.5`, as a dual-stack socket or a proxy may write it) counts
    /// as its IPv4 address: one client, one bucket.
    private static func limitKey(_ address: String, bytes: [UInt8]) -> String {
        let unmapped = AddressRange.unmapped(bytes)
        guard unmapped.count == 16 else {
            return unmapped.count == bytes.count ? address : unmapped.map(String.init).joined(separator: ".")
        }
        return AddressRange(network: unmapped, prefixLength: 64).description
    }
}
