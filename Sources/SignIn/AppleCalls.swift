import AppleID
import HTTPServer

/// The one rule for requests that may call Apple (a key fetch, a code exchange, a revocation): on a listener
/// thread, which serves many connections, such a request is handed to an off-listener worker before any side
/// effect, by throwing `OffListenerRequired`; the worker runs it again from the start. A sign-in's token is
/// checked against the keys held as it is verified (`IdentityTokenSignIn.verify`).
package enum AppleCalls {
    package static func leaveListener(_ request: Request, if callsApple: Bool) throws(OffListenerRequired) {
        if callsApple && !request.isOffListener { throw OffListenerRequired() }
    }
}
