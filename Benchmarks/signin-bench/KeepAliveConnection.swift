import Foundation
import TestSupport

/// One answer read off a keep-alive connection.
struct Answer {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

enum ConnectionError: Error, CustomStringConvertible {
    case closed, malformed(String)
    var description: String {
        switch self {
        case .closed: "the server closed the connection without an answer"
        case let .malformed(what): "malformed answer: \(what)"
        }
    }
}

/// A minimal HTTP/1.1 client that keeps its connection open between requests, so preparing 100k sign-ins
/// does not churn through loopback ports. Answers must carry Content-Length (the bridge's always do).
final class KeepAliveConnection {
    let port: Int
    private var socket: Int32 = -1
    private var pending: [UInt8] = []

    init(port: Int) { self.port = port }

    deinit { if socket >= 0 { close(socket) } }

    /// Sends `request` (complete bytes) and reads one answer; reconnects once if the kept connection was closed.
    func exchange(_ request: [UInt8]) throws -> Answer {
        if socket >= 0, let answer = try? sendAndRead(request) { return answer }
        reconnect()
        socket = try RawHTTPClient.connect(port: port)
        return try sendAndRead(request)
    }

    private func reconnect() {
        if socket >= 0 { close(socket) }
        socket = -1
        pending = []
    }

    private func sendAndRead(_ request: [UInt8]) throws -> Answer {
        RawHTTPClient.sendAll(socket, request)
        let headEnd = try readUntilHeaderEnd()
        let head = String(decoding: pending[..<headEnd], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw ConnectionError.malformed(head) }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        guard let lengthText = headers.first(where: { $0.name.lowercased() == "content-length" })?.value,
              let length = Int(lengthText) else { throw ConnectionError.malformed("no Content-Length") }
        let bodyStart = headEnd + 4
        try fill(to: bodyStart + length)
        let body = Array(pending[bodyStart..<(bodyStart + length)])
        pending.removeFirst(bodyStart + length)
        if headers.contains(where: { $0.name.lowercased() == "connection" && $0.value.lowercased() == "close" }) {
            reconnect()
        }
        return Answer(status: status, headers: headers, body: body)
    }

    private func readUntilHeaderEnd() throws -> Int {
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let range = pending.firstRange(of: separator) { return range.lowerBound }
            try readMore()
        }
    }

    private func fill(to count: Int) throws {
        while pending.count < count { try readMore() }
    }

    private func readMore() throws {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw ConnectionError.closed }
        pending.append(contentsOf: buffer[0..<count])
    }
}
