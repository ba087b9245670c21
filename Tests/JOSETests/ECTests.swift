import Foundation
import JOSE
import Testing

@Suite("EC P-256 (ES256)")
struct ECTests {
    @Suite("signing and verifying")
    struct SignVerify {
        let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJURUFNIn0".utf8)

        @Test("signatures are raw r‖s, 64 bytes, and verify")
        func roundTrip() throws {
            for _ in 0..<20 {  // r or s with leading zero bytes must still come out as 32 bytes each
                let signature = try TestKeys.ec.signES256(message)
                #expect(signature.count == 64)
                #expect(TestKeys.ec.publicKey.verifyES256(signature: signature, message: message))
            }
        }

        @Test("tampering, wrong length or another key fails")
        func failures() throws {
            let signature = try TestKeys.ec.signES256(message)
            let publicKey = TestKeys.ec.publicKey
            #expect(!publicKey.verifyES256(signature: signature.flippingBit(5), message: message))
            #expect(!publicKey.verifyES256(signature: signature.flippingBit(300), message: message))
            #expect(!publicKey.verifyES256(signature: signature, message: message.flippingBit(1)))
            #expect(!publicKey.verifyES256(signature: Array(signature.dropLast()), message: message))
            #expect(!publicKey.verifyES256(signature: signature + [0], message: message))
            #expect(!publicKey.verifyES256(signature: [UInt8](), message: message))
            #expect(!publicKey.verifyES256(signature: [UInt8](repeating: 0, count: 64), message: message))
            let other = try ECPrivateKey.generate()
            #expect(!other.publicKey.verifyES256(signature: signature, message: message))
        }

        @Test("a DER signature is not accepted in place of r‖s")
        func derRefused() throws {
            let signature = try TestKeys.ec.signES256(message)
            let der = derEncode(signature)
            #expect(!TestKeys.ec.publicKey.verifyES256(signature: der, message: message))
        }

        @Test("openssl verifies our ES256 signatures (converted to DER)")
        func opensslVerifies() throws {
            try #require(OpenSSLCommand.isAvailable)
            let signature = try TestKeys.ec.signES256(message)
            try OpenSSLCommand.withTemporaryDirectory { directory in
                let key = directory.appendingPathComponent("pub.pem")
                let messageFile = directory.appendingPathComponent("msg")
                let signatureFile = directory.appendingPathComponent("sig.der")
                try TestKeys.ec.publicKey.pemString().write(to: key, atomically: true, encoding: .utf8)
                try Data(message).write(to: messageFile)
                try Data(derEncode(signature)).write(to: signatureFile)
                let result = try OpenSSLCommand.run(["dgst", "-sha256", "-verify", key.path, "-signature", signatureFile.path, messageFile.path])
                #expect(result.status == 0, "\(result.output)")
                #expect(result.output.contains("Verified OK"))
            }
        }

        @Test("we verify signatures openssl made (converted from DER)")
        func weVerifyOpenSSL() throws {
            try #require(OpenSSLCommand.isAvailable)
            try OpenSSLCommand.withTemporaryDirectory { directory in
                let keyFile = directory.appendingPathComponent("key.pem")
                let messageFile = directory.appendingPathComponent("msg")
                let signatureFile = directory.appendingPathComponent("sig.der")
                try TestKeys.ec.pemString().write(to: keyFile, atomically: true, encoding: .utf8)
                try Data(message).write(to: messageFile)
                let result = try OpenSSLCommand.run(["dgst", "-sha256", "-sign", keyFile.path, "-out", signatureFile.path, messageFile.path])
                try #require(result.status == 0, "\(result.output)")
                let raw = try #require(rawFromDER(Array(Data(contentsOf: signatureFile))))
                #expect(TestKeys.ec.publicKey.verifyES256(signature: raw, message: message))
            }
        }

        /// A minimal DER `SEQUENCE { INTEGER r, INTEGER s }` for a 64-byte r‖s, written
        /// independently of the code under test.
        func derEncode(_ raw: [UInt8]) -> [UInt8] {
            func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
                var value = Array(bytes.drop { $0 == 0 })
                if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
                return [0x02, UInt8(value.count)] + value
            }
            let body = integer(raw[0..<32]) + integer(raw[32..<64])
            return [0x30, UInt8(body.count)] + body
        }

        /// The inverse of `derEncode`, for short-form lengths as P-256 signatures always have.
        func rawFromDER(_ der: [UInt8]) -> [UInt8]? {
            guard der.count > 8, der[0] == 0x30, der[2] == 0x02 else { return nil }
            let rLength = Int(der[3])
            let r = der[4..<(4 + rLength)]
            guard der[4 + rLength] == 0x02 else { return nil }
            let sLength = Int(der[5 + rLength])
            let s = der[(6 + rLength)..<(6 + rLength + sLength)]
            func pad(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
                let trimmed = Array(bytes.drop { $0 == 0 })
                return [UInt8](repeating: 0, count: 32 - trimmed.count) + trimmed
            }
            return pad(r) + pad(s)
        }
    }

    @Suite("keys")
    struct Keys {
        @Test("a PKCS#8 P-256 key from `openssl genpkey` (the .p8 shape) loads and signs")
        func loadsOpenSSLKey() throws {
            try #require(OpenSSLCommand.isAvailable)
            try OpenSSLCommand.withTemporaryDirectory { directory in
                let keyFile = directory.appendingPathComponent("AuthKey_TEST.p8")
                let result = try OpenSSLCommand.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile.path])
                try #require(result.status == 0, "\(result.output)")
                let pem = try String(contentsOf: keyFile, encoding: .utf8)
                #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
                let key = try ECPrivateKey(pem: pem)
                let message = Array("client secret".utf8)
                #expect(key.publicKey.verifyES256(signature: try key.signES256(message), message: message))
            }
        }

        @Test("a P-384 key is refused with a message naming the curve")
        func refusesP384() throws {
            try #require(OpenSSLCommand.isAvailable)
            try OpenSSLCommand.withTemporaryDirectory { directory in
                let keyFile = directory.appendingPathComponent("p384.p8")
                let result = try OpenSSLCommand.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", keyFile.path])
                try #require(result.status == 0, "\(result.output)")
                let pem = try String(contentsOf: keyFile, encoding: .utf8)
                #expect(throws: JOSEError.invalidKey("PEM private key is on curve secp384r1; ES256 needs P-256 (prime256v1)")) {
                    try ECPrivateKey(pem: pem)
                }
            }
        }

        @Test("an RSA key is refused as an EC key")
        func refusesRSA() throws {
            let pem = try TestKeys.rsa.pemString()
            #expect(throws: JOSEError.invalidKey("PEM private key is not an EC key; ES256 needs a P-256 key")) {
                try ECPrivateKey(pem: pem)
            }
        }

        @Test("private and public PEM round-trip")
        func pemRoundTrip() throws {
            let privatePEM = try TestKeys.ec.pemString()
            #expect(privatePEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            let reloaded = try ECPrivateKey(pem: privatePEM)
            let publicPEM = try reloaded.publicKey.pemString()
            #expect(publicPEM == (try TestKeys.ec.publicKey.pemString()))
            let publicKey = try ECPublicKey(pem: publicPEM)
            let message = Array("x".utf8)
            #expect(publicKey.verifyES256(signature: try TestKeys.ec.signES256(message), message: message))
        }

        @Test("public JWK round-trips")
        func jwkRoundTrip() throws {
            let jwk = try TestKeys.ec.publicJWK(keyID: "ec1")
            #expect(jwk["crv"] == "P-256")
            #expect(Base64URL.decode(jwk["x"]?.stringValue ?? "")?.count == 32)
            let imported = try ECPublicKey(jwk: jwk)
            let message = Array("jwk".utf8)
            #expect(imported.verifyES256(signature: try TestKeys.ec.signES256(message), message: message))
        }

        @Test("a point not on the curve is refused")
        func offCurve() throws {
            let (x, y) = try TestKeys.ec.publicKey.coordinates()
            var badY = y
            badY[31] ^= 1
            #expect(throws: JOSEError.self) { try ECPublicKey(x: x, y: badY) }
            #expect(throws: JOSEError.self) { try ECPublicKey(x: Array(x.dropFirst()), y: y) }
        }

        @Test("RFC 7515 A.3 ES256 example verifies")
        func rfc7515() throws {
            let key = try ECPublicKey(jwk: [
                "kty": "EC", "crv": "P-256",
                "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
            ])
            let jws = try CompactJWS(parsing: """
                eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.\
                DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q
                """)
            #expect(try jws.requireAlgorithm(in: [.ES256]) == .ES256)
            #expect(key.verifyES256(signature: jws.signature, message: jws.signingInput))
        }
    }

    @Suite("JWSSigner")
    struct Signer {
        @Test("ES256 compact JWS has alg and kid and verifies")
        func es256Token() throws {
            let token = try JWSSigner.signES256(
                header: ["typ": "JWT"], claims: ["iss": "TEAMID1234", "aud": "https://appleid.apple.com"], key: TestKeys.ec, keyID: "ABC123DEFG")
            let jws = try CompactJWS(parsing: token)
            #expect(jws.header == ["alg": "ES256", "kid": "ABC123DEFG", "typ": "JWT"])
            #expect(jws.signature.count == 64)
            #expect(TestKeys.ec.publicKey.verifyES256(signature: jws.signature, message: jws.signingInput))
        }

        @Test("RS256 compact JWS without kid")
        func rs256Token() throws {
            let token = try JWSSigner.signRS256(claims: ["sub": "1"], key: TestKeys.rsa)
            let jws = try CompactJWS(parsing: token)
            #expect(jws.header == ["alg": "RS256"])
            #expect(jws.keyID == nil)
            #expect(TestKeys.rsa.publicKey.verifyRS256(signature: jws.signature, message: jws.signingInput))
        }
    }
}
