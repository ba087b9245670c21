import JOSE
import JSON

/// The signature half of every check of something Apple signed (identity tokens, server notifications):
/// parse within a size limit, refuse any algorithm but RS256 by name before any crypto, find the `kid` among
/// Apple's keys, verify the signature. Returns the claims object; the claim rules are the caller's.
enum AppleSignedClaims {
    static func verify(_ token: String, keys: JWKSCache, maxLength: Int) throws(TokenRejection) -> JSONValue {
        let jws: CompactJWS
        do {
            jws = try CompactJWS(parsing: token, maxLength: maxLength)
        } catch {
            throw .malformed(error.description)
        }
        do {
            try jws.requireAlgorithm(in: [.RS256])
        } catch {
            throw .algorithmNotAllowed(jws.algorithm ?? "none")
        }
        guard let kid = jws.keyID, !kid.isEmpty else { throw .missingKeyID }
        let key = try keys.key(for: kid)
        guard key.verifyRS256(signature: jws.signature, message: jws.signingInput) else { throw .badSignature }
        guard let claims = try? JSONValue.parse(jws.payload), case .object = claims else {
            throw .malformed("the claims are not a JSON object")
        }
        return claims
    }
}
