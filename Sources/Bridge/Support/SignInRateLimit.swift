import AppleID
import HTTPServer

/// Per client address: `GET /login` and the API's sign-in endpoints each write a row, so they are what a flood
/// would use.
struct SignInRateLimit: Sendable {
    let limiter: RateLimiter
    let clock: WallClock

    init(perMinute: Int, clock: WallClock) {
        limiter = RateLimiter(perMinute: perMinute, burst: max(10, perMinute / 6))
        self.clock = clock
    }

    func admit(_ request: Request) throws(RateLimited) {
        let verdict = limiter.admit(request.clientAddress, now: clock.now)
        guard verdict.allowed else { throw RateLimited(retryAfter: verdict.retryAfter) }
    }
}
