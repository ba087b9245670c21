import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import JSON
import Testing
import TestSupport

extension AppleIDSimulatorTests {
    @Suite("GET /auth/keys, rotation and availability")
    struct Keys {
        @Test("publishes RS256 signing keys with a Cache-Control max-age")
        func publishesJWKS() throws {
            let running = try RunningSimulator()
            let response = try running.get("/auth/keys")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json")
            #expect(response.header("Cache-Control") == "max-age=86400")
            let keys = try #require(JSONValue.parse(response.body)["keys"]?.arrayValue)
            #expect(keys.count == 1)
            let key = try #require(keys.first)
            #expect(key["kty"] == "RSA" && key["use"] == "sig" && key["alg"] == "RS256")
            #expect(key["kid"] == .string(running.simulator.currentKeyID))
            #expect(key["e"] == "AQAB")
            #expect(try RSAPublicKey(jwk: key).modulusBits == 2048)
        }

        @Test("counts JWKS fetches")
        func countsFetches() throws {
            let running = try RunningSimulator()
            #expect(running.simulator.jwksFetchCount == 0)
            _ = try running.get("/auth/keys")
            _ = try running.get("/auth/keys")
            _ = try running.get("/")
            #expect(running.simulator.jwksFetchCount == 2)
        }

        @Test("rotation publishes the new and the previous key and signs with the new one")
        func rotation() throws {
            let running = try RunningSimulator()
            let oldKeyID = running.simulator.currentKeyID
            let oldToken = try #require(try running.signInFields()["id_token"])

            try running.simulator.rotateKeys()
            let newKeyID = running.simulator.currentKeyID
            #expect(newKeyID != oldKeyID)
            let published = try JSONValue.parse(running.get("/auth/keys").body)["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue }
            #expect(published == [newKeyID, oldKeyID])

            let newToken = try #require(try running.signInFields()["id_token"])
            #expect(try CompactJWS(parsing: newToken).keyID == newKeyID)
            _ = try running.verifiedClaims(newToken)
            _ = try running.verifiedClaims(oldToken)

            running.simulator.retireOldKeys()
            let afterRetire = try JSONValue.parse(running.get("/auth/keys").body)["keys"]?.arrayValue
            #expect(afterRetire?.count == 1)
            #expect(afterRetire?.first?["kid"] == .string(newKeyID))
        }

        @Test("POST /__simulator/rotate-keys rotates")
        func rotateEndpoint() throws {
            let running = try RunningSimulator()
            let before = running.simulator.currentKeyID
            let response = try running.post("/__simulator/rotate-keys", form: [])
            #expect(response.status == 200)
            #expect(try JSONValue.parse(response.body)["kid"] == .string(running.simulator.currentKeyID))
            #expect(running.simulator.currentKeyID != before)
        }

        @Test("while unavailable every endpoint answers 503")
        func unavailable() throws {
            let running = try RunningSimulator()
            running.simulator.isUnavailable = true
            #expect(try running.get("/auth/keys").status == 503)
            #expect(try running.get(RunningSimulator.authorizePath()).status == 503)
            #expect(try running.post("/auth/token", form: [("grant_type", "authorization_code")]).status == 503)
            #expect(try running.post("/auth/revoke", form: []).status == 503)
            #expect(try running.get("/").status == 503)
            #expect(running.simulator.jwksFetchCount == 1)
            running.simulator.isUnavailable = false
            #expect(try running.get("/auth/keys").status == 200)
        }
    }

    @Suite("minting and pages")
    struct Minting {
        @Test("mintIdentityToken signs Apple-shaped claims, with overrides")
        func mints() throws {
            let running = try RunningSimulator()
            var claims = IdentityTokenClaims(audience: "com.example.app", subject: "001234.simulated.ada",
                                             nonce: "n", code: "c1", email: "ada@example.com")
            claims.extra = ["email_verified": "true", "custom": 7]
            claims.removed = ["nonce_supported"]
            let token = try running.simulator.mintIdentityToken(claims)
            let verified = try running.verifiedClaims(token)
            #expect(verified["iss"] == "https://appleid.apple.com")
            #expect(verified["email_verified"] == "true")
            #expect(verified["custom"] == 7)
            #expect(verified["nonce_supported"] == nil)
            #expect(verified["c_hash"] == .string(IdentityTokenClaims.halfHash("c1")))

            let unsigned = try running.simulator.mintIdentityToken(claims, headerOverrides: ["alg": "none", "kid": nil])
            let jws = try CompactJWS(parsing: unsigned)
            #expect(jws.algorithm == "none")
            #expect(jws.keyID == nil)
            #expect(throws: JOSEError.self) { try jws.requireAlgorithm(in: [.RS256]) }
        }

        @Test("the home page lists the endpoints; unknown paths are 404")
        func homePage() throws {
            let running = try RunningSimulator()
            let home = try running.get("/")
            #expect(home.status == 200)
            #expect(home.text.contains("/auth/authorize") && home.text.contains("/auth/keys"))
            #expect(try running.get("/nope").status == 404)
        }
    }
}
