import Foundation
import JOSE
import JSON

extension AppleIDStandIn {
    /// A server-to-server notification body as Apple posts it: `{"payload": "<JWS>"}`, RS256-signed with the
    /// current key, `events` a JSON string. Without `lifetime` there is no `exp`, as in Apple's example.
    public func mintNotification(type: String, subject: String, audience: String, email: String? = nil,
                                 isPrivateEmail: Bool? = nil, jti: String? = nil, issuedAt: Date? = nil,
                                 lifetime: TimeInterval? = nil) throws -> String {
        let issued = Int64((issuedAt ?? clock()).timeIntervalSince1970.rounded(.down))
        var event: [String: JSONValue] = ["type": .string(type), "sub": .string(subject), "event_time": .integer(issued)]
        if let email { event["email"] = .string(email) }
        if let isPrivateEmail { event["is_private_email"] = .string(isPrivateEmail ? "true" : "false") }
        var claims: [String: JSONValue] = [
            "iss": .string(issuer),
            "aud": .string(audience),
            "iat": .integer(issued),
            "jti": .string(jti ?? Hex.encode(SecureRandom.bytes(16))),
            "events": .string(JSONValue.object(event).serialized()),
        ]
        if let lifetime { claims["exp"] = .integer(issued + Int64(lifetime.rounded())) }
        return try signNotification(claims: claims)
    }

    /// Signs arbitrary notification claims (for tests of odd shapes) and wraps them in the posted body.
    public func signNotification(claims: [String: JSONValue], headerOverrides: [String: JSONValue] = [:]) throws -> String {
        let key = state.withLock { $0.keys.current }
        var header: [String: JSONValue] = ["alg": "RS256", "kid": .string(key.keyID)]
        for (name, value) in headerOverrides { header[name] = value == .null ? nil : value }
        let signingInput = Base64URL.encode(JSONValue.object(header).serializedBytes()) + "."
            + Base64URL.encode(JSONValue.object(claims).serializedBytes())
        let jws = signingInput + "." + Base64URL.encode(try key.privateKey.signRS256(Array(signingInput.utf8)))
        return JSONValue.object(["payload": .string(jws)]).serialized()
    }
}
