import JOSE
import JSON

/// The signature half of every check of something Apple signed (identity tokens, server notifications):
/// parse within a size limit, refuse any algorithm but RS256 by name before any crypto, find the `kid` among
/// Apple's keys, verify the signature, decode the claims once. The claim rules are `VerificationPolicy`'s.
enum AppleSignedClaims {
    static func verify(_ token: String, keys: any AppleKeySet, maxLength: Int) throws(TokenRejection) -> AppleClaims {
        var signingInputHash = SHA256Stream()
        return try verify(token, keys: keys, maxLength: maxLength, signingInputHash: &signingInputHash, onlyWithoutFetching: nil)!.claims
    }

    /// The claims and the SHA-256 of the whole token (lowercase hex, as `SHA256.hexDigest` of its UTF-8), for a
    /// replay record: the signature check's hash of `header.payload` continued with the rest of the token, so the
    /// kilobyte is hashed once instead of twice.
    /// With `onlyWithoutFetching`, nil (before any signature work) when the token's key would be fetched first.
    static func verifyWithDigest(_ token: String, keys: any AppleKeySet, maxLength: Int,
                                 onlyWithoutFetching fetching: (any AppleKeyFetching)? = nil) throws(TokenRejection) -> (claims: AppleClaims, tokenDigest: String)? {
        var tokenHash = SHA256Stream()
        guard let verified = try verify(token, keys: keys, maxLength: maxLength, signingInputHash: &tokenHash,
                                        onlyWithoutFetching: fetching) else { return nil }
        var token = token
        token.withUTF8 { tokenHash.update(UnsafeBufferPointer(rebasing: $0[verified.signingInputLength...])) }
        return (verified.claims, tokenHash.finalizedHex())
    }

    /// `signingInputHash`, a fresh stream, holds the SHA-256 state after `header.payload` when this returns.
    private static func verify(
        _ token: String, keys: any AppleKeySet, maxLength: Int, signingInputHash: inout SHA256Stream,
        onlyWithoutFetching fetching: (any AppleKeyFetching)?
    ) throws(TokenRejection) -> (claims: AppleClaims, signingInputLength: Int)? {
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
        let key: RSAPublicKey
        if let fetching {
            guard let held = fetching.keyWithoutFetching(kid) else { return nil }
            key = try held.get()
        } else {
            key = try keys.key(for: kid)
        }
        guard key.verifyRS256(signature: jws.signature, message: jws.signingInput, hashingInto: &signingInputHash) else {
            throw .badSignature
        }
        guard let members = try? JSONValue.parseObjectMembers(jws.payload) else {
            throw .malformed("the claims are not a JSON object")
        }
        return (try AppleClaims(members: members), jws.signingInput.count)
    }

    /// Whether `verify` would find the token's key without fetching; true too when it refuses the token first.
    static func answersWithoutFetching(_ token: String, keys: (any AppleKeyFetching)?, maxLength: Int) -> Bool {
        guard let keys else { return true }
        // The header alone decides it: a kilobyte of payload and signature need not be decoded twice.
        guard let header = CompactJWS.header(ofToken: token, maxLength: maxLength), header["alg"]?.stringValue == "RS256",
              let kid = header["kid"]?.stringValue, !kid.isEmpty else { return true }
        return keys.answersWithoutFetching(kid)
    }
}
