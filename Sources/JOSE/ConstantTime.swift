internal import COpenSSL

/// Comparisons whose duration does not depend on where the inputs differ.
public enum ConstantTime {
    /// True when both have the same length and bytes. Only the length may leak through timing.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0 }
        }
    }

    /// Compares the UTF-8 of two strings (e.g. a submitted `state` with the stored one).
    public static func equals(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        equals(Array(a.utf8), Array(b.utf8))
    }
}
