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
    /// The call was not made: too many calls in flight, or Apple kept failing (see `AppleCallGuard`).
    case notAttempted(String)

    public var description: String {
        switch self {
        case let .unreachable(reason): "Apple could not be reached: \(reason)"
        case .timedOut: "Apple did not answer in time"
        case let .notAttempted(reason): "Apple was not called: \(reason)"
        }
    }
}

/// Outbound HTTPS to Apple (keys, token, revoke). Synchronous: callers are off-listener workers or background
/// threads, never a listener thread; every call has a bounded timeout.
public protocol AppleHTTPTransport: Sendable {
    func get(_ url: String) throws(AppleHTTPError) -> HTTPExchange
    func postForm(_ url: String, fields: [(String, String)]) throws(AppleHTTPError) -> HTTPExchange
    /// A post that gives up (`.timedOut`) at `deadline` if the transport's own timeout is later.
    func postForm(_ url: String, fields: [(String, String)], deadline: Date) throws(AppleHTTPError) -> HTTPExchange
    /// A post with a Bearer access token (`/auth/usermigrationinfo`); the token never appears in an error.
    func postForm(_ url: String, fields: [(String, String)], bearerToken: String,
                  deadline: Date) throws(AppleHTTPError) -> HTTPExchange
}

extension AppleHTTPTransport {
    public func postForm(_ url: String, fields: [(String, String)], deadline: Date) throws(AppleHTTPError) -> HTTPExchange {
        try postForm(url, fields: fields)
    }

    /// Transports that cannot send an `Authorization` header (test doubles) refuse such a post rather than drop it.
    public func postForm(_ url: String, fields: [(String, String)], bearerToken: String,
                         deadline: Date) throws(AppleHTTPError) -> HTTPExchange {
        throw .notAttempted("this transport cannot send an Authorization header")
    }
}
