import Foundation
import HTTPServer
import Testing
import TestSupport

struct PeerAddressFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The peer address a request carries is what rate limits and logs key on; the listener formats IPv4 by hand.
@Suite("The peer address of a request")
struct PeerAddressTests {
    /// A responder that answers with the address it was given.
    struct EchoPeer: HTTPResponder {
        func respond(to request: Request) -> Reply { Reply(.text(request.remoteAddress)) }
    }

    /// One request from a client socket bound to `source` (any 127/8 address is this machine on Linux).
    static func peerSeen(from source: String, port: Int) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw PeerAddressFailure("cannot bind a client socket to \(source)") }
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw PeerAddressFailure("cannot connect from \(source)") }
        RawHTTPClient.sendAll(fd, Array("GET /peer HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        return try RawHTTPClient.parse(RawHTTPClient.readAll(fd)).text
    }

    @Test("an IPv4 peer is written in dotted decimal, one to three digits an octet",
          arguments: ["127.0.0.1", "127.1.22.203", "127.255.100.9", "127.10.0.100"])
    func ipv4(source: String) throws {
        let seen = try withServer(responder: EchoPeer()) { server in try Self.peerSeen(from: source, port: server.port) }
        #expect(seen == source)
    }

    @Test("an IPv6 peer is written as inet_ntop writes it")
    func ipv6() throws {
        let configuration = ServerConfiguration(host: "::1", port: 0)
        let server = MicroHTTPDListener(configuration: configuration, responder: EchoPeer(), logger: .silent)
        do {
            try server.start()
        } catch {
            // A machine without IPv6 on loopback cannot run this; every CI machine here has it.
            Issue.record("cannot listen on [::1]: \(error)")
            return
        }
        defer { server.shutdown(quiescing: false) }
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var remote = sockaddr_in6()
        remote.sin6_family = sa_family_t(AF_INET6)
        remote.sin6_port = in_port_t(UInt16(server.port).bigEndian)
        inet_pton(AF_INET6, "::1", &remote.sin6_addr)
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        #expect(connected == 0)
        RawHTTPClient.sendAll(fd, Array("GET /peer HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        #expect(try RawHTTPClient.parse(RawHTTPClient.readAll(fd)).text == "::1")
    }
}
