import Foundation
import JOSE
import JSON

/// What Apple's token endpoint returned for an authorization code, its id_token verified.
/// Its description leaves the tokens out, so logging it by mistake leaks nothing.
public struct TokenExchange: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public var accessToken: String
    /// Apple sends one for authorization codes; keep it (encrypted) to revoke the user later.
    public var refreshToken: String?
    public var expiresIn: Int
    public var identity: AppleIdentity

    public init(accessToken: String, refreshToken: String?, expiresIn: Int, identity: AppleIdentity) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.identity = identity
    }

    public var description: String {
        "TokenExchange(sub: \(identity.subject), refreshToken: \(refreshToken == nil ? "none" : "present"), expiresIn: \(expiresIn))"
    }

    public var debugDescription: String { description }
}

/// The outcome of `doctor --online`'s client secret probe.
public enum ClientSecretCheck: Sendable, Equatable {
    /// Apple got past the client secret and refused only the made-up code.
    case accepted
    /// Apple said `invalid_client`; the advice says what to check.
    case rejected(String)
    case inconclusive(String)
}

/// Apple's `/auth/token` and `/auth/revoke`, authenticated with the ES256 client secret.
/// Transport failures and 5xx are retried a bounded number of times with exponential backoff; 4xx never is, nor
/// a call the `AppleCallGuard` refused. With a deadline, every attempt ends by it and no retry starts after it.
public final class AppleTokenClient: Sendable {
    public static let tokenPath = "/auth/token"
    public static let revokePath = "/auth/revoke"

    public let baseURL: String
    private let transport: any AppleHTTPTransport
    private let secrets: ClientSecretProvider
    private let verifier: IdentityTokenVerifier
    private let attempts: Int
    private let backoff: TimeInterval
    private let sleep: @Sendable (TimeInterval) -> Void
    /// The guard the transport's calls pass, if any: lets callers ask whether a call would be made now.
    public let callGuard: AppleCallGuard?

    public init(baseURL: String, transport: any AppleHTTPTransport, secrets: ClientSecretProvider,
                verifier: IdentityTokenVerifier, attempts: Int = 3, backoff: TimeInterval = 0.2,
                callGuard: AppleCallGuard? = nil,
                sleep: @escaping @Sendable (TimeInterval) -> Void = { Thread.sleep(forTimeInterval: $0) }) {
        self.callGuard = callGuard
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.transport = transport
        self.secrets = secrets
        self.verifier = verifier
        self.attempts = max(1, attempts)
        self.backoff = max(0, backoff)
        self.sleep = sleep
    }

    /// Exchanges an authorization code. `redirectURI` is required for web codes and must be nil for native ones.
    /// The returned id_token must verify (without the nonce rule) and name `expectedSubject`.
    public func exchange(code: String, clientID: String, redirectURI: String?, expectedSubject: String,
                         deadline: Date? = nil) throws(AppleTokenError) -> TokenExchange {
        var fields = try authentication(clientID)
        fields += [("code", code), ("grant_type", "authorization_code")]
        if let redirectURI { fields.append(("redirect_uri", redirectURI)) }
        let response = try post(Self.tokenPath, fields, deadline: deadline)
        guard response.status == 200 else { throw Self.failure(response) }

        guard let body = try? JSONValue.parse(response.body), case .object = body else {
            throw .invalidResponse("the token response is not a JSON object")
        }
        guard let accessToken = body["access_token"]?.stringValue, !accessToken.isEmpty else {
            throw .invalidResponse("the token response has no access_token")
        }
        guard let idToken = body["id_token"]?.stringValue, !idToken.isEmpty else {
            throw .invalidResponse("the token response has no id_token")
        }
        let identity: AppleIdentity
        do {
            identity = try verifier.verify(idToken, context: VerificationContext(checkNonce: false))
        } catch {
            throw .idTokenRejected(error)
        }
        guard identity.audience == clientID else { throw .idTokenRejected(.wrongAudience(identity.audience)) }
        guard ConstantTime.equals(identity.subject, expectedSubject) else { throw .subjectMismatch }
        return TokenExchange(accessToken: accessToken, refreshToken: body["refresh_token"]?.stringValue,
                             expiresIn: body["expires_in"]?.int64Value.map { Int($0) } ?? 0, identity: identity)
    }

    /// Revokes a refresh or access token; Apple answers 200 for known and unknown tokens alike.
    public func revoke(token: String, tokenTypeHint: String = "refresh_token", clientID: String,
                       deadline: Date? = nil) throws(AppleTokenError) {
        var fields = try authentication(clientID)
        fields += [("token", token), ("token_type_hint", tokenTypeHint)]
        let response = try post(Self.revokePath, fields, deadline: deadline)
        guard response.status == 200 else { throw Self.failure(response) }
    }

    /// Exchanges a made-up code: Apple checks the client secret first, so `invalid_grant` proves it good.
    public func checkClientSecret(clientID: String, redirectURI: String?) -> ClientSecretCheck {
        let probe = "doctor-probe-" + SecureRandom.base64URLToken(byteCount: 12)
        do {
            _ = try exchange(code: probe, clientID: clientID, redirectURI: redirectURI, expectedSubject: "")
            return .inconclusive("Apple accepted a made-up authorization code")
        } catch {
            switch error {
            case .apple(code: "invalid_grant", _): return .accepted
            case let .apple(code: "invalid_client", advice): return .rejected(advice)
            default: return .inconclusive(error.description)
            }
        }
    }

    func authentication(_ clientID: String) throws(AppleTokenError) -> [(String, String)] {
        do {
            return [("client_id", clientID), ("client_secret", try secrets.secret(for: clientID))]
        } catch {
            throw .clientSecretUnavailable(error.description)
        }
    }

    /// Whether a call to `path` (`tokenPath`, `revokePath`) would be made now rather than refused by the guard.
    public func wouldCall(_ path: String) -> Bool { callGuard?.admits(path) ?? true }

    /// Posts with retries on transport failures and 5xx; returns the first other answer. With `bearerToken`, the post
    /// carries it as `Authorization: Bearer` (the user migration endpoint).
    func post(_ path: String, _ fields: [(String, String)], deadline: Date?,
              bearerToken: String? = nil) throws(AppleTokenError) -> HTTPExchange {
        var lastFailure = ""
        var made = 0
        for attempt in 0..<attempts {
            if attempt > 0 {
                let pause = backoff * pow(2, Double(attempt - 1))
                // A retry needs time for an answer after its pause; without it, stop here.
                if let deadline, Date().addingTimeInterval(pause + 0.5) >= deadline { break }
                sleep(pause)
            }
            made += 1
            do {
                let response = if let bearerToken {
                    try transport.postForm(baseURL + path, fields: fields, bearerToken: bearerToken,
                                           deadline: deadline ?? .distantFuture)
                } else if let deadline {
                    try transport.postForm(baseURL + path, fields: fields, deadline: deadline)
                } else {
                    try transport.postForm(baseURL + path, fields: fields)
                }
                guard response.status >= 500 else { return response }
                lastFailure = "HTTP \(response.status)"
            } catch {
                if case let .notAttempted(reason) = error {
                    // The guard refused: no call was made. Before any attempt, say so; after one, stop retrying.
                    if made == 1 { throw .notAttempted(reason) }
                    made -= 1
                    break
                }
                if case let .unreachable(reason) = error { lastFailure = reason } else { lastFailure = "no answer in time" }
            }
        }
        throw .unreachable("\(lastFailure) after \(made) attempt\(made == 1 ? "" : "s")")
    }

    static func failure(_ response: HTTPExchange) -> AppleTokenError {
        if (400..<500).contains(response.status), let code = (try? JSONValue.parse(response.body))?["error"]?.stringValue {
            return .fromApple(code: loggable(code))
        }
        return .invalidResponse("HTTP \(response.status) without an OAuth error")
    }

    /// The error code comes from the network: keep it short and printable before it reaches a log.
    static func loggable(_ value: String) -> String {
        String(value.unicodeScalars.prefix(40).map { (0x21..<0x7F).contains($0.value) ? Character($0) : "?" })
    }
}
