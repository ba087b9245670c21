import Foundation

/// A TCP socket listening on 127.0.0.1 at a port the kernel picks, for tests' stand-in servers.
public struct LoopbackListener: Sendable {
    public let descriptor: Int32
    public let port: Int

    public struct Failure: Error, CustomStringConvertible {
        public let description = "cannot listen on 127.0.0.1"
    }

    public init(backlog: Int32) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(fd, pointer, length) == 0, listen(fd, backlog) == 0 else { return -1 }
                return getsockname(fd, pointer, &length)
            }
        }
        guard fd >= 0, bound == 0 else {
            if fd >= 0 { close(fd) }
            throw Failure()
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }
}
