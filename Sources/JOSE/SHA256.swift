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
        var stream = SHA256Stream()
        stream.update(input)
        stream.finalize(into: output)
    }
}

/// SHA-256 fed in pieces, a value that can be copied part-way: the state after a prefix, continued with different
/// suffixes. A sign-in hashes the identity token's `header.payload` for its RS256 check and the whole token for the
/// replay record; continuing the first hash with the rest hashes the kilobyte once instead of twice.
public struct SHA256Stream: Sendable {
    private var context = SHA256_CTX()

    public init() {
        SHA256_Init(&context)
    }

    public mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        SHA256_Update(&context, base, bytes.count)
    }

    public mutating func update(_ bytes: some Collection<UInt8>) {
        withContiguousBytes(bytes) { update($0) }
    }

    /// The digest of everything fed so far; the stream itself is left as it was, to be continued.
    public func finalized() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: SHA256.digestLength) { output, initialized in
            finalize(into: output.baseAddress!)
            initialized = SHA256.digestLength
        }
    }

    /// The digest as 64 lowercase hex characters (as `SHA256.hexDigest` gives).
    public func finalizedHex() -> String { Hex.encode(finalized()) }

    func finalize(into output: UnsafeMutablePointer<UInt8>) {
        var copy = context
        SHA256_Final(output, &copy)
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
