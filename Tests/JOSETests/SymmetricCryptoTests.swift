import JOSE
import Testing

@Suite("Hashes, MACs, AEAD, KDF and randomness")
struct SymmetricCryptoTests {
    @Test("SHA-256 of \"abc\" (FIPS 180-2)")
    func sha256() {
        #expect(SHA256.hexDigest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hash(Array("abc".utf8)) == Hex.decode("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(SHA256.hexDigest([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("SHA-256 fed in pieces, and continued from a copy, equals the hash of the whole", arguments: [0, 1, 55, 56, 64, 1000])
    func sha256Stream(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let suffix = Array(".signature".utf8)
        var stream = SHA256Stream()
        stream.update(bytes.prefix(length / 3))
        stream.update(bytes.dropFirst(length / 3))
        let continued = { var copy = stream; copy.update(suffix); return copy.finalizedHex() }()
        #expect(stream.finalized() == SHA256.hash(bytes))
        #expect(continued == SHA256.hexDigest(bytes + suffix))
        #expect(stream.finalized() == SHA256.hash(bytes), "finalizing leaves the stream as it was")
    }

    @Test("HMAC-SHA256, RFC 4231 test case 2")
    func hmacRFC4231() {
        let tag = HMACSHA256.authenticate(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Hex.encode(tag) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(HMACSHA256.isValid(tag: tag, key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
        #expect(!HMACSHA256.isValid(tag: tag.flippingBit(0), key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
    }

    @Test("HMAC-SHA256 accepts an empty key and message")
    func hmacEmpty() {
        #expect(Hex.encode(HMACSHA256.authenticate(key: [UInt8](), message: [UInt8]()))
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test("HKDF-SHA256, RFC 5869 test case 1")
    func hkdf() throws {
        let okm = try HKDFSHA256.derive(
            key: [UInt8](repeating: 0x0B, count: 22), salt: Hex.decode("000102030405060708090a0b0c")!,
            info: Hex.decode("f0f1f2f3f4f5f6f7f8f9")!, length: 42)
        #expect(Hex.encode(okm) == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    @Test("HKDF-SHA256, RFC 5869 test case 3 (no salt, no info)")
    func hkdfNoSalt() throws {
        let okm = try HKDFSHA256.derive(key: [UInt8](repeating: 0x0B, count: 22), length: 42)
        #expect(Hex.encode(okm) == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    @Test("HKDF refuses empty keys and impossible lengths")
    func hkdfLimits() {
        #expect(throws: JOSEError.self) { try HKDFSHA256.derive(key: [UInt8](), length: 32) }
        #expect(throws: JOSEError.self) { try HKDFSHA256.derive(key: [1], length: 0) }
        #expect(throws: JOSEError.self) { try HKDFSHA256.derive(key: [1], length: 255 * 32 + 1) }
    }

    @Suite("AES-256-GCM")
    struct AESGCMTests {
        let key = SecureRandom.bytes(32)

        @Test("round trip, with and without associated data and plaintext")
        func roundTrip() throws {
            for plaintext in [[UInt8](), Array("apple refresh token".utf8), SecureRandom.bytes(1000)] {
                let sealed = try AESGCM.seal(plaintext, key: key, associatedData: Array("user:42".utf8))
                #expect(sealed.count == 12 + plaintext.count + 16)
                #expect(try AESGCM.open(sealed, key: key, associatedData: Array("user:42".utf8)) == plaintext)
                let plain = try AESGCM.seal(plaintext, key: key)
                #expect(try AESGCM.open(plain, key: key) == plaintext)
            }
        }

        @Test("fresh nonces: sealing twice gives different boxes")
        func freshNonces() throws {
            let a = try AESGCM.seal(Array("same".utf8), key: key)
            let b = try AESGCM.seal(Array("same".utf8), key: key)
            #expect(a != b)
            #expect(a.prefix(12) != b.prefix(12))
        }

        @Test("any changed bit is detected")
        func tamper() throws {
            let sealed = try AESGCM.seal(Array("secret value".utf8), key: key, associatedData: Array("ad".utf8))
            for bit in [0, 95, 96, 150, sealed.count * 8 - 1] {  // nonce, ciphertext, tag
                #expect(throws: JOSEError.decryptionFailed) {
                    try AESGCM.open(sealed.flippingBit(bit), key: key, associatedData: Array("ad".utf8))
                }
            }
            #expect(throws: JOSEError.decryptionFailed) { try AESGCM.open(sealed, key: key, associatedData: Array("AD".utf8)) }
            #expect(throws: JOSEError.decryptionFailed) { try AESGCM.open(sealed, key: key) }
            #expect(throws: JOSEError.decryptionFailed) { try AESGCM.open(sealed, key: SecureRandom.bytes(32), associatedData: Array("ad".utf8)) }
            #expect(throws: JOSEError.decryptionFailed) { try AESGCM.open(Array(sealed.dropLast()), key: key, associatedData: Array("ad".utf8)) }
            #expect(throws: JOSEError.decryptionFailed) { try AESGCM.open(Array(sealed.prefix(27)), key: key) }
        }

        @Test("under the caller's IV: the box without it, opened with the same IV only")
        func callersIV() throws {
            let iv = SecureRandom.bytes(12)
            let sealed = try AESGCM.seal(Array("login state".utf8), key: key, iv: iv, associatedData: Array("ad".utf8))
            #expect(sealed.count == 11 + 16)
            #expect(try AESGCM.open(sealed, key: key, iv: iv, associatedData: Array("ad".utf8)) == Array("login state".utf8))
            // The same box as `seal` makes with that IV in front.
            #expect(try AESGCM.open(iv + sealed, key: key, associatedData: Array("ad".utf8)) == Array("login state".utf8))
            #expect(throws: JOSEError.decryptionFailed) {
                try AESGCM.open(sealed, key: key, iv: iv.flippingBit(0), associatedData: Array("ad".utf8))
            }
            #expect(throws: JOSEError.decryptionFailed) { try AESGCM.open(sealed, key: key, iv: iv.prefix(11)) }
            #expect(throws: JOSEError.self) { try AESGCM.seal([1], key: key, iv: iv.prefix(11)) }
        }

        @Test("keys must be 32 bytes")
        func keyLength() {
            #expect(throws: JOSEError.invalidKey("AES-256-GCM needs a 32-byte key, got 16 bytes")) {
                try AESGCM.seal([1], key: [UInt8](repeating: 0, count: 16))
            }
            #expect(throws: JOSEError.self) { try AESGCM.open([UInt8](repeating: 0, count: 40), key: []) }
        }
    }

    @Test("constant-time equality")
    func constantTime() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equals([UInt8](), []))
        #expect(ConstantTime.equals("state-abc", "state-abc"))
        #expect(!ConstantTime.equals("state-abc", "state-abd"))
        #expect(!ConstantTime.equals("state", "state-abc"))
        #expect(ConstantTime.equals("", ""))
    }

    @Test("secure random bytes: right length, not repeating")
    func random() {
        #expect(SecureRandom.bytes(0).isEmpty)
        #expect(SecureRandom.bytes(32).count == 32)
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
        let token = SecureRandom.base64URLToken()
        #expect(token.utf8.count == 43)
        #expect(Base64URL.decode(token)?.count == 32)
    }

    @Test("hex encoding")
    func hex() {
        #expect(Hex.encode([0x00, 0xAB, 0xFF]) == "00abff")
        #expect(Hex.encode([UInt8]()) == "")
        let every = (0...255).map { UInt8($0) }
        #expect(Hex.encode(every).hasPrefix("000102") && Hex.encode(every).hasSuffix("fdfeff"))
        #expect(Hex.decode(Hex.encode(every)) == every)
        #expect(Hex.encode(every[250...]) == "fafbfcfdfeff")  // a slice, not an array
        #expect(Hex.decode("00ABff") == [0x00, 0xAB, 0xFF])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }

    @Test("error descriptions are plain words")
    func descriptions() {
        #expect(JOSEError.badSignature.description == "signature does not verify")
        #expect(JOSEError.algorithmNotAllowed("none").description == #"signing algorithm "none" is not allowed"#)
        #expect(JOSEError.tooLarge(limit: 10).description == "input is larger than the limit of 10 bytes")
    }
}
