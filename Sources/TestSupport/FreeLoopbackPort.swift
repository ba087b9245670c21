import Foundation

/// A free loopback port, for a server whose port must be known before it starts (its public URL, a redirect URI).
///
/// Below the kernel's ephemeral range: a port the kernel handed out (bind to port 0) was, between this check and the
/// server's `listen`, sometimes taken as the local end of one of the many connections the tests open, and the
/// server could not start (a CI run on 2026-12-05). No outgoing connection is given a port below that range.
/// The shell scripts' twin is `free_port` in scripts/lib/free-port.sh, the Python runners' Tests/Support/ports.py.
public func freeLoopbackPort() -> Int {
    let ephemeralLow = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
        .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } } ?? 32768
    let range = 10_000..<max(ephemeralLow, 12_000)
    while true {
        let port = Int.random(in: range)
        if loopbackPortIsFree(port) { return port }
    }
}

/// Whether a listening socket could bind `port` on 127.0.0.1 right now.
private func loopbackPortIsFree(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    // As the server will bind it: TIME_WAIT connections of an earlier user do not stand in the way.
    var on: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
