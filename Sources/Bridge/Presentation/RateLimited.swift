/// A client asked too often; `retryAfter` seconds until it may again.
struct RateLimited: Error, Equatable {
    let retryAfter: Int
}
