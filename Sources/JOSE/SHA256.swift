import JSON
internal import COpenSSL

public enum SHA256 {
    public static let digestLength = 32

    @inlinable
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        withContiguousBytes(bytes) { input in
            [UInt8](unsafeUninitializedCapacity: digestLength) { output, initialized in
                digest(input, into: output.baseAddress!)
                initialized = digestLength
            }
        }
    }

    /// The hash as 64 lowercase hex characters. Inlinable, as `hash` is, so that a caller in another module gets both
    /// specialized for its collection: a sign-in hashes five values, and the generic path looked up type metadata
    /// at run time for each.
    @inlinable
    public static func hexDigest(_ bytes: some Collection<UInt8>) -> String {
        Hex.encode(hash(bytes))
    }

    /// The hash of a string's UTF-8, as lowercase hex (e.g. a hashed nonce).
    @inlinable
    public static func hexDigest(_ text: some StringProtocol) -> String {
        hexDigest(text.utf8)
    }

    /// Hashes into a caller-provided 32-byte buffer; the allocation-free form for hot paths.
    @usableFromInline
    static func digest(_ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>) {
        var length: UInt32 = 0
        guard EVP_Digest(input.nonNullBase, input.count, output, &length, FetchedAlgorithms.sha256, nil) == 1,
              length == UInt32(digestLength)
        else {
            fatalError("SHA-256 failed: \(OpenSSLErrorQueue.drain())")
        }
    }
}

/// Lowercase hexadecimal.
public enum Hex {
    /// Written straight into the string's storage, with no array of digits or of output built first. Inlinable so
    /// that callers in other modules (and `SHA256.hexDigest` inlined into them) iterate their concrete collection
    /// instead of going through its protocol witnesses byte by byte.
    @inlinable
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            var written = 0
            for byte in bytes {
                output[written] = digit(byte >> 4)
                output[written + 1] = digit(byte & 0x0F)
                written += 2
            }
            return written
        }
    }

    @usableFromInline
    static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Decodes hex of either case; nil for odd length or any non-hex character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            output.append(high << 4 | low)
            index += 2
        }
        return output
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
