import JSON
/// Base64url without padding (RFC 4648 §5, as JOSE uses it, RFC 7515 §2).
///
/// Decoding is strict: only `A–Z a–z 0–9 - _`, no `=` padding, no whitespace, and the
/// unused low bits of the last character must be zero, so each byte string has exactly
/// one accepted encoding.
public enum Base64URL {
    @inlinable
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        withContiguousBytes(bytes) { input in encode(buffer: input) }
    }

    @inlinable
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        withContiguousBytes(text.utf8) { input in decode(buffer: input) }
    }

    /// Decodes base64url given as bytes (e.g. a slice of a token's UTF-8).
    @inlinable
    public static func decode(bytes: some Collection<UInt8>) -> [UInt8]? {
        withContiguousBytes(bytes) { input in decode(buffer: input) }
    }

    @usableFromInline
    static func encode(buffer input: UnsafeBufferPointer<UInt8>) -> String {
        let fullGroups = input.count / 3
        let remainder = input.count % 3
        let outputCount = fullGroups * 4 + (remainder == 0 ? 0 : remainder + 1)
        guard outputCount > 0 else { return "" }
        return String(unsafeUninitializedCapacity: outputCount) { output in
            alphabet.withUnsafeBufferPointer { symbols in
                var i = 0, o = 0
                for _ in 0..<fullGroups {
                    let chunk = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                    output[o] = symbols[Int(chunk >> 18)]
                    output[o + 1] = symbols[Int(chunk >> 12 & 0x3F)]
                    output[o + 2] = symbols[Int(chunk >> 6 & 0x3F)]
                    output[o + 3] = symbols[Int(chunk & 0x3F)]
                    i += 3; o += 4
                }
                if remainder == 1 {
                    let chunk = UInt32(input[i]) << 16
                    output[o] = symbols[Int(chunk >> 18)]
                    output[o + 1] = symbols[Int(chunk >> 12 & 0x3F)]
                } else if remainder == 2 {
                    let chunk = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                    output[o] = symbols[Int(chunk >> 18)]
                    output[o + 1] = symbols[Int(chunk >> 12 & 0x3F)]
                    output[o + 2] = symbols[Int(chunk >> 6 & 0x3F)]
                }
            }
            return outputCount
        }
    }

    @usableFromInline
    static func decode(buffer input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let fullGroups = input.count / 4
        let remainder = input.count % 4
        guard remainder != 1 else { return nil }
        guard let source = input.baseAddress else { return [] }
        let outputCount = fullGroups * 3 + (remainder == 0 ? 0 : remainder - 1)
        let tables = decodingTables
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { output, initialized in
            guard let target = output.baseAddress else {
                initialized = 0
                return
            }
            // Each table holds a character's 6 bits already shifted to its place in a
            // 24-bit group, or `invalidMark`; OR-ing the four lookups gives the group and
            // leaves the mark set if any character was invalid, with no branch per byte.
            var marks: UInt32 = 0
            var i = 0, o = 0
            tables.withUnsafeBufferPointer { table in
                for _ in 0..<fullGroups {
                    let group = table[Int(source[i])] | table[256 + Int(source[i + 1])]
                        | table[512 + Int(source[i + 2])] | table[768 + Int(source[i + 3])]
                    marks |= group
                    target[o] = UInt8(truncatingIfNeeded: group >> 16)
                    target[o + 1] = UInt8(truncatingIfNeeded: group >> 8)
                    target[o + 2] = UInt8(truncatingIfNeeded: group)
                    i += 4; o += 3
                }
                if remainder >= 2 {
                    var group = table[Int(source[i])] | table[256 + Int(source[i + 1])]
                    if remainder == 3 { group |= table[512 + Int(source[i + 2])] }
                    // The bits below the last whole byte must be zero (one encoding per byte string).
                    let unusedBits: UInt32 = remainder == 2 ? 0xFFFF : 0xFF
                    if group & unusedBits != 0 { marks |= invalidMark }
                    marks |= group
                    target[o] = UInt8(truncatingIfNeeded: group >> 16)
                    if remainder == 3 { target[o + 1] = UInt8(truncatingIfNeeded: group >> 8) }
                }
            }
            valid = marks & invalidMark == 0
            initialized = outputCount
        }
        return valid ? output : nil
    }

    private static let invalidMark: UInt32 = 1 << 24

    /// Four 256-entry tables, one per position in a 4-character group.
    private static let decodingTables: [UInt32] = {
        var tables = [UInt32](repeating: invalidMark, count: 4 * 256)
        for (value, symbol) in alphabet.enumerated() {
            for position in 0..<4 {
                tables[position * 256 + Int(symbol)] = UInt32(value) << (18 - 6 * position)
            }
        }
        return tables
    }()

    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

}
