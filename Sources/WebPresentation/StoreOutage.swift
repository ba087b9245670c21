import HTTPServer
import Storage

/// The database cannot be reached (or did not answer in time): every group answers 503 with `Retry-After`, never
/// a 500 or a hang, and the instance carries on by itself once the database is back.
package enum StoreOutage {
    package static let retryAfterSeconds = 5

    package static func isOutage(_ error: any Error) -> Bool {
        guard case .unavailable = error as? StoreError else { return false }
        return true
    }

    package static var retryAfter: HTTPHeaders { HTTPHeaders([("Retry-After", String(retryAfterSeconds))]) }
}
