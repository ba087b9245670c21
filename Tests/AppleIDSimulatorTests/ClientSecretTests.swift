import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE
import JSON
import Testing
import TestSupport

extension AppleIDSimulatorTests {
    @Suite("client_secret verification with a registered key")
    struct ClientSecret {
        static let teamID = "TEAM123456"
        static let keyID = "KEY1234567"

        let running: RunningSimulator
        let developerKey: ECPrivateKey

        init() throws {
            running = try RunningSimulator()
            developerKey = try ECPrivateKey.generate()
            running.simulator.registerClientKey(teamID: Self.teamID, keyID: Self.keyID, publicKey: developerKey.publicKey)
        }

        func secret(key: ECPrivateKey? = nil, keyID: String = keyID, changes: [String: JSONValue] = [:]) throws -> String {
            let now = Int64(Date().timeIntervalSince1970)
            var claims: [String: JSONValue] = [
                "iss": .string(Self.teamID), "sub": .string(RunningSimulator.clientID),
                "aud": "https://appleid.apple.com", "iat": .integer(now), "exp": .integer(now + 3600),
            ]
            claims.merge(changes) { _, new in new }
            return try JWSSigner.signES256(claims: .object(claims), key: key ?? developerKey, keyID: keyID)
        }

        func revokeStatus(secret: String) throws -> String? {
            let response = try running.post("/auth/revoke", form: [("client_id", RunningSimulator.clientID),
                                                                    ("client_secret", secret), ("token", "r-x")])
            return response.status == 200 ? "ok" : try TokenEndpoint.error(response)
        }

        @Test("a correctly signed client secret is accepted at the token and revoke endpoints")
        func acceptsValidSecret() throws {
            #expect(try revokeStatus(secret: secret()) == "ok")
            let code = try #require(try running.signInFields()["code"])
            #expect(try TokenEndpoint.exchange(running, code: code, clientSecret: secret()).status == 200)
        }

        @Test("anything else is invalid_client")
        func refusesBadSecrets() throws {
            let now = Int64(Date().timeIntervalSince1970)
            let refused = [
                "not a jwt",
                try secret(key: ECPrivateKey.generate()),
                try secret(keyID: "UNKNOWNKEY"),
                try secret(changes: ["iss": "OTHERTEAM1"]),
                try secret(changes: ["sub": "com.example.other"]),
                try secret(changes: ["aud": "https://example.com"]),
                try secret(changes: ["exp": .integer(now - 10)]),
                try secret(changes: ["iat": .integer(now + 3600), "exp": .integer(now + 7200)]),
                // iat given too: secret() reads the clock again, and a second boundary between the two reads made
                // this lifetime exactly the maximum (accepted) in a loaded CI run.
                try secret(changes: ["iat": .integer(now), "exp": .integer(now + 15_777_001)]),
                try secret(changes: ["iat": nil]),
            ]
            for bad in refused {
                #expect(try revokeStatus(secret: bad) == "invalid_client")
            }
            #expect(running.simulator.revokedTokens.isEmpty)
        }

        @Test("times at the ends of Int64 are invalid_client, not an overflow trap")
        func extremeTimes() throws {
            let extreme = try secret(changes: ["iat": .number(-9.2e18), "exp": .number(9.2e18)])
            #expect(try revokeStatus(secret: extreme) == "invalid_client")
        }
    }
}
