import JOSE
import Testing

@Suite("Base64URL")
struct Base64URLTests {
    @Test("RFC 4648 test vectors, unpadded and URL-safe")
    func knownVectors() {
        let vectors: [(String, String)] = [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"),
            ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test("uses - and _ instead of + and /")
    func urlSafeAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    @Test("round-trips every length and byte value", arguments: 0..<70)
    func roundTrip(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ length) }
        #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        let random = SecureRandom.bytes(length)
        #expect(Base64URL.decode(Base64URL.encode(random)) == random)
    }

    @Test("decodes substrings and byte slices")
    func decodesSlices() {
        let token = "aaa.Zm9vYmFy.bbb"
        let middle = token.split(separator: ".")[1]
        #expect(Base64URL.decode(middle) == Array("foobar".utf8))
        #expect(Base64URL.decode(bytes: Array("Zm9v".utf8)[...]) == Array("foo".utf8))
    }

    @Test("rejects padding, standard alphabet, whitespace and bad lengths",
          arguments: ["Zg==", "Zm8=", "Zm9v+w", "Zm9v/w", "Zm9 v", "Zm9v\n", "Z", "Zm9vY", "é", "Zm9v.", "\0\0"])
    func rejectsInvalid(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test("rejects non-zero unused bits, so each byte string has one encoding")
    func rejectsNonCanonical() {
        #expect(Base64URL.decode("Zg") == [0x66])
        #expect(Base64URL.decode("Zh") == nil)
        #expect(Base64URL.decode("Zm8") == Array("fo".utf8))
        #expect(Base64URL.decode("Zm9") == nil)
    }
}
