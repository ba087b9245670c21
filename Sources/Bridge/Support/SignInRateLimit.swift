import AppleID
import Foundation
import HTTPServer
import Storage

/// Per client (an address, or an IPv6 /64): `GET /login` and the API's sign-in endpoints each write a row, so they are what a flood
/// would use. The buckets live in the database, one upsert per request, so instances sharing a database share the limit: a client
/// gets `burst` requests at once and `perMinute` after that in all, however it spreads them over instances.
struct SignInRateLimit: Sendable {
    let store: any Store
    let interval: TimeInterval
    let burst: Int
    let clock: WallClock
    let clientAddresses: ClientAddresses

    init(perMinute: Int, store: any Store, clock: WallClock, clientAddresses: ClientAddresses) {
        self.store = store
        interval = 60 / Double(max(1, perMinute))
        burst = max(10, perMinute / 6)
        self.clock = clock
        self.clientAddresses = clientAddresses
    }

    /// Admits the request, then replies with `next()`, once the bucket's write committed.
    func admitting(_ request: Request, then next: @escaping @Sendable () throws -> Reply) -> Reply {
        let admission = admission(of: request)
        return request.reply(afterWriting: { try admission.admit(in: $0) }, to: store, isolation: Admission.isolation) {
            try next()
        }
    }

    /// The check for one request, to run inside a write transaction of the caller's (one upsert).
    func admission(of request: Request) -> Admission {
        // A trusted proxy's entry is an address; anything else is still bounded to what the store accepts.
        let address = clientAddresses.limitKey(of: request)
        let key = address.isEmpty ? "-" : String(decoding: address.utf8.prefix(190), as: UTF8.self)
        return Admission(key: key, now: clock.now, interval: interval, burst: burst)
    }

    struct Admission: Sendable {
        /// The admission is one upsert whose `WHERE` refuses: at READ COMMITTED a concurrent request of the same
        /// client waits for the bucket's row and then sees its new value, where SERIALIZABLE made every request of
        /// a busy client but one run again.
        static let isolation = WriteIsolation.readCommitted

        let key: String
        let now: Date
        let interval: TimeInterval
        let burst: Int

        /// Throws `RateLimited` beyond the limit; a refused request changes nothing.
        func admit(in transaction: any StoreTransaction) throws {
            let admitted = try transaction.admitRateLimited(key: key, now: now, interval: interval, burst: burst)
            // A refused request may try again within one interval (see `admitRateLimited`).
            guard admitted else { throw RateLimited(retryAfter: max(1, Int(interval.rounded(.up)))) }
        }
    }
}
