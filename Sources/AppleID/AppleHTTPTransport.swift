import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A finished HTTP exchange with Apple.
public struct HTTPExchange: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

public enum AppleHTTPError: Error, CustomStringConvertible, Sendable {
    case unreachable(String)
    case timedOut

    public var description: String {
        switch self {
        case let .unreachable(reason): "Apple could not be reached: \(reason)"
        case .timedOut: "Apple did not answer in time"
        }
    }
}

/// Outbound HTTPS to Apple (keys, token, revoke). Synchronous because request handlers run on the
/// HTTP server's own threads; every call has a bounded timeout.
public protocol AppleHTTPTransport: Sendable {
    func get(_ url: String) throws(AppleHTTPError) -> HTTPExchange
    func postForm(_ url: String, fields: [(String, String)]) throws(AppleHTTPError) -> HTTPExchange
}
