import Foundation
import HTTPServer

/// Who a request comes from. A peer in `trustedProxies` (BRIDGE_TRUSTED_PROXIES, loopback by default) is a reverse
/// proxy: the client is the last `X-Forwarded-For` entry, the one that proxy appended (entries further left are
/// client-supplied). Any other peer is the client itself, whatever headers it sends.
struct ClientAddresses: Sendable {
    let trustedProxies: [AddressRange]

    /// The client's address, from the connection's `peer` and the request's `X-Forwarded-For` fields.
    func clientAddress(peer: String, forwardedFor: [String]) -> String {
        guard trustedProxies.contains(where: { $0.contains(peer) }),
              let last = forwardedFor.last?.split(separator: ",").last?.trimmingCharacters(in: .whitespaces),
              AddressRange.bytes(of: last) != nil else { return peer }
        return last
    }

    func clientAddress(of request: Request) -> String {
        clientAddress(peer: request.remoteAddress, forwardedFor: request.headers.values("X-Forwarded-For"))
    }

    /// The key a per-client limit counts under: the address, or for IPv6 its /64 (one subscriber's usual share,
    /// so a client cannot step past a limit by rotating addresses inside it).
    func limitKey(of request: Request) -> String { Self.limitKey(clientAddress(of: request)) }

    static func limitKey(_ address: String) -> String {
        guard let bytes = AddressRange.bytes(of: address) else { return address }
        let unmapped = AddressRange.unmapped(bytes)
        guard unmapped.count == 16 else { return address }
        return AddressRange(network: unmapped, prefixLength: 64).description
    }
}
