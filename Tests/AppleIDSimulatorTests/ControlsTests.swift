import AppleIDSimulator
import Foundation
import JSON
import Testing
import TestSupport

/// The simulator's own controls below `/__simulator/`, which `apple-signin-bridge simulator` and `notify` use.
@Suite("Simulator controls")
struct ControlsTests {
    @Test("a minted notification is Apple's body, signed with the key the JWKS publishes, for the type, sub and audience asked")
    func mintedNotification() throws {
        let running = try RunningSimulator()
        let answer = try running.post("/__simulator/notifications",
                                      form: [("type", "email-disabled"), ("sub", SimulatedUser.grace.sub), ("aud", "com.example.app")])
        #expect(answer.status == 200)
        let payload = try #require(try JSONValue.parse(answer.body)["payload"]?.stringValue)
        let claims = try running.verifiedClaims(payload)
        #expect(claims["aud"] == "com.example.app")
        let events = try JSONValue.parse(try #require(claims["events"]?.stringValue))
        #expect(events["type"] == "email-disabled")
        #expect(events["sub"] == .string(SimulatedUser.grace.sub))
        #expect(events["email"] == .string(SimulatedUser.grace.privateRelayEmail))
    }

    @Test("an unknown type or a missing sub or audience is a 400, and nothing is signed")
    func refusals() throws {
        let running = try RunningSimulator()
        for form in [[("type", "account-exploded"), ("sub", "s"), ("aud", "a")], [("type", "account-delete"), ("aud", "a")],
                     [("type", "account-delete"), ("sub", "s")]] {
            let answer = try running.post("/__simulator/notifications", form: form)
            #expect(answer.status == 400)
            #expect(!answer.text.contains("payload"))
        }
    }

    @Test("after a first-sign-in reset the next authorization carries the user JSON again")
    func resetFirstSignIns() throws {
        let running = try RunningSimulator()
        #expect(try running.signInFields()["user"] != nil)
        #expect(try running.signInFields()["user"] == nil)
        #expect(try running.post("/__simulator/reset-first-sign-ins", form: []).status == 200)
        #expect(try running.signInFields()["user"] != nil)
        #expect(try running.signInFields()["user"] == nil)
    }
}
