import Foundation
import JOSE
import JSON
import Testing

@Suite("RSA (RS256)")
struct RSATests {
    @Suite("signing and verifying")
    struct SignVerify {
        let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0".utf8)

        @Test("a signature verifies with the matching public key")
        func roundTrip() throws {
            let signature = try TestKeys.rsa.signRS256(message)
            #expect(signature.count == 256)
            #expect(TestKeys.rsa.publicKey.verifyRS256(signature: signature, message: message))
            #expect(TestKeys.rsa.publicKey.verifyRS256(signature: signature[...], message: message[...]))
        }

        @Test("a flipped bit in the signature fails", arguments: [0, 7, 1000, 2047])
        func flippedSignature(bit: Int) throws {
            let signature = try TestKeys.rsa.signRS256(message)
            #expect(!TestKeys.rsa.publicKey.verifyRS256(signature: signature.flippingBit(bit), message: message))
        }

        @Test("a flipped bit in the message fails", arguments: [0, 9, 100])
        func flippedMessage(bit: Int) throws {
            let signature = try TestKeys.rsa.signRS256(message)
            #expect(!TestKeys.rsa.publicKey.verifyRS256(signature: signature, message: message.flippingBit(bit)))
        }

        @Test("another key's signature fails")
        func otherKey() throws {
            let signature = try TestKeys.otherRSA.signRS256(message)
            #expect(!TestKeys.rsa.publicKey.verifyRS256(signature: signature, message: message))
        }

        @Test("wrong-length and empty signatures fail without crashing")
        func wrongLength() throws {
            let signature = try TestKeys.rsa.signRS256(message)
            #expect(!TestKeys.rsa.publicKey.verifyRS256(signature: Array(signature.dropLast()), message: message))
            #expect(!TestKeys.rsa.publicKey.verifyRS256(signature: [0] + signature, message: message))
            #expect(!TestKeys.rsa.publicKey.verifyRS256(signature: [UInt8](), message: message))
            #expect(!TestKeys.rsa.publicKey.verifyRS256(signature: [UInt8](repeating: 0xFF, count: 256), message: message))
        }

        @Test("a failed verify leaves nothing on OpenSSL's error queue for the next caller")
        func errorQueueClean() throws {
            let signature = try TestKeys.rsa.signRS256(message)
            for _ in 0..<3 { #expect(!TestKeys.rsa.publicKey.verifyRS256(signature: signature.flippingBit(3), message: message)) }
            #expect(TestKeys.rsa.publicKey.verifyRS256(signature: signature, message: message))
            #expect(throws: JOSEError.self) { try RSAPrivateKey(pem: "garbage") }
            #expect(TestKeys.rsa.publicKey.verifyRS256(signature: signature, message: message))
        }

        @Test("one key verifies correctly from many threads at once")
        func concurrent() async throws {
            let key = TestKeys.rsa.publicKey
            let good = try TestKeys.rsa.signRS256(message)
            let bad = good.flippingBit(77)
            let message = message
            let results = await withTaskGroup(of: Bool.self, returning: [Bool].self) { group in
                for index in 0..<64 {
                    group.addTask {
                        (0..<20).allSatisfy { _ in
                            index.isMultiple(of: 2)
                                ? key.verifyRS256(signature: good, message: message)
                                : !key.verifyRS256(signature: bad, message: message)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 64 && results.allSatisfy { $0 })
        }
    }

    @Suite("JWK and PEM")
    struct KeyFormats {
        @Test("a generated key's public JWK imports and verifies its signatures")
        func jwkRoundTrip() throws {
            let jwk = TestKeys.rsa.publicJWK(keyID: "2024-key")
            #expect(jwk["kty"] == "RSA")
            #expect(jwk["kid"] == "2024-key")
            #expect(jwk["use"] == "sig")
            #expect(jwk["alg"] == "RS256")
            #expect(jwk["e"] == "AQAB")
            #expect(Base64URL.decode(jwk["n"]?.stringValue ?? "")?.count == 256)
            // Through JSON text, as a JWKS fetch would deliver it.
            let imported = try RSAPublicKey(jwk: JSONValue.parse(jwk.serialized()))
            #expect(imported.modulusBits == 2048)
            let message = Array("hello".utf8)
            #expect(imported.verifyRS256(signature: try TestKeys.rsa.signRS256(message), message: message))
        }

        @Test("JWKs of the wrong kind are refused", arguments: [
            #"{"kty":"EC","n":"AQAB","e":"AQAB"}"#,
            #"{"n":"AQAB","e":"AQAB"}"#,
            #"{"kty":"RSA","e":"AQAB"}"#,
            #"{"kty":"RSA","n":"AQAB"}"#,
            #"{"kty":"RSA","n":"A+B","e":"AQAB"}"#,
            #"["RSA"]"#,
        ])
        func badJWK(json: String) throws {
            let jwk = try JSONValue.parse(json)
            #expect(throws: JOSEError.self) { try RSAPublicKey(jwk: jwk) }
        }

        @Test("JWKs for another use or algorithm are refused")
        func wrongUseOrAlg() throws {
            var members = TestKeys.rsa.publicJWK(keyID: "k").objectValue!
            members["use"] = "enc"
            #expect(throws: JOSEError.invalidKey(#"JWK use is not "sig""#)) { try RSAPublicKey(jwk: .object(members)) }
            members["use"] = nil
            members["alg"] = "RS512"
            #expect(throws: JOSEError.invalidKey(#"JWK alg is not "RS256""#)) { try RSAPublicKey(jwk: .object(members)) }
            members["alg"] = nil
            _ = try RSAPublicKey(jwk: .object(members))
        }

        @Test("moduli under 2048 bits are refused")
        func smallModulus() throws {
            var short = Array(TestKeys.rsa.publicKey.modulus.dropFirst())
            short[0] |= 0x80
            #expect(throws: JOSEError.invalidKey("RSA modulus has 2040 bits; at least 2048 are required")) {
                try RSAPublicKey(modulus: short, exponent: [1, 0, 1])
            }
            #expect(throws: JOSEError.self) { try RSAPublicKey(modulus: [], exponent: [1, 0, 1]) }
        }

        @Test("bad exponents are refused", arguments: [[], [1], [2], [0, 0], [1, 0, 0]] as [[UInt8]])
        func badExponent(exponent: [UInt8]) {
            #expect(throws: JOSEError.self) { try RSAPublicKey(modulus: TestKeys.rsa.publicKey.modulus, exponent: exponent) }
        }

        @Test("leading zero bytes in n are ignored")
        func leadingZeros() throws {
            let key = try RSAPublicKey(modulus: [0, 0] + TestKeys.rsa.publicKey.modulus, exponent: [0, 1, 0, 1])
            #expect(key.modulusBits == 2048)
        }

        @Test("private key PEM is PKCS#8 and round-trips")
        func privatePEM() throws {
            let pem = try TestKeys.rsa.pemString()
            #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            let loaded = try RSAPrivateKey(pem: pem)
            #expect(loaded.publicKey.modulus == TestKeys.rsa.publicKey.modulus)
            let message = Array("pem".utf8)
            #expect(TestKeys.rsa.publicKey.verifyRS256(signature: try loaded.signRS256(message), message: message))
        }

        @Test("public key PEM round-trips")
        func publicPEM() throws {
            let pem = try TestKeys.rsa.publicKey.pemString()
            #expect(pem.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
            #expect(try RSAPublicKey(pem: pem).modulus == TestKeys.rsa.publicKey.modulus)
        }

        @Test("an EC key is refused as an RSA key")
        func ecAsRSA() throws {
            let pem = try TestKeys.ec.pemString()
            #expect(throws: JOSEError.invalidKey("PEM key is not an RSA private key")) { try RSAPrivateKey(pem: pem) }
        }

        @Test("garbage PEM is refused with a clear error")
        func garbage() {
            #expect { try RSAPrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n") } throws: { error in
                guard case JOSEError.unreadablePEM = error else { return false }
                return (error as? JOSEError)?.description.hasPrefix("invalid key: not a readable PEM key") == true
            }
        }

        @Test("key sizes outside 2048...8192 are refused for generation")
        func generateSizes() {
            #expect(throws: JOSEError.self) { try RSAPrivateKey.generate(bits: 1024) }
        }
    }

    @Suite("known answers")
    struct KnownAnswers {
        /// RFC 7515 Appendix A.2: the RS256 example key and its published JWS.
        static let rfc7515Modulus = """
            ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWv\
            G6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9\
            kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ
            """
        static let rfc7515Token = """
            eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.\
            cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4\
            BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqv\
            hJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw
            """

        @Test("RFC 7515 A.2 RS256 example verifies")
        func rfc7515() throws {
            let key = try RSAPublicKey(jwk: ["kty": "RSA", "n": .string(Self.rfc7515Modulus), "e": "AQAB"])
            let jws = try CompactJWS(parsing: Self.rfc7515Token)
            #expect(try jws.requireAlgorithm(in: [.RS256]) == .RS256)
            #expect(key.verifyRS256(signature: jws.signature, message: jws.signingInput))
            let claims = try jws.claims()
            #expect(claims["iss"] == "joe")
            #expect(claims["exp"]?.int64Value == 1_300_819_380)
            #expect(claims["http://example.com/is_root"] == true)
            // The same signature over a re-serialized payload must not verify.
            let reencoded = "eyJhbGciOiJSUzI1NiJ9." + Base64URL.encode(JSONValue.object(claims).serializedBytes())
            #expect(!key.verifyRS256(signature: jws.signature, message: Array(reencoded.utf8)))
        }

        @Test("openssl verifies our RS256 signatures")
        func opensslVerifies() throws {
            try #require(OpenSSLCommand.isAvailable)
            let message = Array("signed by JOSE".utf8)
            let signature = try TestKeys.rsa.signRS256(message)
            try OpenSSLCommand.withTemporaryDirectory { directory in
                let files = (key: directory.appendingPathComponent("pub.pem"), message: directory.appendingPathComponent("msg"),
                             signature: directory.appendingPathComponent("sig"))
                try TestKeys.rsa.publicKey.pemString().write(to: files.key, atomically: true, encoding: .utf8)
                try Data(message).write(to: files.message)
                try Data(signature).write(to: files.signature)
                let result = try OpenSSLCommand.run(["dgst", "-sha256", "-verify", files.key.path, "-signature", files.signature.path, files.message.path])
                #expect(result.status == 0, "\(result.output)")
            }
        }
    }
}
