import Foundation
import HTTPServer

/// A deliberately small HTTP/1.1 client over a plain socket, so tests send exactly the bytes they mean
/// (odd paths, bodiless POSTs, slow clients) and see exactly what the server answered.
public struct RawHTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public var text: String { String(decoding: body, as: UTF8.self) }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// `name=value` pairs from every Set-Cookie header (attributes dropped).
    public var setCookies: [String: String] {
        var result: [String: String] = [:]
        for header in headerValues("Set-Cookie") {
            let first = header.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            if let equals = first.firstIndex(of: "=") {
                result[String(first[..<equals])] = String(first[first.index(after: equals)...])
            }
        }
        return result
    }

    /// The full Set-Cookie header for one cookie name.
    public func setCookieHeader(_ name: String) -> String? {
        headerValues("Set-Cookie").first { $0.hasPrefix(name + "=") }
    }
}

public enum RawHTTPError: Error, CustomStringConvertible {
    case connect(Int32), closedWithoutResponse, malformed(String)
    public var description: String {
        switch self {
        case let .connect(code): "connect failed: errno \(code)"
        case .closedWithoutResponse: "connection closed without a response"
        case let .malformed(text): "malformed response: \(text)"
        }
    }
}

public enum RawHTTPClient {
    /// Opens a TCP connection to 127.0.0.1:port.
    public static func connect(port: Int, host: String = "127.0.0.1") throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 {
            let code = errno
            close(fd)
            throw RawHTTPError.connect(code)
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Reads until the peer closes (requests are sent with `Connection: close`).
    public static func readAll(_ fd: Int32) -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    /// Sends raw bytes as they are and parses the answer.
    public static func exchange(port: Int, raw: [UInt8]) throws -> RawHTTPResponse {
        let fd = try connect(port: port)
        defer { close(fd) }
        sendAll(fd, raw)
        return try parse(readAll(fd))
    }

    /// Builds and sends one request with `Connection: close`.
    public static func request(port: Int, method: String = "GET", path: String, headers: [(String, String)] = [],
                               body: [UInt8]? = nil) throws -> RawHTTPResponse {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body, !headers.contains(where: { $0.0.lowercased() == "transfer-encoding" }) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        return try exchange(port: port, raw: Array(head.utf8) + (body ?? []))
    }

    public static func request(port: Int, method: String = "GET", path: String, headers: [(String, String)] = [],
                               body: String) throws -> RawHTTPResponse {
        try request(port: port, method: method, path: path, headers: headers, body: Array(body.utf8))
    }

    public static func parse(_ data: [UInt8]) throws -> RawHTTPResponse {
        guard !data.isEmpty else { throw RawHTTPError.closedWithoutResponse }
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headEnd = data.firstRange(of: separator) else { throw RawHTTPError.malformed("no header end") }
        let head = String(decoding: data[..<headEnd.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw RawHTTPError.malformed(head) }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Array(data[headEnd.upperBound...])
        if headers.contains(where: { $0.name.lowercased() == "transfer-encoding" && $0.value.lowercased().contains("chunked") }) {
            body = dechunk(body)
        }
        return RawHTTPResponse(status: status, headers: headers, body: body)
    }

    static func dechunk(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < data.count {
            guard let lineEnd = data[index...].firstRange(of: [13, 10]) else { break }
            let sizeText = String(decoding: data[index..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16), size > 0 else { break }
            let start = lineEnd.upperBound
            out.append(contentsOf: data[start..<min(start + size, data.count)])
            index = start + size + 2
        }
        return out
    }
}

/// One kept-alive connection that sends requests one after another and reads each answer by its
/// Content-Length, so tests can time a request without the cost of a new connection.
public final class KeepAliveHTTPConnection {
    public let fd: Int32
    private var buffer: [UInt8] = []

    public init(port: Int) throws { fd = try RawHTTPClient.connect(port: port) }
    deinit { close(fd) }

    public func request(_ method: String = "GET", _ path: String) throws -> RawHTTPResponse {
        RawHTTPClient.sendAll(fd, Array("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        let separator: [UInt8] = [13, 10, 13, 10]
        while buffer.firstRange(of: separator) == nil { try fill() }
        let headEnd = buffer.firstRange(of: separator)!.upperBound
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self).lowercased()
        // An answer to HEAD, and a 304, carry no body whatever their Content-Length says.
        let bodiless = method == "HEAD" || head.hasPrefix("http/1.1 304") || head.hasPrefix("http/1.0 304")
        let length = bodiless ? 0 : head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        while buffer.count < headEnd + length { try fill() }
        let response = try RawHTTPClient.parse(Array(buffer[..<(headEnd + length)]))
        buffer.removeFirst(headEnd + length)
        return response
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw RawHTTPError.closedWithoutResponse }
        buffer.append(contentsOf: chunk[0..<count])
    }
}

extension RawHTTPResponse {
    /// What a client reads of `response`, served in process (see `InProcessClient`): each field's value without the
    /// whitespace around it, which is not part of it (RFC 9110, 5.5) and which `parse` drops too.
    public init(_ response: Response) {
        self.init(status: response.status,
                  headers: response.headers.map { ($0.name, $0.value.trimmingCharacters(in: .whitespaces)) },
                  body: response.body)
    }
}
