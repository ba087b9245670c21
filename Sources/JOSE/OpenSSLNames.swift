/// Names handed to OpenSSL calls that keep the pointer rather than copy the string:
/// OSSL_PARAM keys and values, OSSL_PARAM_BLD entries (read only at `to_param` time) and
/// `EVP_PKEY_CTX_new_from_name`, which stores its key type name in the context.
///
/// A Swift `String` passed as `const char *` is a temporary that dies when the call
/// returns, so those calls get pointers to static, NUL-terminated literals instead.
enum OpenSSLNames {
    static var rsa: UnsafeMutablePointer<CChar> { cString("RSA") }
    static var ec: UnsafeMutablePointer<CChar> { cString("EC") }
    static var sha256: UnsafeMutablePointer<CChar> { cString("SHA256") }
    static var prime256v1: UnsafeMutablePointer<CChar> { cString("prime256v1") }

    // Parameter keys (OSSL_PKEY_PARAM_*, OSSL_MAC_PARAM_*, OSSL_KDF_PARAM_*).
    static var rsaModulus: UnsafeMutablePointer<CChar> { cString("n") }
    static var rsaExponent: UnsafeMutablePointer<CChar> { cString("e") }
    static var groupName: UnsafeMutablePointer<CChar> { cString("group") }
    static var publicKey: UnsafeMutablePointer<CChar> { cString("pub") }
    static var digest: UnsafeMutablePointer<CChar> { cString("digest") }
    static var key: UnsafeMutablePointer<CChar> { cString("key") }
    static var salt: UnsafeMutablePointer<CChar> { cString("salt") }
    static var info: UnsafeMutablePointer<CChar> { cString("info") }

    /// String literals live in the binary for the life of the process, NUL-terminated.
    private static func cString(_ literal: StaticString) -> UnsafeMutablePointer<CChar> {
        UnsafeMutableRawPointer(mutating: literal.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
