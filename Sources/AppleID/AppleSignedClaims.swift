import JOSE
import JSON

/// The signature half of every check of something Apple signed (identity tokens, server notifications):
/// parse within a size limit, refuse any algorithm but RS256 by name before any crypto, find the `kid` among
/// Apple's keys, verify the signature, decode the claims once. The claim rules are `VerificationPolicy`'s.
enum AppleSignedClaims {
    static func verify(_ token: String, keys: any AppleKeySet, maxLength: Int) throws(TokenRejection) -> AppleClaims {
        let jws: CompactJWS
        do {
            jws = try CompactJWS(parsing: token, maxLength: maxLength)
        } catch {
            throw .malformed(error.description)
        }
        do {
            try jws.requireAlgorithm(in: [.RS256])
        } catch {
            throw .algorithmNotAllowed((jws.algorithm ?? "none").loggable)
        }
        guard let kid = jws.keyID, !kid.isEmpty else { throw .missingKeyID }
        let key = try keys.key(for: kid)
        guard key.verifyRS256(signature: jws.signature, message: jws.signingInput) else { throw .badSignature }
        guard let claims = try? JSONValue.parse(jws.payload), case let .object(members) = claims else {
            throw .malformed("the claims are not a JSON object")
        }
        return try AppleClaims(members)
    }

    /// Whether `verify` would find the token's key without fetching; true too when it refuses the token first.
    static func answersWithoutFetching(_ token: String, keys: any AppleKeySet, maxLength: Int) -> Bool {
        guard let jws = try? CompactJWS(parsing: token, maxLength: maxLength), jws.algorithm == "RS256",
              let kid = jws.keyID, !kid.isEmpty else { return true }
        return keys.answersWithoutFetching(kid)
    }
}
