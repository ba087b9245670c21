import JOSE
import JSON
import Testing

@Suite("CompactJWS")
struct CompactJWSTests {
    /// A compact JWS from raw parts, without signing.
    static func token(header: String, payload: String = #"{"sub":"x"}"#, signature: [UInt8] = []) -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + "." + Base64URL.encode(signature)
    }

    @Suite("parsing")
    struct Parsing {
        @Test("splits a signed token into header, payload, signature and signing input")
        func parts() throws {
            let claims: JSONValue = ["sub": "001234.abc", "exp": 1_764_600_000]
            let token = try JWSSigner.signRS256(claims: claims, key: TestKeys.rsa, keyID: "K1")
            let jws = try CompactJWS(parsing: token)
            #expect(jws.algorithm == "RS256")
            #expect(jws.keyID == "K1")
            #expect(jws.header == ["alg": "RS256", "kid": "K1"])
            #expect(try JSONValue.parse(jws.payload) == claims)
            #expect(try jws.claims()["sub"] == "001234.abc")
            #expect(jws.signature.count == 256)
            let dots = token.split(separator: ".", omittingEmptySubsequences: false)
            #expect(jws.signingInput == Array((dots[0] + "." + dots[1]).utf8))
        }

        @Test("the header alone: what parsing the whole token gives, nil for what parsing refuses over its shape or header")
        func headerOnly() throws {
            let token = try JWSSigner.signRS256(claims: ["sub": "x"], key: TestKeys.rsa, keyID: "K1")
            #expect(CompactJWS.header(ofToken: token) == (try CompactJWS(parsing: token)).header)
            let refused = [
                token + ".x", String(token.prefix(while: { $0 != "." })) + ".x", "." + token.split(separator: ".").dropFirst().joined(separator: "."),
                CompactJWSTests.token(header: #"{"alg":"RS256","crit":["b64"]}"#), CompactJWSTests.token(header: "[1]"),
                "!!!." + token.split(separator: ".").dropFirst().joined(separator: "."),
            ]
            for malformed in refused {
                #expect(throws: JOSEError.self) { try CompactJWS(parsing: malformed) }
                #expect(CompactJWS.header(ofToken: malformed) == nil, "\(malformed.prefix(40))")
            }
            #expect(CompactJWS.header(ofToken: token, maxLength: token.utf8.count - 1) == nil)
        }

        @Test("parses from a Substring too")
        func substring() throws {
            let token = CompactJWSTests.token(header: #"{"alg":"RS256"}"#)
            let wrapped = "Bearer " + token
            let jws = try CompactJWS(parsing: wrapped.dropFirst(7))
            #expect(jws.algorithm == "RS256")
        }

        @Test("refuses two segments")
        func twoSegments() {
            #expect(throws: JOSEError.malformedToken("expected 3 dot-separated segments, found 2")) {
                try CompactJWS(parsing: "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0")
            }
        }

        @Test("refuses four segments")
        func fourSegments() {
            let token = CompactJWSTests.token(header: #"{"alg":"RS256"}"#) + ".AAAA"
            #expect(throws: JOSEError.malformedToken("expected 3 dot-separated segments, found 4")) {
                try CompactJWS(parsing: token)
            }
        }

        @Test("refuses a JWE-shaped token (five segments)")
        func fiveSegments() {
            #expect(throws: JOSEError.malformedToken("expected 3 dot-separated segments, found 5")) {
                try CompactJWS(parsing: "a.b.c.d.e")
            }
        }

        @Test("refuses bad base64url in each segment, naming the segment")
        func badBase64() {
            let good = CompactJWSTests.token(header: #"{"alg":"RS256"}"#, signature: [1, 2, 3])
            let parts = good.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            #expect(throws: JOSEError.malformedToken("header segment is not valid base64url")) {
                try CompactJWS(parsing: parts[0] + "=." + parts[1] + "." + parts[2])
            }
            #expect(throws: JOSEError.malformedToken("payload segment is not valid base64url")) {
                try CompactJWS(parsing: parts[0] + "." + parts[1] + "+." + parts[2])
            }
            #expect(throws: JOSEError.malformedToken("signature segment is not valid base64url")) {
                try CompactJWS(parsing: parts[0] + "." + parts[1] + "." + parts[2] + "!")
            }
        }

        @Test("refuses a header that is not a JSON object", arguments: [#"["alg","RS256"]"#, #""RS256""#, "null"])
        func headerNotObject(header: String) {
            #expect(throws: JOSEError.malformedToken("header is not a JSON object")) {
                try CompactJWS(parsing: CompactJWSTests.token(header: header))
            }
        }

        @Test("refuses a header that is not JSON at all")
        func headerNotJSON() {
            #expect {
                try CompactJWS(parsing: CompactJWSTests.token(header: "alg=RS256"))
            } throws: { error in
                guard case JOSEError.malformedToken(let reason) = error else { return false }
                return reason.hasPrefix("header is not valid JSON")
            }
        }

        @Test("refuses an empty header segment")
        func emptyHeader() {
            #expect(throws: JOSEError.malformedToken("header segment is empty")) {
                try CompactJWS(parsing: ".eyJzdWIiOiJ4In0.AAAA")
            }
        }

        @Test("refuses headers with critical extensions")
        func critical() {
            #expect(throws: JOSEError.self) {
                try CompactJWS(parsing: CompactJWSTests.token(header: #"{"alg":"RS256","crit":["exp"],"exp":1}"#))
            }
        }

        @Test("refuses tokens over the length limit before looking inside")
        func tooLong() throws {
            let token = CompactJWSTests.token(header: #"{"alg":"RS256"}"#, payload: String(repeating: "x", count: 20_000))
            #expect(throws: JOSEError.tooLarge(limit: 16_384)) { try CompactJWS(parsing: token) }
            #expect(throws: JOSEError.tooLarge(limit: 10)) { try CompactJWS(parsing: "a.b.c.d.e.f.g", maxLength: 10) }
            _ = try CompactJWS(parsing: token, maxLength: 40_000)
        }

        @Test("error descriptions never repeat the token")
        func descriptionsOmitToken() {
            let secretish = "eyJzZWNyZXQiOiJ0b2tlbiJ9"
            for token in [secretish, secretish + "." + secretish + ".!!", secretish + "." + secretish + "." + secretish] {
                do {
                    _ = try CompactJWS(parsing: token)
                } catch {
                    #expect(!error.description.contains(secretish))
                }
            }
        }
    }

    @Suite("algorithm allow-list")
    struct AlgorithmAllowList {
        @Test("accepts RS256 when allowed")
        func acceptsRS256() throws {
            let jws = try CompactJWS(parsing: CompactJWSTests.token(header: #"{"alg":"RS256","kid":"k"}"#))
            #expect(try jws.requireAlgorithm(in: [.RS256]) == .RS256)
        }

        @Test("refuses algorithms by name before any crypto",
              arguments: ["none", "None", "HS256", "RS512", "PS256", "ES256", "rs256", ""])
        func refuses(alg: String) throws {
            // Unsigned (empty signature) tokens still parse, so the refusal names the algorithm.
            let jws = try CompactJWS(parsing: CompactJWSTests.token(header: #"{"alg":"\#(alg)"}"#))
            #expect(throws: JOSEError.algorithmNotAllowed(alg)) { try jws.requireAlgorithm(in: [.RS256]) }
        }

        @Test("refuses a missing or non-string alg")
        func missingAlg() throws {
            let missing = try CompactJWS(parsing: CompactJWSTests.token(header: #"{"kid":"k"}"#))
            #expect(throws: JOSEError.malformedToken(#"header has no "alg""#)) { try missing.requireAlgorithm(in: [.RS256]) }
            let number = try CompactJWS(parsing: CompactJWSTests.token(header: #"{"alg":256}"#))
            #expect(throws: JOSEError.malformedToken(#"header "alg" is not a string"#)) { try number.requireAlgorithm(in: [.RS256]) }
        }

        @Test("an HS256 token MACed with the RSA public key is refused (key confusion)")
        func keyConfusion() throws {
            let publicPEM = try TestKeys.rsa.publicKey.pemString()
            let header = Base64URL.encode(Array(#"{"alg":"HS256"}"#.utf8))
            let payload = Base64URL.encode(Array(#"{"sub":"attacker"}"#.utf8))
            let mac = HMACSHA256.authenticate(key: Array(publicPEM.utf8), message: Array("\(header).\(payload)".utf8))
            let jws = try CompactJWS(parsing: "\(header).\(payload).\(Base64URL.encode(mac))")
            #expect(throws: JOSEError.algorithmNotAllowed("HS256")) { try jws.requireAlgorithm(in: [.RS256]) }
        }

        @Test("long or unprintable alg values are shortened in the error")
        func loggableAlg() throws {
            let jws = try CompactJWS(parsing: CompactJWSTests.token(header: #"{"alg":"\#(String(repeating: "A", count: 100))\n"}"#))
            #expect(throws: JOSEError.algorithmNotAllowed(String(repeating: "A", count: 40) + "…")) {
                try jws.requireAlgorithm(in: [.RS256])
            }
        }
    }

    @Suite("claims")
    struct Claims {
        @Test("refuses a payload that is not a JSON object")
        func payloadNotObject() throws {
            let jws = try CompactJWS(parsing: CompactJWSTests.token(header: #"{"alg":"RS256"}"#, payload: "[1]"))
            #expect(throws: JOSEError.malformedToken("payload is not a JSON object")) { try jws.claims() }
            let text = try CompactJWS(parsing: CompactJWSTests.token(header: #"{"alg":"RS256"}"#, payload: "hello"))
            #expect(throws: JOSEError.self) { try text.claims() }
        }
    }
}
