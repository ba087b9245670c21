@testable import Bridge
import BridgeSettings
import Testing
import WebRoutes

/// The CIDR matcher behind BRIDGE_TRUSTED_PROXIES, and the client address the rate limiter counts.
@Suite("Address ranges and client addresses")
struct AddressRangeTests {
    @Test("IPv4 and IPv6 networks hold exactly their addresses")
    func matching() throws {
        let private10 = try #require(AddressRange("10.0.0.0/8"))
        #expect(private10.contains("10.255.1.2"))
        #expect(!private10.contains("11.0.0.1"))
        #expect(!private10.contains("::1"))
        let odd = try #require(AddressRange("192.168.1.128/25"))
        #expect(odd.contains("192.168.1.200") && !odd.contains("192.168.1.127"))
        let v6 = try #require(AddressRange("2001:db8::/32"))
        #expect(v6.contains("2001:db8:ffff::1") && v6.contains("[2001:db8::2]"))
        #expect(!v6.contains("2001:db9::1"))
        let single = try #require(AddressRange("203.0.113.9"))
        #expect(single.contains("203.0.113.9") && !single.contains("203.0.113.10"))
        #expect(try #require(AddressRange("0.0.0.0/0")).contains("8.8.8.8"))
    }

    @Test("an IPv4-mapped IPv6 peer counts as its IPv4 address; host names never match")
    func mappedAndNames() {
        #expect(AddressRange.loopback.contains { $0.contains("::ffff:127.0.0.1") })
        #expect(!AddressRange.loopback.contains { $0.contains("localhost") })
        #expect(!AddressRange.loopback.contains { $0.contains("127.0.0.1.example.com") })
    }

    @Test("malformed networks are refused", arguments: ["10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0/8",
                                                         "example.com", "", "10.0.0.0/8/8", "10.0.0.0/٨"])
    func malformed(text: String) {
        #expect(AddressRange(text) == nil)
    }

    @Test("X-Forwarded-For is believed from a trusted peer only, its last entry, and only when it is an address")
    func clientAddress() {
        let addresses = ClientAddresses(trustedProxies: AddressRange.loopback)
        #expect(addresses.clientAddress(peer: "127.0.0.1", forwardedFor: ["1.1.1.1, 203.0.113.5"]) == "203.0.113.5")
        #expect(addresses.clientAddress(peer: "127.0.0.1", forwardedFor: ["1.1.1.1", "203.0.113.6"]) == "203.0.113.6")
        #expect(addresses.clientAddress(peer: "198.51.100.1", forwardedFor: ["203.0.113.5"]) == "198.51.100.1")
        #expect(addresses.clientAddress(peer: "127.0.0.1", forwardedFor: ["not-an-ip"]) == "127.0.0.1")
        #expect(addresses.clientAddress(peer: "127.0.0.1", forwardedFor: []) == "127.0.0.1")
    }

    @Test("the listener's key for a trusted peer is the key of the client address it forwards")
    func trustedPeerLimitKey() {
        let addresses = ClientAddresses(trustedProxies: AddressRange.loopback)
        for forwarded in [["1.1.1.1, 203.0.113.5"], ["2001:db8:1:2::1"], ["not-an-ip"], [], ["203.0.113.5", " ::ffff:203.0.113.7 "]] {
            #expect(addresses.limitKey(trustedPeer: "127.0.0.1", forwardedFor: forwarded)
                    == addresses.limitKey(peer: "127.0.0.1", forwardedFor: forwarded))
        }
        #expect(addresses.limitKey(trustedPeer: "127.0.0.1", forwardedFor: ["2001:db8:1:2::1"]) == "2001:db8:1:2::/64")
        #expect(addresses.limitKey(trustedPeer: "127.0.0.1", forwardedFor: ["bogus"]) == "127.0.0.1")
    }

    @Test("the last X-Forwarded-For entry is what splitting on commas and trimming white space gives",
          arguments: ["203.0.113.5", "1.1.1.1, 203.0.113.5", "1.1.1.1,203.0.113.5,", "1.1.1.1, 203.0.113.5 ,, ",
                      " \t203.0.113.5\t", ",", ",,", "", " ", "a, ", "1.1.1.1,\u{00A0}2001:db8::1\u{3000}",
                      "\u{2003}203.0.113.7", "x,\u{00A0}", "é,ü", "[2001:db8::1]", "1.1.1.1, \u{0085}203.0.113.8"])
    func lastEntry(field: String) {
        #expect(ClientAddresses.lastEntry(of: field)
                == field.split(separator: ",").last?.trimmingCharacters(in: .whitespaces))
    }

    @Test("the rate limiter counts an IPv6 client by its /64 and an IPv4 client by its address")
    func limitKeys() {
        #expect(ClientAddresses.limitKey("2001:db8:1:2::1") == ClientAddresses.limitKey("2001:db8:1:2:ffff::9"))
        #expect(ClientAddresses.limitKey("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(ClientAddresses.limitKey("2001:db8:1:3::1") != ClientAddresses.limitKey("2001:db8:1:2::1"))
        #expect(ClientAddresses.limitKey("203.0.113.5") == "203.0.113.5")
        #expect(ClientAddresses.limitKey("::ffff:203.0.113.5") == "203.0.113.5")
        #expect(ClientAddresses.limitKey("[::ffff:203.0.113.5]") == "203.0.113.5")
    }

    @Test("an X-Forwarded-For entry with a port is its client's address, not the proxy's")
    func forwardedWithPort() {
        let addresses = ClientAddresses(trustedProxies: AddressRange.loopback)
        #expect(addresses.clientAddress(peer: "127.0.0.1", forwardedFor: ["203.0.113.5:51234"]) == "203.0.113.5")
        #expect(addresses.clientAddress(peer: "127.0.0.1", forwardedFor: ["[2001:db8::1]:443"]) == "2001:db8::1")
        #expect(addresses.limitKey(peer: "127.0.0.1", forwardedFor: ["203.0.113.5:51234"]) == "203.0.113.5")
        #expect(addresses.limitKey(trustedPeer: "127.0.0.1", forwardedFor: ["203.0.113.5:51234"]) == "203.0.113.5")
        #expect(addresses.limitKey(trustedPeer: "127.0.0.1", forwardedFor: ["::ffff:203.0.113.5"]) == "203.0.113.5")
        for bad in ["203.0.113.5:", "203.0.113.5:x", "203.0.113.5:123456", "[2001:db8::1]:", "host:80", "[host]:80"] {
            #expect(addresses.clientAddress(peer: "127.0.0.1", forwardedFor: [bad]) == "127.0.0.1", "\(bad)")
        }
    }
}
