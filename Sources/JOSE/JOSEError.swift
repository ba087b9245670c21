/// Everything that can go wrong in this module, in words a log reader understands.
///
/// Descriptions never contain the token, key material or other secret input.
public enum JOSEError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The compact JWS is not shaped like one (segments, base64url, header JSON).
    case malformedToken(String)
    /// The input is longer than the caller's limit.
    case tooLarge(limit: Int)
    /// The header names an algorithm outside the caller's allow-list.
    case algorithmNotAllowed(String)
    /// A key (JWK, PEM, raw parameters) is unusable or of the wrong kind.
    case invalidKey(String)
    /// The text could not be decoded as a PEM key at all (not PEM, damaged, encrypted); the reason is OpenSSL's.
    case unreadablePEM(String)
    /// The signature does not verify.
    case badSignature
    /// AES-GCM authentication failed: the ciphertext, nonce, tag or associated data changed.
    case decryptionFailed
    /// OpenSSL reported a failure; the reason comes from its error queue.
    case crypto(String)

    public var description: String {
        switch self {
        case .malformedToken(let reason): "malformed token: \(reason)"
        case .tooLarge(let limit): "input is larger than the limit of \(limit) bytes"
        case .algorithmNotAllowed(let name): "signing algorithm \"\(name)\" is not allowed"
        case .invalidKey(let reason): "invalid key: \(reason)"
        case .unreadablePEM(let reason): reason.isEmpty ? "invalid key: not a readable PEM key" : "invalid key: not a readable PEM key (\(reason))"
        case .badSignature: "signature does not verify"
        case .decryptionFailed: "decryption failed: data was altered or the key is wrong"
        case .crypto(let reason): "cryptographic operation failed: \(reason)"
        }
    }
}
