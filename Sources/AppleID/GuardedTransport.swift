import Foundation

/// Wraps the transport to Apple so every call passes the `AppleCallGuard` (cap on calls in flight, breaker) and
/// has a deadline: the call runs on its own thread, and the caller stops waiting at the deadline while the call,
/// still counted in flight, finishes or times out on its own. `callTimeout` is the deadline of a call given none.
/// `observer` hears of every call, refused ones included (for metrics).
public final class GuardedTransport: AppleHTTPTransport {
    public typealias Observer = @Sendable (AppleCallRecord) -> Void

    public let callGuard: AppleCallGuard
    private let base: any AppleHTTPTransport
    private let callTimeout: TimeInterval
    private let observer: Observer?

    public init(_ base: any AppleHTTPTransport, guard callGuard: AppleCallGuard, callTimeout: TimeInterval = 5,
                observer: Observer? = nil) {
        self.base = base
        self.callGuard = callGuard
        self.callTimeout = callTimeout
        self.observer = observer
    }

    public func get(_ url: String) throws(AppleHTTPError) -> HTTPExchange {
        try run(url, deadline: Date().addingTimeInterval(callTimeout)) { [base] () throws(AppleHTTPError) in try base.get(url) }
    }

    public func postForm(_ url: String, fields: [(String, String)]) throws(AppleHTTPError) -> HTTPExchange {
        try postForm(url, fields: fields, deadline: Date().addingTimeInterval(callTimeout))
    }

    public func postForm(_ url: String, fields: [(String, String)], deadline: Date) throws(AppleHTTPError) -> HTTPExchange {
        let limited = min(deadline, Date().addingTimeInterval(callTimeout))
        return try run(url, deadline: limited) { [base] () throws(AppleHTTPError) in try base.postForm(url, fields: fields) }
    }

    public func postForm(_ url: String, fields: [(String, String)], bearerToken: String,
                         deadline: Date) throws(AppleHTTPError) -> HTTPExchange {
        let limited = min(deadline, Date().addingTimeInterval(callTimeout))
        return try run(url, deadline: limited) { [base] () throws(AppleHTTPError) in
            try base.postForm(url, fields: fields, bearerToken: bearerToken, deadline: limited)
        }
    }

    /// The endpoint a breaker is kept for: the URL's path (`/auth/token`, `/auth/keys`, `/auth/revoke`).
    public static func endpoint(_ url: String) -> String { URLComponents(string: url)?.path ?? url }

    private func run(_ url: String, deadline: Date,
                     _ call: @escaping @Sendable () throws(AppleHTTPError) -> HTTPExchange) throws(AppleHTTPError) -> HTTPExchange {
        guard deadline > Date() else { throw .timedOut }
        let endpoint = Self.endpoint(url)
        do {
            try callGuard.begin(endpoint)  // a refused call costs no thread
        } catch {
            observer?(AppleCallRecord(endpoint: endpoint, result: .refused, seconds: nil))
            throw error
        }
        let started = DispatchTime.now().uptimeNanoseconds
        let seconds = { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        let box = CallOutcome()
        let callGuard = callGuard
        let thread = Thread {
            let outcome = Result { () throws(AppleHTTPError) in try call() }
            callGuard.release()
            box.finish(outcome)
        }
        thread.name = "apple-call"
        thread.start()
        do {
            let exchange = try box.wait(until: deadline)
            callGuard.record(endpoint, failed: exchange.status >= 500)
            observer?(AppleCallRecord(endpoint: endpoint, result: .answered(exchange.status), seconds: seconds()))
            return exchange
        } catch {
            callGuard.record(endpoint, failed: true)
            observer?(AppleCallRecord(endpoint: endpoint, result: .failed(error), seconds: seconds()))
            throw error
        }
    }
}

/// One call to Apple as the guard saw it.
public struct AppleCallRecord: Sendable, Equatable {
    public enum Result: String, Sendable {
        case ok
        /// Apple answered 4xx (a refused code or token, or a client secret it does not accept).
        case clientError = "client_error"
        case serverError = "server_error"
        case timeout
        case unreachable
        /// Not made: the breaker was open or the cap on calls in flight was reached.
        case refused

        static func answered(_ status: Int) -> Result {
            status >= 500 ? .serverError : status >= 400 ? .clientError : .ok
        }

        static func failed(_ error: AppleHTTPError) -> Result {
            switch error {
            case .timedOut: .timeout
            case .unreachable: .unreachable
            case .notAttempted: .refused
            }
        }
    }

    /// The URL's path, as the breaker names it.
    public let endpoint: String
    public let result: Result
    /// From the start of the call to its answer or deadline; nil for a call that was not made.
    public let seconds: Double?
}

/// One call's result, handed from its thread to the waiting caller.
private final class CallOutcome: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<HTTPExchange, AppleHTTPError>?

    func finish(_ outcome: Result<HTTPExchange, AppleHTTPError>) {
        condition.lock()
        result = outcome
        condition.broadcast()
        condition.unlock()
    }

    func wait(until deadline: Date) throws(AppleHTTPError) -> HTTPExchange {
        condition.lock()
        defer { condition.unlock() }
        while result == nil {
            if !condition.wait(until: deadline) && result == nil { throw .timedOut }
        }
        return try result!.get()
    }
}
