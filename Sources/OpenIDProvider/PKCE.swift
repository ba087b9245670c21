import JOSE

/// Proof Key for Code Exchange (RFC 7636), S256 only: `plain` would hand the verifier to anyone who sees the
/// authorization request.
public enum PKCE {
    public static let method = "S256"

    /// A challenge is the base64url SHA-256 of a verifier: exactly 43 characters.
    public static func isWellFormedChallenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43 && Base64URL.decode(challenge)?.count == 32
    }

    /// 43 to 128 characters of [A-Za-z0-9-._~] (RFC 7636 §4.1).
    public static func isWellFormedVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count)
            && verifier.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            }
    }

    public static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(Array(verifier.utf8)))
    }

    public static func verify(_ verifier: String, against challenge: String) -> Bool {
        isWellFormedVerifier(verifier) && ConstantTime.equals(Self.challenge(for: verifier), challenge)
    }
}
