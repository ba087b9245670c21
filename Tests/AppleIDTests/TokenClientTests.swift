import AppleID
import AppleIDSimulator
import Foundation
import JOSE
import Testing

extension AppleIDTests {
    @Suite("Code exchange and revocation against the simulator")
    struct TokenClient {
        let fixture: SimulatorFixture

        init() throws { fixture = try SimulatorFixture() }

        func exchangeError(_ client: AppleTokenClient, code: String, clientID: String = SimulatorFixture.bundleID,
                           redirectURI: String? = nil, subject: String = SimulatedUser.ada.sub) -> AppleTokenError? {
            do {
                _ = try client.exchange(code: code, clientID: clientID, redirectURI: redirectURI, expectedSubject: subject)
                return nil
            } catch {
                return error
            }
        }

        @Test("a web code exchanges with the Services ID and redirect_uri; the id_token verifies without a nonce")
        func webCode() throws {
            let code = try fixture.webCode(user: .grace)
            let exchange = try fixture.client().exchange(code: code, clientID: SimulatorFixture.servicesID,
                                                         redirectURI: SimulatorFixture.redirectURI,
                                                         expectedSubject: SimulatedUser.grace.sub)
            #expect(exchange.identity.subject == SimulatedUser.grace.sub)
            #expect(exchange.identity.audience == SimulatorFixture.servicesID)
            #expect(exchange.identity.email == SimulatedUser.grace.email)
            #expect(!exchange.identity.nonceVerified)
            #expect(exchange.expiresIn == 3600)
            #expect(!exchange.accessToken.isEmpty)
            let refreshToken = try #require(exchange.refreshToken)
            #expect(!exchange.description.contains(refreshToken) && !exchange.description.contains(exchange.accessToken))

            let sent = fieldMap(try #require(fixture.transport.posts.last).fields)
            #expect(Set(sent.keys) == ["client_id", "client_secret", "code", "grant_type", "redirect_uri"])
            #expect(sent["client_id"] == SimulatorFixture.servicesID)
            #expect(sent["grant_type"] == "authorization_code")
            #expect(sent["redirect_uri"] == SimulatorFixture.redirectURI)
            #expect(try CompactJWS(parsing: #require(sent["client_secret"])).claims()["sub"] == .string(SimulatorFixture.servicesID))
        }

        @Test("a native code exchanges with the bundle ID and no redirect_uri")
        func nativeCode() throws {
            let exchange = try fixture.client().exchange(code: fixture.nativeCode(user: .alan), clientID: SimulatorFixture.bundleID,
                                                         redirectURI: nil, expectedSubject: SimulatedUser.alan.sub)
            #expect(exchange.identity.audience == SimulatorFixture.bundleID)
            #expect(exchange.refreshToken != nil)
            let sent = fieldMap(try #require(fixture.transport.posts.last).fields)
            #expect(Set(sent.keys) == ["client_id", "client_secret", "code", "grant_type"])
        }

        @Test("a web code sent without its redirect_uri is invalid_grant")
        func webCodeWithoutRedirect() throws {
            let error = exchangeError(fixture.client(), code: try fixture.webCode(), clientID: SimulatorFixture.servicesID)
            #expect(error == .fromApple(code: "invalid_grant"))
        }

        @Test("a reused code is invalid_grant with advice, and the message carries neither code nor secret")
        func reusedCode() throws {
            let client = fixture.client()
            let code = fixture.nativeCode()
            _ = try client.exchange(code: code, clientID: SimulatorFixture.bundleID, redirectURI: nil,
                                    expectedSubject: SimulatedUser.ada.sub)
            let error = try #require(exchangeError(client, code: code))
            #expect(error == .apple(code: "invalid_grant",
                                    advice: "the authorization code is expired (5 minutes), already used, or was issued to another client_id or redirect_uri"))
            #expect(!error.description.contains(code))
            let secret = try #require(fieldMap(fixture.transport.posts.last!.fields)["client_secret"])
            #expect(!error.description.contains(secret))
            #expect(fixture.transport.posts(to: "/auth/token") == 2, "a 400 is not retried")
        }

        @Test("a secret signed for another team is invalid_client, not retried, with advice naming what to check")
        func wrongTeam() throws {
            let otherTeam = AppleClientKey(teamID: "OTHERTEAM1", keyID: fixture.key.keyID, privateKey: fixture.privateKey)
            let error = try #require(exchangeError(fixture.client(key: otherTeam), code: fixture.nativeCode()))
            guard case let .apple(code, advice) = error else {
                Issue.record("expected an Apple error, got \(error)")
                return
            }
            #expect(code == "invalid_client")
            #expect(advice.contains("APPLE_TEAM_ID") && advice.contains("APPLE_KEY_ID") && advice.contains(".p8"))
            #expect(fixture.transport.posts(to: "/auth/token") == 1)
            #expect(fixture.sleeps.withLock { $0.isEmpty })
        }

        @Test("Apple down (503): `attempts` tries with growing backoff, then unreachable")
        func unavailable() throws {
            fixture.simulator.isUnavailable = true
            let error = try #require(exchangeError(fixture.client(attempts: 3), code: fixture.nativeCode()))
            guard case .unreachable = error else {
                Issue.record("expected unreachable, got \(error)")
                return
            }
            #expect(error.description.contains("HTTP 503") && error.description.contains("after 3 attempts"))
            #expect(fixture.transport.posts(to: "/auth/token") == 3)
            #expect(fixture.sleeps.withLock { $0 } == [0.2, 0.4])
        }

        @Test("a timeout and a 502 are retried, and the third attempt succeeds")
        func retriesThenSucceeds() throws {
            fixture.transport.inject([.failure(.timedOut), .status(502)])
            let exchange = try fixture.client().exchange(code: fixture.nativeCode(), clientID: SimulatorFixture.bundleID,
                                                         redirectURI: nil, expectedSubject: SimulatedUser.ada.sub)
            #expect(exchange.identity.subject == SimulatedUser.ada.sub)
            #expect(fixture.transport.posts(to: "/auth/token") == 3)
        }

        @Test("a transport failure on every attempt is unreachable")
        func transportFailures() throws {
            fixture.transport.inject([.failure(.unreachable("connection refused")), .failure(.timedOut)])
            let error = exchangeError(fixture.client(attempts: 2), code: fixture.nativeCode())
            #expect(error == .unreachable("no answer in time after 2 attempts"))
        }

        @Test("an id_token for another user than the sign-in is a subject mismatch")
        func subjectMismatch() throws {
            let error = exchangeError(fixture.client(), code: fixture.nativeCode(user: .alan), subject: SimulatedUser.ada.sub)
            #expect(error == .subjectMismatch)
        }

        @Test("the returned id_token is verified: an issuer we do not accept refuses it")
        func idTokenVerified() throws {
            let strict = IdentityTokenVerifier(
                policy: VerificationPolicy(issuers: ["https://other.example"], servicesID: nil, bundleIDs: [SimulatorFixture.bundleID]),
                keys: fixture.keys)
            let error = exchangeError(fixture.client(verifier: strict), code: fixture.nativeCode())
            #expect(error == .idTokenRejected(.wrongIssuer(fixture.simulator.issuer)))
        }

        @Test("revoke sends the token with its hint and the client secret; the simulator records it")
        func revoke() throws {
            let client = fixture.client()
            let exchange = try client.exchange(code: fixture.nativeCode(), clientID: SimulatorFixture.bundleID, redirectURI: nil,
                                               expectedSubject: SimulatedUser.ada.sub)
            let refreshToken = try #require(exchange.refreshToken)
            try client.revoke(token: refreshToken, clientID: SimulatorFixture.bundleID)
            #expect(fixture.simulator.revokedTokens == [refreshToken])
            let sent = fieldMap(try #require(fixture.transport.posts.last).fields)
            #expect(sent["token_type_hint"] == "refresh_token")
            #expect(sent["client_id"] == SimulatorFixture.bundleID)
        }

        @Test("revoke while Apple is down is retried, then unreachable; with a bad secret it is invalid_client")
        func revokeFailures() throws {
            fixture.simulator.isUnavailable = true
            #expect(throws: AppleTokenError.unreachable("HTTP 503 after 2 attempts")) {
                try fixture.client(attempts: 2).revoke(token: "r-1", clientID: SimulatorFixture.bundleID)
            }
            fixture.simulator.isUnavailable = false
            let otherKey = AppleClientKey(teamID: SimulatorFixture.teamID, keyID: SimulatorFixture.keyID,
                                          privateKey: try ECPrivateKey.generate())
            #expect(throws: AppleTokenError.fromApple(code: "invalid_client")) {
                try fixture.client(key: otherKey).revoke(token: "r-1", clientID: SimulatorFixture.bundleID)
            }
            #expect(fixture.simulator.revokedTokens.isEmpty)
        }

        @Test("checkClientSecret: accepted with the registered key, rejected for another team, inconclusive when down")
        func checkClientSecret() throws {
            #expect(fixture.client().checkClientSecret(clientID: SimulatorFixture.servicesID,
                                                       redirectURI: SimulatorFixture.redirectURI) == .accepted)
            #expect(fixture.client().checkClientSecret(clientID: SimulatorFixture.bundleID, redirectURI: nil) == .accepted)
            let otherTeam = AppleClientKey(teamID: "OTHERTEAM1", keyID: SimulatorFixture.keyID, privateKey: fixture.privateKey)
            #expect(fixture.client(key: otherTeam).checkClientSecret(clientID: SimulatorFixture.bundleID, redirectURI: nil)
                == .rejected(AppleTokenError.advice(for: "invalid_client")))
            fixture.simulator.isUnavailable = true
            guard case .inconclusive = fixture.client(attempts: 1).checkClientSecret(clientID: SimulatorFixture.bundleID,
                                                                                   redirectURI: nil) else {
                Issue.record("expected inconclusive while Apple is down")
                return
            }
        }

        @Test("Apple's error codes map to advice; unknown ones are kept printable")
        func adviceTable() {
            for code in ["invalid_client", "invalid_grant", "invalid_request", "unauthorized_client",
                         "unsupported_grant_type", "invalid_scope"] {
                let advice = AppleTokenError.advice(for: code)
                #expect(!advice.contains("does not know"), "\(code) has specific advice")
            }
            #expect(AppleTokenError.advice(for: "server_exploded").contains("does not know"))
        }
    }

    @Suite("The verified token's digest")
    struct TokenDigest {
        @Test("is the SHA-256 of the whole token, as replay records have always stored it, for tokens of several sizes")
        func matchesWholeTokenHash() throws {
            let fixture = try SimulatorFixture(registerKey: false)
            for email in [nil, "a@example.com", String(repeating: "long.address.", count: 40) + "@example.com"] {
                let token = try fixture.simulator.mintIdentityToken(
                    IdentityTokenClaims(audience: SimulatorFixture.servicesID, subject: SimulatedUser.ada.sub, email: email))
                let identity = try fixture.verifier.verify(token, context: VerificationContext(checkNonce: false))
                #expect(identity.tokenDigest == SHA256.hexDigest(token))
            }
        }
    }

    @Suite("The verifier's nonce rule for token-endpoint id_tokens")
    struct NonceRule {
        @Test("a Services-ID token without nonce is refused by default and accepted with checkNonce false")
        func checkNonceFlag() throws {
            let fixture = try SimulatorFixture(registerKey: false)
            let token = try fixture.simulator.mintIdentityToken(
                IdentityTokenClaims(audience: SimulatorFixture.servicesID, subject: SimulatedUser.ada.sub))
            #expect(throws: TokenRejection.missingNonce) { try fixture.verifier.verify(token) }
            let identity = try fixture.verifier.verify(token, context: VerificationContext(checkNonce: false))
            #expect(identity.subject == SimulatedUser.ada.sub)
            #expect(!identity.nonceVerified)
            // The other rules still apply.
            let other = try fixture.simulator.mintIdentityToken(IdentityTokenClaims(audience: "com.other", subject: "x"))
            #expect(throws: TokenRejection.wrongAudience("com.other")) {
                try fixture.verifier.verify(other, context: VerificationContext(checkNonce: false))
            }
        }
    }
}
