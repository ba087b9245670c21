import Foundation
import JOSE
import JSON

/// Apple's signing keys, fetched from `{APPLE_ID_URL}/auth/keys` and cached.
/// - Cache-Control max-age is honoured within bounds.
/// - An unknown `kid` forces one re-fetch; forced fetches are at least `minimumRefetchInterval` apart, and
///   concurrent callers share one fetch (single flight).
/// - When Apple is unreachable the keys already held keep serving; with none at all callers get `.keysUnavailable`.
public final class JWKSCache: AppleKeySet, AppleKeyFetching, @unchecked Sendable {
    public struct Settings: Sendable {
        public var minimumRefetchInterval: TimeInterval = 30
        public var defaultLifetime: TimeInterval = 3600
        public var minimumLifetime: TimeInterval = 60
        public var maximumLifetime: TimeInterval = 86_400
        /// A cold start with no keys retries sooner than forced re-fetches.
        public var coldStartRetryInterval: TimeInterval = 5
        public init() {}
    }

    public let url: String
    private let transport: any AppleHTTPTransport
    private let clock: WallClock
    private let settings: Settings
    private let onEvent: @Sendable (String, String) -> Void

    // All guarded by `condition`.
    private let condition = NSCondition()
    private var keys: [String: RSAPublicKey] = [:]
    private var freshUntil = Date.distantPast
    private var lastAttempt: Date?
    private var fetching = false
    private var fetchCount = 0
    /// The last fetch failed: an unknown kid then means "cannot tell", not "not Apple's".
    private var lastFetchFailed = false

    public init(url: String, transport: any AppleHTTPTransport, clock: WallClock = .system, settings: Settings = Settings(),
                onEvent: @escaping @Sendable (_ event: String, _ detail: String) -> Void = { _, _ in }) {
        self.url = url
        self.transport = transport
        self.clock = clock
        self.settings = settings
        self.onEvent = onEvent
    }

    /// How many fetches this cache has started.
    public var fetches: Int { condition.lock(); defer { condition.unlock() }; return fetchCount }

    public var knownKeyIDs: [String] { condition.lock(); defer { condition.unlock() }; return keys.keys.sorted() }

    /// The key named `kid`, fetching when the cache is stale or the kid is new (within the rate limit).
    public func key(for kid: String) throws(TokenRejection) -> RSAPublicKey {
        condition.lock()
        defer { condition.unlock() }
        let now = clock.now
        if let key = keys[kid], now < freshUntil { return key }

        if fetching {
            while fetching { condition.wait() }
        } else if mayFetch(now: now) {
            fetchLocked(now: now)
        }
        if let key = keys[kid] { return key }
        throw keys.isEmpty || lastFetchFailed ? .keysUnavailable : .unknownKeyID(kid.loggable)
    }

    public func keyWithoutFetching(_ kid: String) -> Result<RSAPublicKey, TokenRejection>? {
        condition.lock()
        defer { condition.unlock() }
        let now = clock.now
        if let key = keys[kid], now < freshUntil { return .success(key) }
        guard !fetching && !mayFetch(now: now) else { return nil }
        // What `key(for:)` answers when it may not fetch yet: the key it holds, however old, or why there is none.
        if let key = keys[kid] { return .success(key) }
        return .failure(keys.isEmpty || lastFetchFailed ? .keysUnavailable : .unknownKeyID(kid.loggable))
    }

    /// Fetches now if allowed (used at start-up to warm the cache). Returns whether keys are held.
    @discardableResult
    public func prefetch() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if !fetching { fetchLocked(now: clock.now) }
        return !keys.isEmpty
    }

    private func mayFetch(now: Date) -> Bool {
        guard let lastAttempt else { return true }
        let interval = keys.isEmpty ? settings.coldStartRetryInterval : settings.minimumRefetchInterval
        return now.timeIntervalSince(lastAttempt) >= interval
    }

    /// Runs one fetch without holding the lock; other callers wait on the condition for its result.
    private func fetchLocked(now: Date) {
        fetching = true
        lastAttempt = now
        fetchCount += 1
        condition.unlock()
        let outcome = download()
        condition.lock()
        fetching = false
        condition.broadcast()
        switch outcome {
        case let .success((fetched, lifetime)):
            lastFetchFailed = false
            keys = fetched
            freshUntil = clock.now.addingTimeInterval(lifetime)
            onEvent("jwks_fetched", "keys=\(fetched.count)")
        case let .failure(reason):
            lastFetchFailed = true
            onEvent("jwks_fetch_failed", reason.description)
        }
    }

    private func download() -> Result<([String: RSAPublicKey], TimeInterval), JWKSFetchFailure> {
        let exchange: HTTPExchange
        do {
            exchange = try transport.get(url)
        } catch {
            return .failure(JWKSFetchFailure(error.description))
        }
        guard exchange.status == 200 else { return .failure(JWKSFetchFailure("status \(exchange.status)")) }
        guard let document = try? JSONValue.parse(exchange.body), case let .array(entries)? = document["keys"] else {
            return .failure(JWKSFetchFailure("the key set is not JSON with a keys array"))
        }
        var parsed: [String: RSAPublicKey] = [:]
        for entry in entries {
            guard let kid = entry["kid"]?.stringValue, let key = try? RSAPublicKey(jwk: entry) else { continue }
            parsed[kid] = key
        }
        guard !parsed.isEmpty else { return .failure(JWKSFetchFailure("the key set has no usable RS256 keys")) }
        return .success((parsed, lifetime(cacheControl: exchange.header("Cache-Control"))))
    }

    private func lifetime(cacheControl: String?) -> TimeInterval {
        guard let cacheControl else { return settings.defaultLifetime }
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = TimeInterval(parts[1]), seconds.isFinite {
                return min(max(seconds, settings.minimumLifetime), settings.maximumLifetime)
            }
        }
        return settings.defaultLifetime
    }
}

struct JWKSFetchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
