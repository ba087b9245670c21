import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `AppleHTTPTransport` over an ephemeral URLSession, each call waiting at most `timeout` (plus a second).
public final class URLSessionTransport: AppleHTTPTransport {
    private let session: URLSession
    private let timeout: TimeInterval

    public init(timeout: TimeInterval = 5) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpAdditionalHeaders = ["User-Agent": "AppleSignInBridge"]
        session = URLSession(configuration: configuration)
        self.timeout = timeout
    }

    public func get(_ url: String) throws(AppleHTTPError) -> HTTPExchange {
        guard let target = URL(string: url) else { throw .unreachable("invalid URL") }
        return try perform(URLRequest(url: target))
    }

    public func postForm(_ url: String, fields: [(String, String)]) throws(AppleHTTPError) -> HTTPExchange {
        try perform(try formRequest(url, fields))
    }

    public func postForm(_ url: String, fields: [(String, String)], bearerToken: String,
                         deadline: Date) throws(AppleHTTPError) -> HTTPExchange {
        var request = try formRequest(url, fields)
        request.setValue("Bearer \(bearerToken)", forHTTPHeaderField: "Authorization")
        return try perform(request)
    }

    private func formRequest(_ url: String, _ fields: [(String, String)]) throws(AppleHTTPError) -> URLRequest {
        guard let target = URL(string: url) else { throw .unreachable("invalid URL") }
        var request = URLRequest(url: target)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(fields.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&").utf8)
        return request
    }

    private func perform(_ request: URLRequest) throws(AppleHTTPError) -> HTTPExchange {
        let box = ExchangeBox()
        let semaphore = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: request) { data, response, error in
            if let error {
                box.result = .failure(.unreachable((error as NSError).localizedDescription))
            } else if let http = response as? HTTPURLResponse {
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields {
                    if let key = key as? String, let value = value as? String { headers[key] = value }
                }
                box.result = .success(HTTPExchange(status: http.statusCode, headers: headers, body: Array(data ?? Data())))
            } else {
                box.result = .failure(.unreachable("no HTTP response"))
            }
            semaphore.signal()
        }
        task.resume()
        if semaphore.wait(timeout: .now() + timeout + 1) == .timedOut {
            task.cancel()
            throw .timedOut
        }
        return try box.result!.get()
    }

    private func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}

private final class ExchangeBox: @unchecked Sendable {
    var result: Result<HTTPExchange, AppleHTTPError>?
}
