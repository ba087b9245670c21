import Foundation
import Testing
@testable import Webhooks

@Suite struct WebhookSecretTests {
    /// The example of standard-webhooks' own test suite (libraries/python/standardwebhooks/tests.py and the
    /// specification's README): the same secret, id, timestamp and body give the same signature.
    @Test func signatureMatchesTheSpecificationsExample() throws {
        let secret = try #require(WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let body = Array(#"{"test": 2432232314}"#.utf8)
        #expect(secret.signature(messageID: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330, body: body)
                == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func secretsThatAreNotWhsecBase64OfTwentyFourBytesAreRefused() {
        #expect(WebhookSecret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") == nil)  // no prefix
        #expect(WebhookSecret("whsec_") == nil)
        #expect(WebhookSecret("whsec_not base64!") == nil)
        #expect(WebhookSecret("whsec_" + Data(repeating: 7, count: 23).base64EncodedString()) == nil)
        #expect(WebhookSecret("whsec_" + Data(repeating: 7, count: 24).base64EncodedString()) != nil)
        #expect(WebhookSecret(WebhookSecret.generate()) != nil)
    }

    @Test func settingsNameTheKeyThatIsWrong() {
        let secret = "whsec_" + Data(repeating: 1, count: 32).base64EncodedString()
        func problem(_ url: String?, _ secret: String?, _ events: String?) -> String? {
            do {
                _ = try WebhookSettings.parse(url: url, secret: secret, events: events)
                return nil
            } catch {
                return error.key
            }
        }
        #expect(problem("http://backend.example.com/hook", secret, nil) == "BRIDGE_WEBHOOK_URL")
        #expect(problem("ftp://127.0.0.1/hook", secret, nil) == "BRIDGE_WEBHOOK_URL")
        #expect(problem(nil, secret, nil) == "BRIDGE_WEBHOOK_URL")
        #expect(problem("https://backend.example.com/hook", nil, nil) == "BRIDGE_WEBHOOK_SECRET")
        #expect(problem("https://backend.example.com/hook", "whsec_c2hvcnQ=", nil) == "BRIDGE_WEBHOOK_SECRET")
        #expect(problem("https://backend.example.com/hook", secret, "member.created,member.exploded") == "BRIDGE_WEBHOOK_EVENTS")
        #expect(problem("https://backend.example.com/hook", secret, "ping") == "BRIDGE_WEBHOOK_EVENTS")
        #expect(problem("http://127.0.0.1:9000/hook", secret, "member.created, member.deleted") == nil)
        #expect(problem("http://[::1]:9000/hook", secret, nil) == nil)
        #expect(problem("https://backend.example.com/hook", secret, nil) == nil)
        #expect(try! WebhookSettings.parse(url: nil, secret: nil, events: nil) == nil)
    }

    @Test func backoffDoublesWithJitterUpToItsCap() {
        let backoff = WebhookBackoff()
        #expect(backoff.delay(afterFailures: 1, random: 0) == 1)
        #expect(backoff.delay(afterFailures: 1, random: 1) == 2)
        #expect(backoff.delay(afterFailures: 3, random: 1) == 8)
        #expect(backoff.delay(afterFailures: 40, random: 1) == 3600)
        #expect(backoff.delay(afterFailures: 40, random: 0) == 1800)
    }
}
