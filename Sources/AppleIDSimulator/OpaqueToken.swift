import JOSE

/// Random opaque values shaped like Apple's codes and tokens (`c…`, `r…`, `a…`):
/// a kind letter, 32 hex digits, a version and a random tail.
enum OpaqueToken {
    enum Kind: String {
        case authorizationCode = "c"
        case refreshToken = "r"
        case accessToken = "a"
    }

    static func make(_ kind: Kind) -> String {
        kind.rawValue + Hex.encode(SecureRandom.bytes(16)) + ".0.sim." + SecureRandom.base64URLToken(byteCount: 16)
    }
}
