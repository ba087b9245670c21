import Logging

/// A request served without a socket. It gets the request as a client writes it (method, target, header
/// fields, body) and returns what the client would read back. This is how route tests reach the composed app, as
/// Hummingbird's router test mode does.
///
/// It applies what the listener applies before a responder runs:
/// - the head's checks (Host, framing fields, an encoded NUL in the path);
/// - the body limit;
/// - whether X-Forwarded-For is believed from the peer.
///
/// It decodes the target the way libmicrohttpd does, drives the reply on the calling thread, strips the body of
/// an answer to HEAD, and reports the request as completed, as the listener does. Whatever needs a connection
/// stays with the listener and its own tests: byte-level framing, timeouts, the connection and per-client caps,
/// and the off-listener pool's 503.
public struct InProcessClient: Sendable {
    private let responder: any HTTPResponder
    private let configuration: ServerConfiguration
    private let refusal: MicroHTTPDListener.Refusal
    private let logger: Logger

    public init(configuration: ServerConfiguration, responder: some HTTPResponder, logger: Logger = .silent,
                refusal: @escaping MicroHTTPDListener.Refusal = MicroHTTPDListener.plainRefusal) {
        self.configuration = configuration
        self.responder = responder
        self.logger = logger
        self.refusal = refusal
    }

    /// `target`: as on the request line (`/path?query`, percent-encoded). The client's fields are taken as they
    /// are: like a real client, name the Host.
    public func respond(method: String = "GET", target: String, headers: HTTPHeaders = HTTPHeaders(),
                        body: [UInt8] = [], remoteAddress: String = "127.0.0.1") -> Response {
        let started = ConnectionDeadlines.now()
        var (path, query) = Self.split(target: RequestHead.path(ofTarget: target))
        // libmicrohttpd hands the path over as a C string, which ends at an encoded NUL; the head is refused.
        let nulInPath = path.utf8.firstIndex(of: 0)
        if let nulInPath { path = String(path[..<nulInPath]) }
        var response = answer(Request(method: method, path: path, query: query, headers: headers, body: body,
                                      remoteAddress: remoteAddress), nulInPath: nulInPath != nil)
        let seconds = Double(ConnectionDeadlines.now() &- started) / 1e9
        configuration.requestCompleted?(path, response.status, seconds)
        if method == "HEAD" { response.body = [] }
        return response
    }

    private func answer(_ request: Request, nulInPath: Bool) -> Response {
        var request = request
        var head = RequestHead(isHTTP11: true)
        request.headers.forEachField { head.add(name: $0, value: $1) }
        if nulInPath { head.refuseEncodedNULInPath() }
        if let (status, problem, _) = head.problem() { return refusal(request.path, status, problem) }
        if request.body.count > configuration.maxBodySize {
            return refusal(request.path, 413, "The request body is larger than \(configuration.maxBodySize) bytes.")
        }
        request.peerIsTrustedProxy = request.headers.contains("X-Forwarded-For")
            && configuration.trustsForwardedFor(request.remoteAddress)
        do {
            return try responder.respond(to: request).wait()
        } catch {
            return MicroHTTPDCallbacks.failureResponse(error, path: request.path, logger)
        }
    }

    /// The percent-decoded path and the query's fields. libmicrohttpd decodes the path without turning `+` into a
    /// space, and keeps an escape that is not one as it is.
    private static func split(target: String) -> (path: String, query: FormFields) {
        let bytes = Array(target.utf8)
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return (percentDecoded(bytes[...]), FormFields()) }
        return (percentDecoded(bytes[..<mark]), FormFields(urlEncoded: bytes[(mark + 1)...]))
    }

    private static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { FormFields.decode($0, 0..<buffer.count, plusIsSpace: false) } ?? ""
        }
    }
}
