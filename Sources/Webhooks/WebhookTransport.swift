import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one attempt to post an event got back.
public enum WebhookResponse: Sendable, Equatable {
    /// The endpoint answered with this status (2xx is accepted).
    case status(Int)
    /// No answer: refused, unreachable, or not within the timeout.
    case unreachable(String)

    public var isAccepted: Bool {
        if case .status(let code) = self { return (200...299).contains(code) }
        return false
    }

    /// For the outbox and the log: the status or what failed, never the body.
    public var description: String {
        switch self {
        case .status(let code): "HTTP \(code)"
        case .unreachable(let reason): reason
        }
    }
}

/// Posts one signed event.
public protocol WebhookTransport: Sendable {
    func post(_ url: URL, headers: [(String, String)], body: [UInt8]) -> WebhookResponse
}

/// `WebhookTransport` over an ephemeral URLSession: each attempt waits at most `timeout`, redirects are not followed
/// (a signed event goes only where BRIDGE_WEBHOOK_URL says).
public final class URLSessionWebhookTransport: NSObject, WebhookTransport, URLSessionTaskDelegate, @unchecked Sendable {
    private let timeout: TimeInterval
    private var session: URLSession!

    public init(timeout: TimeInterval = 10) {
        self.timeout = timeout
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpAdditionalHeaders = ["User-Agent": "AppleSignInBridge-Webhooks"]
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    public func post(_ url: URL, headers: [(String, String)], body: [UInt8]) -> WebhookResponse {
        switch exchange(url, headers: headers, body: body) {
        case .success(let answer): .status(answer.status)
        case .failure(let reason): .unreachable(reason.description)
        }
    }

    /// A JSON POST and the answer's status and body (for `notify`, which shows what the endpoint said).
    public func exchange(_ url: URL, headers: [(String, String)],
                         body: [UInt8]) -> Result<(status: Int, body: [UInt8]), Unreachable> {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = Data(body)
        let box = ResponseBox()
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: request) { data, response, error in
            if let http = response as? HTTPURLResponse {
                box.result = .success((http.statusCode, Array(data ?? Data())))
            } else {
                box.result = .failure(Unreachable(description: error.map { ($0 as NSError).localizedDescription } ?? "no HTTP response"))
            }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout + 1) == .timedOut {
            task.cancel()
            return .failure(Unreachable(description: "no answer within \(Int(timeout)) s"))
        }
        return box.result ?? .failure(Unreachable(description: "no HTTP response"))
    }

    public struct Unreachable: Error, CustomStringConvertible {
        public let description: String
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                           newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}

private final class ResponseBox: @unchecked Sendable {
    var result: Result<(status: Int, body: [UInt8]), URLSessionWebhookTransport.Unreachable>?
}
