import AppleID
import AppleIDSimulator
import Foundation
import JOSE
import JSON
import Testing
import TestSupport

extension AppleIDTests {
    @Suite("Server-to-server notifications")
    struct Notifications {
        let fixture: SimulatorFixture
        let clock = TestClock(frozenAt: Date())
        let verifier: NotificationVerifier

        init() throws {
            fixture = try SimulatorFixture(registerKey: false)
            verifier = NotificationVerifier(keys: fixture.keys, issuers: [fixture.simulator.issuer],
                                            clientIDs: [SimulatorFixture.servicesID, SimulatorFixture.bundleID],
                                            clock: clock.clock)
        }

        func verify(_ body: String) throws(TokenRejection) -> AppleServerNotification {
            try verifier.verify(Array(body.utf8))
        }

        func mint(_ type: String, audience: String = SimulatorFixture.bundleID, jti: String? = "jti-1",
                  lifetime: TimeInterval? = nil) throws -> String {
            try fixture.simulator.mintNotification(type: type, subject: SimulatedUser.ada.sub, audience: audience,
                                                   jti: jti, issuedAt: clock.now, lifetime: lifetime)
        }

        /// Standard claims around an `events` value, for shapes `mintNotification` does not make.
        func claims(events: JSONValue?) -> [String: JSONValue] {
            var claims: [String: JSONValue] = ["iss": .string(fixture.simulator.issuer), "aud": .string(SimulatorFixture.servicesID),
                                               "iat": .integer(Int64(clock.now.timeIntervalSince1970)), "jti": "jti-x"]
            claims["events"] = events
            return claims
        }

        @Test("each event type is recognized", arguments: [
            ("email-disabled", AppleServerNotification.EventType.emailDisabled),
            ("email-enabled", .emailEnabled),
            ("consent-revoked", .consentRevoked),
            ("account-delete", .accountDelete),
            ("account-deleted", .accountDelete),
        ])
        func types(name: String, type: AppleServerNotification.EventType) throws {
            let notification = try verify(mint(name))
            #expect(notification.type == type)
            #expect(notification.subject == SimulatedUser.ada.sub)
            #expect(notification.jti == "jti-1")
        }

        @Test("email-disabled carries the relay address, the private flag (sent as a string) and the event time")
        func emailFields() throws {
            let body = try fixture.simulator.mintNotification(
                type: "email-disabled", subject: SimulatedUser.ada.sub, audience: SimulatorFixture.servicesID,
                email: SimulatedUser.ada.privateRelayEmail, isPrivateEmail: true, jti: "j-2", issuedAt: clock.now)
            #expect(try verify(body) == AppleServerNotification(
                type: .emailDisabled, subject: SimulatedUser.ada.sub, email: SimulatedUser.ada.privateRelayEmail,
                isPrivateEmail: true, eventTime: Date(timeIntervalSince1970: clock.now.timeIntervalSince1970.rounded(.down)),
                jti: "j-2"))
        }

        @Test("the payload is shaped like Apple's: events is a JSON string")
        func mintedShape() throws {
            let body = try JSONValue.parse(mint("consent-revoked"))
            let jws = try CompactJWS(parsing: #require(body["payload"]?.stringValue))
            #expect(jws.algorithm == "RS256")
            #expect(jws.keyID == fixture.simulator.currentKeyID)
            let claims = try jws.claims()
            let events = try JSONValue.parse(#require(claims["events"]?.stringValue))
            #expect(events["type"] == "consent-revoked")
            #expect(claims["exp"] == nil)
        }

        @Test("events as an object is accepted too, with is_private_email as a boolean and event_time in ms")
        func eventsAsObject() throws {
            let body = try fixture.simulator.signNotification(claims: claims(events: [
                "type": "email-enabled", "sub": "001.abc", "is_private_email": true, "event_time": 1_508_184_845_000,
            ]))
            let notification = try verify(body)
            #expect(notification.type == .emailEnabled)
            #expect(notification.subject == "001.abc")
            #expect(notification.isPrivateEmail == true)
            #expect(notification.eventTime == Date(timeIntervalSince1970: 1_508_184_845))
            #expect(notification.email == nil)
        }

        @Test("without a jti the SHA-256 of the payload stands in, so a replay is still recognized")
        func jtiFallback() throws {
            let body = try mint("account-delete", jti: nil)
            var claims = claims(events: .string("{\"type\":\"account-delete\",\"sub\":\"001.abc\"}"))
            claims["jti"] = nil
            let noJTI = try fixture.simulator.signNotification(claims: claims)
            let payload = try #require(JSONValue.parse(noJTI)["payload"]?.stringValue)
            #expect(try verify(noJTI).jti == SHA256.hexDigest(payload))
            #expect(try verify(noJTI).jti == verify(noJTI).jti)
            #expect(try verify(body).jti.count == 32, "the simulator makes a random jti when none is given")
        }

        @Test("the issuer is compared exactly, as for identity tokens: a trailing slash is another issuer")
        func issuerTrailingSlash() throws {
            var claims = claims(events: .string("{\"type\":\"account-delete\",\"sub\":\"001.abc\"}"))
            claims["iss"] = .string(fixture.simulator.issuer + "/")
            let body = try fixture.simulator.signNotification(claims: claims)
            #expect(throws: TokenRejection.wrongIssuer(fixture.simulator.issuer + "/")) { try verify(body) }
        }

        @Test("a tampered payload fails the signature; another key is unknown")
        func forged() throws {
            let body = try mint("account-delete")
            let jws = try #require(JSONValue.parse(body)["payload"]?.stringValue)
            let parts = jws.split(separator: ".").map(String.init)
            var claims = try CompactJWS(parsing: jws).claims()
            claims["aud"] = .string(SimulatorFixture.servicesID)
            let tampered = [parts[0], Base64URL.encode(JSONValue.object(claims).serializedBytes()), parts[2]].joined(separator: ".")
            #expect(throws: TokenRejection.badSignature) {
                try verify(JSONValue.object(["payload": .string(tampered)]).serialized())
            }

            let forger = try AppleIDStandIn()
            let forged = try forger.mintNotification(type: "account-delete", subject: SimulatedUser.ada.sub,
                                                     audience: SimulatorFixture.bundleID)
            #expect(throws: TokenRejection.unknownKeyID(forger.currentKeyID)) { try verify(forged) }
        }

        @Test("a notification for someone else's client ID is refused")
        func wrongAudience() throws {
            #expect(throws: TokenRejection.wrongAudience("com.someone.else")) {
                try verify(mint("account-delete", audience: "com.someone.else"))
            }
        }

        @Test("a notification from another issuer is refused")
        func wrongIssuer() throws {
            var claims = claims(events: .string("{\"type\":\"account-delete\",\"sub\":\"001.abc\"}"))
            claims["iss"] = "https://evil.example"
            #expect(throws: TokenRejection.wrongIssuer("https://evil.example")) {
                try verify(fixture.simulator.signNotification(claims: claims))
            }
        }

        @Test("an unknown event type is refused")
        func unknownType() throws {
            #expect(throws: TokenRejection.unknownEventType("account-exploded")) { try verify(mint("account-exploded")) }
        }

        @Test("an expired notification is refused after the leeway")
        func expired() throws {
            let body = try mint("consent-revoked", lifetime: 300)
            clock.advance(by: 300 + 59)
            #expect(try verify(body).type == .consentRevoked)
            clock.advance(by: 2)
            #expect(throws: TokenRejection.expired) { try verify(body) }
        }

        @Test("issued in the future beyond the leeway is refused")
        func future() throws {
            let body = try fixture.simulator.mintNotification(type: "account-delete", subject: "001.abc",
                                                              audience: SimulatorFixture.bundleID,
                                                              issuedAt: clock.now.addingTimeInterval(120))
            #expect(throws: TokenRejection.issuedInFuture) { try verify(body) }
        }

        @Test("an event without sub is refused")
        func missingSubject() throws {
            let body = try fixture.simulator.signNotification(claims: claims(events: .string("{\"type\":\"account-delete\"}")))
            #expect(throws: TokenRejection.missingSubject) { try verify(body) }
        }

        @Test("non-RS256 algorithms are refused before any key is looked up", arguments: ["HS256", "none", "ES256", "RS512"])
        func algorithms(alg: String) throws {
            let body = try fixture.simulator.signNotification(
                claims: claims(events: .string("{\"type\":\"account-delete\",\"sub\":\"001.abc\"}")),
                headerOverrides: ["alg": .string(alg)])
            #expect(throws: TokenRejection.algorithmNotAllowed(alg)) { try verify(body) }
            #expect(fixture.keys.fetches == 0)
        }

        @Test("bodies that are not a notification are malformed", arguments: [
            "", "not json", "{}", "{\"payload\":42}", "{\"payload\":\"garbage\"}", "{\"payload\":\"a.b.c\"}", "[]",
        ])
        func malformed(body: String) {
            do {
                _ = try verify(body)
                Issue.record("accepted \(body)")
            } catch {
                guard case .malformed = error else {
                    Issue.record("expected malformed, got \(error)")
                    return
                }
            }
        }

        @Test("events missing or not JSON is malformed")
        func badEvents() throws {
            for events in [nil, .string("{not json"), .number(3)] as [JSONValue?] {
                let body = try fixture.simulator.signNotification(claims: claims(events: events))
                #expect(throws: TokenRejection.self) { try verify(body) }
            }
        }
    }
}
