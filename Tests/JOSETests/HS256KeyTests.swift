import JOSE
import JSON
import Testing

@Suite("HS256 JWS")
struct HS256KeyTests {
    static let secret = SecureRandom.bytes(32)
    static let key = try! HS256Key(secret: secret)
    static let claims: JSONValue = ["sub": "42", "sid": "abc", "exp": 1_764_600_000]

    @Test("sign then verify returns the claims; the header is alg HS256 with the caller's typ")
    func roundTrip() throws {
        let token = Self.key.sign(claims: Self.claims, header: ["typ": "test+jwt"])
        #expect(try Self.key.verify(token, type: "test+jwt") == Self.claims.objectValue)
        let jws = try CompactJWS(parsing: token)
        #expect(jws.header == ["alg": "HS256", "typ": "test+jwt"])
    }

    @Test("the compact form is base64url(sorted header) . base64url(claims) . base64url(HMAC-SHA256 of both)")
    func format() {
        let token = Self.key.sign(claims: Self.claims, header: ["typ": "test+jwt"])
        let input = Base64URL.encode(Array(#"{"alg":"HS256","typ":"test+jwt"}"#.utf8)) + "."
            + Base64URL.encode(Array(#"{"exp":1764600000,"sid":"abc","sub":"42"}"#.utf8))
        let tag = HMACSHA256.authenticate(key: Self.secret, message: Array(input.utf8))
        #expect(token == input + "." + Base64URL.encode(tag))
    }

    @Test("RFC 7515 appendix A.1 verifies with its published key")
    func rfc7515() throws {
        let secret = try #require(Base64URL.decode("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"))
        let token = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
            + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let claims = try HS256Key(secret: secret).verify(token, type: "JWT")
        #expect(claims["iss"] == "joe")
        #expect(claims["exp"] == 1_300_819_380)
    }

    @Test("a changed payload, another key, or a truncated tag fails the signature")
    func badSignature() throws {
        let token = Self.key.sign(claims: Self.claims)
        let parts = token.split(separator: ".").map(String.init)
        let tampered = parts[0] + "." + Base64URL.encode(JSONValue.object(["sub": "43"]).serializedBytes()) + "." + parts[2]
        #expect(throws: JOSEError.badSignature) { try Self.key.verify(tampered) }
        let other = try HS256Key(secret: SecureRandom.bytes(32))
        #expect(throws: JOSEError.badSignature) { try other.verify(token) }
        let truncated = parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(3))
        #expect(throws: JOSEError.badSignature) { try Self.key.verify(truncated) }
    }

    @Test("any alg but HS256 is refused by name before the HMAC", arguments: ["none", "RS256", "ES256", "HS512", "hs256"])
    func algorithms(alg: String) throws {
        let header = Base64URL.encode(JSONValue.object(["alg": .string(alg)]).serializedBytes())
        let input = header + "." + Base64URL.encode(Self.claims.serializedBytes())
        // Even a correct HMAC under another alg name is refused.
        let token = input + "." + Base64URL.encode(HMACSHA256.authenticate(key: Self.secret, message: Array(input.utf8)))
        #expect(throws: JOSEError.algorithmNotAllowed(alg)) { try Self.key.verify(token) }
        #expect(throws: JOSEError.algorithmNotAllowed(alg)) { try Self.key.verify(input + ".") }
    }

    @Test("a missing or different typ is refused when one is required")
    func type() {
        let untyped = Self.key.sign(claims: Self.claims)
        #expect(throws: JOSEError.malformedToken(#"header "typ" is not "a+jwt""#)) { try Self.key.verify(untyped, type: "a+jwt") }
        let other = Self.key.sign(claims: Self.claims, header: ["typ": "b+jwt"])
        #expect(throws: JOSEError.malformedToken(#"header "typ" is not "a+jwt""#)) { try Self.key.verify(other, type: "a+jwt") }
    }

    @Test("strict parsing: segments, size limit, claims that are not an object")
    func strictParsing() {
        #expect(throws: JOSEError.self) { try Self.key.verify("a.b") }
        #expect(throws: JOSEError.tooLarge(limit: 64)) { try Self.key.verify(Self.key.sign(claims: Self.claims), maxLength: 64) }
        let array = Self.key.sign(claims: [1, 2])
        #expect(throws: JOSEError.malformedToken("payload is not a JSON object")) { try Self.key.verify(array) }
    }

    @Test("a key shorter than 32 bytes is refused")
    func shortKey() {
        #expect(throws: JOSEError.invalidKey("an HS256 key needs at least 32 bytes, got 31")) {
            try HS256Key(secret: [UInt8](repeating: 7, count: 31))
        }
    }
}
