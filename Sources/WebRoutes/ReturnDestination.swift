import BridgeSettings
import HTTPServer
import JOSE
import SignIn

/// Carries an allowed `return_to` from `GET /login` to the callback. The login attempt's row has no field for it,
/// so it travels in a cookie beside the binding cookie, signed with a key derived from BRIDGE_SECRET_KEY over the
/// attempt's state digest and the address: a cookie set by anyone else, or taken from another attempt, is ignored.
/// It is checked against `BRIDGE_RETURN_URLS` again when read, so a later, narrower list also applies.
package struct ReturnDestination: Sendable {
    package static let cookiePrefix = "asb_return_"
    /// Only the callback reads it; signed, so it needs no `__Host-` protection.
    package static let cookiePath = "/apple_redirect"

    package let key: [UInt8]
    package let policy: ReturnURLPolicy

    package init(key: [UInt8], policy: ReturnURLPolicy) {
        self.key = key
        self.policy = policy
    }

    package static func cookieName(forState state: String) -> String { cookieName(forStateDigest: SecretTokens.digest(state)) }

    package static func cookieName(forStateDigest digest: String) -> String { cookiePrefix + String(decoding: digest.utf8.prefix(16), as: UTF8.self) }

    /// The cookie for an allowed destination; nil when `candidate` is not allowed.
    package func cookie(for candidate: String?, state: String, lifetime: Int) -> Cookie? {
        guard let destination = policy.allowed(candidate) else { return nil }
        let digest = SecretTokens.digest(state)
        let value = Base64URL.encode(Array(destination.utf8)) + "." + Base64URL.encode(tag(destination, stateDigest: digest))
        return Cookie(name: Self.cookieName(forStateDigest: digest), value: value, path: Self.cookiePath,
                      maxAge: lifetime, secure: true, httpOnly: true, sameSite: .none)
    }

    /// The destination this browser's cookie carries for the state with this digest, if it is genuine and still
    /// allowed.
    package func destination(_ request: Request, stateDigest: String) -> String? {
        guard let value = request.cookie(Self.cookieName(forStateDigest: stateDigest)) else { return nil }
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let addressBytes = Base64URL.decode(parts[0]), let tag = Base64URL.decode(parts[1]),
              let address = String(validating: addressBytes, as: UTF8.self),
              HMACSHA256.isValid(tag: tag, key: key, message: message(address, stateDigest: stateDigest)) else { return nil }
        return policy.allowed(address)
    }

    package func expiredCookie(stateDigest: String) -> Cookie {
        .expired(Self.cookieName(forStateDigest: stateDigest), path: Self.cookiePath, sameSite: .none)
    }

    private func tag(_ address: String, stateDigest: String) -> [UInt8] {
        HMACSHA256.authenticate(key: key, message: message(address, stateDigest: stateDigest))
    }

    private func message(_ address: String, stateDigest: String) -> [UInt8] {
        Array("return-to\n\(stateDigest)\n\(address)".utf8)
    }
}
