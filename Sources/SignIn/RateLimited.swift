/// A client asked too often; `retryAfter` seconds until it may again.
package struct RateLimited: Error, Equatable {
    package let retryAfter: Int

    package init(retryAfter: Int) {
        self.retryAfter = retryAfter
    }
}
