import AppleID
import Foundation
import HTTPServer
import SignIn
import Storage

/// Per client (an address, or an IPv6 /64): `GET /login` and the API's sign-in endpoints each write a row, so they are what a flood
/// would use. The buckets live in the database, one upsert per request, so instances sharing a database share the limit: a client
/// gets `burst` requests at once and `perMinute` after that in all, however it spreads them over instances.
package struct SignInRateLimit: Sendable {
    /// What it reads and writes of the store.
    package typealias StoreRole = any RateLimitTransaction
    package let store: StoreAccess<StoreRole>
    package let interval: TimeInterval
    package let burst: Int
    package let clock: WallClock
    package let clientAddresses: ClientAddresses

    package init(perMinute: Int, store: StoreAccess<StoreRole>, clock: WallClock, clientAddresses: ClientAddresses) {
        self.store = store
        interval = 60 / Double(max(1, perMinute))
        burst = max(10, perMinute / 6)
        self.clock = clock
        self.clientAddresses = clientAddresses
    }

    /// The one way a route is limited on its own: its admission is written first, then `handler` replies. A route
    /// that writes anyway (a login attempt, a code from a session) puts `admission(of:)` into its own write instead.
    /// Groups apply it to the routes registered as rate limited (`JSONAPIGroup.endpoint(rateLimited:)`,
    /// `OpenIDProviderGroup.endpoint(rateLimited:replying:)`).
    package func limiting(_ handler: @escaping Router.ReplyHandler) -> Router.ReplyHandler {
        { [self] request in
            let admission = admission(of: request)
            return request.reply(afterWriting: { try admission.admit(in: $0) }, to: store,
                                 isolation: RateLimitAdmission.isolation) { try handler(request) }
        }
    }

    /// The check for one request, to run inside a write transaction of the caller's (one upsert).
    package func admission(of request: Request) -> RateLimitAdmission {
        // A trusted proxy's entry is an address; anything else is still bounded to what the store accepts.
        let address = clientAddresses.limitKey(of: request)
        let key = address.isEmpty ? "-" : String(decoding: address.utf8.prefix(190), as: UTF8.self)
        return RateLimitAdmission(key: key, now: clock.now, interval: interval, burst: burst)
    }
}
