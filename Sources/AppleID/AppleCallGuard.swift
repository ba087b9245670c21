import Foundation
import Locking

/// What every outbound call to Apple passes: a cap on calls in flight and a circuit breaker per endpoint.
/// A call the guard refuses fails at once with `AppleHTTPError.notAttempted`, so a slow or failing Apple costs
/// callers no waiting beyond the calls already in flight.
/// - Breaker: after `failureThreshold` consecutive failures (no answer in time, unreachable, 5xx) of one endpoint,
///   calls to it are refused for `coolDown` seconds; then one probe goes through (half-open): its success closes
///   the breaker, its failure opens it for another cool-down.
public final class AppleCallGuard: Sendable {
    public struct Settings: Sendable {
        public var maxInFlight = 32
        public var failureThreshold = 5
        public var coolDown: TimeInterval = 10
        public init() {}
    }

    struct Breaker {
        var consecutiveFailures = 0
        var openUntil: Date?
        var probing = false
    }

    struct State {
        var inFlight = 0
        var breakers: [String: Breaker] = [:]
    }

    public let settings: Settings
    private let clock: WallClock
    private let state = Lock(State())

    public init(settings: Settings = Settings(), clock: WallClock = .system) {
        self.settings = settings
        self.clock = clock
    }

    /// Calls in flight now.
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// Whether a call to `endpoint` would be let through now (a hint: another caller may take the room first).
    public func admits(_ endpoint: String) -> Bool {
        let now = clock.now
        return state.withLock { state in refusal(state, endpoint, now) == nil }
    }

    /// Whether `endpoint`'s breaker is open (refusing calls) now.
    public func isOpen(_ endpoint: String) -> Bool {
        let now = clock.now
        return state.withLock { state in
            guard let until = state.breakers[endpoint]?.openUntil else { return false }
            return now < until || state.breakers[endpoint]?.probing == true
        }
    }

    /// Runs `call` if the cap and the breaker let it, and records its outcome for the breaker.
    public func perform(_ endpoint: String,
                        _ call: () throws(AppleHTTPError) -> HTTPExchange) throws(AppleHTTPError) -> HTTPExchange {
        try begin(endpoint)
        defer { release() }
        do {
            let exchange = try call()
            record(endpoint, failed: exchange.status >= 500)
            return exchange
        } catch {
            record(endpoint, failed: true)
            throw error
        }
    }

    /// Takes room for one call, or throws `.notAttempted` when the breaker or the cap refuses it.
    /// Every successful `begin` is followed by one `release`, when the call has really ended.
    func begin(_ endpoint: String) throws(AppleHTTPError) {
        let now = clock.now
        let refused: String? = state.withLock { state in
            if let reason = refusal(state, endpoint, now) { return reason }
            state.inFlight += 1
            if let until = state.breakers[endpoint]?.openUntil, now >= until { state.breakers[endpoint]?.probing = true }
            return nil
        }
        if let refused { throw .notAttempted(refused) }
    }

    func release() {
        state.withLock { $0.inFlight -= 1 }
    }

    /// A call's outcome as the breaker sees it: failed means no answer in time, unreachable, or 5xx.
    func record(_ endpoint: String, failed: Bool) {
        let now = clock.now
        let (threshold, coolDown) = (settings.failureThreshold, settings.coolDown)
        state.withLock { state in
            var breaker = state.breakers[endpoint] ?? Breaker()
            if failed {
                breaker.consecutiveFailures += 1
                if breaker.probing || breaker.consecutiveFailures >= threshold {
                    breaker.openUntil = now.addingTimeInterval(coolDown)
                }
            } else {
                breaker = Breaker()
            }
            breaker.probing = false
            state.breakers[endpoint] = breaker
        }
    }

    private func refusal(_ state: State, _ endpoint: String, _ now: Date) -> String? {
        if let breaker = state.breakers[endpoint], let until = breaker.openUntil {
            if now < until { return "Apple kept failing (\(endpoint)); calls resume after a short cool-down" }
            if breaker.probing { return "Apple kept failing (\(endpoint)); one trial call is under way" }
        }
        if state.inFlight >= settings.maxInFlight {
            return "\(state.inFlight) calls to Apple are already in flight (the cap is \(settings.maxInFlight))"
        }
        return nil
    }
}
