import AppleID
import HTTPServer

/// Per client (an address, or an IPv6 /64): `GET /login` and the API's sign-in endpoints each write a row, so they are what a flood
/// would use.
struct SignInRateLimit: Sendable {
    let limiter: RateLimiter
    let clock: WallClock
    let clientAddresses: ClientAddresses

    init(perMinute: Int, clock: WallClock, clientAddresses: ClientAddresses) {
        limiter = RateLimiter(perMinute: perMinute, burst: max(10, perMinute / 6))
        self.clock = clock
        self.clientAddresses = clientAddresses
    }

    func admit(_ request: Request) throws(RateLimited) {
        let verdict = limiter.admit(clientAddresses.limitKey(of: request), now: clock.now)
        guard verdict.allowed else { throw RateLimited(retryAfter: verdict.retryAfter) }
    }
}
