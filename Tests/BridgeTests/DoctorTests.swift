import AppleID
import AppleIDSimulator
import Bridge
import Foundation
import HTTPServer
import OperatorCommands
import Testing
import TestSupport

@Suite("apple-signin-bridge doctor")
struct DoctorTests {
    func environment(publicURL: String, keyPath: String, teamID: String = TestClientKey.teamID,
                     appleIDURL: String = "https://appleid.apple.com") -> [String: String] {
        TestClientKey.settings(keyPath, teamID: teamID).merging([
            "BRIDGE_PUBLIC_URL": publicURL, "BRIDGE_SECRET_KEY": Data(repeating: 1, count: 32).base64EncodedString(),
            "APPLE_SERVICES_ID": "com.example.web", "APPLE_BUNDLE_IDS": "com.example.app", "APPLE_ID_URL": appleIDURL,
        ]) { _, new in new }
    }

    func lines(_ findings: [Doctor.Finding]) -> String { findings.map(\.description).joined(separator: "\n") }

    @Test("a correct configuration: every line ok, and the Return URL to register")
    func healthy() throws {
        let key = try TestClientKey(directory: try keyDirectory())
        let findings = Doctor.run(environment: environment(publicURL: "https://login.example.com", keyPath: key.path),
                                  configFile: nil, online: false)
        #expect(findings.allSatisfy { $0.level == .ok }, "\(lines(findings))")
        #expect(findings.contains { $0.message.contains("register exactly this as a Return URL") && $0.message.contains("https://login.example.com/apple_redirect") })
    }

    @Test("APPLE_JS_POPUP without APPLE_JS_SDK is an error line naming both; with it, the configuration loads")
    func popupWithoutSDK() throws {
        let key = try TestClientKey(directory: try keyDirectory())
        var settings = environment(publicURL: "https://login.example.com", keyPath: key.path)
        settings["APPLE_JS_POPUP"] = "1"
        let findings = Doctor.run(environment: settings, configFile: nil, online: false)
        #expect(findings.contains { $0.level == .error && $0.message.hasPrefix("APPLE_JS_POPUP") && $0.message.contains("APPLE_JS_SDK") },
                "\(lines(findings))")
        settings["APPLE_JS_SDK"] = "1"
        let fixed = Doctor.run(environment: settings, configFile: nil, online: false)
        #expect(fixed.allSatisfy { $0.level == .ok }, "\(lines(fixed))")
    }

    @Test("an IP address, localhost or http redirect_uri is named with what to change", arguments: [
        "https://203.0.113.7", "https://localhost", "http://login.example.com",
    ])
    func badRedirect(publicURL: String) throws {
        let key = try TestClientKey(directory: try keyDirectory())
        let findings = Doctor.run(environment: environment(publicURL: publicURL, keyPath: key.path), configFile: nil, online: false)
        #expect(findings.contains { $0.level == .error && $0.message.contains("redirect_uri") && $0.message.contains("BRIDGE_PUBLIC_URL") },
                "\(lines(findings))")
    }

    @Test("a key readable by others, or on another curve, is an error line")
    func badKey() throws {
        let directory = try keyDirectory()
        let open = try TestClientKey(directory: directory, mode: 0o644)
        let findings = Doctor.run(environment: environment(publicURL: "https://login.example.com", keyPath: open.path),
                                  configFile: nil, online: false)
        #expect(findings.contains { $0.level == .error && $0.message.contains("chmod 600") }, "\(lines(findings))")
    }

    @Test("online: Apple's keys are reachable and the client secret is accepted — or invalid_client is explained")
    func online() throws {
        let running = try RunningSimulator()
        defer { withExtendedLifetime(running) {} }  // keep it listening until the test ends
        let simulator = running.simulator
        let key = try TestClientKey(directory: try keyDirectory())
        simulator.registerClientKey(teamID: TestClientKey.teamID, keyID: TestClientKey.keyID, publicKey: key.key.publicKey)
        let url = running.url

        let good = Doctor.run(environment: environment(publicURL: "https://login.example.com", keyPath: key.path, appleIDURL: url),
                              configFile: nil, online: true)
        #expect(good.contains { $0.level == .ok && $0.message.hasPrefix("Apple's keys are reachable") }, "\(lines(good))")
        #expect(good.contains { $0.level == .ok && $0.message == "Apple accepts the client secret for com.example.web" }, "\(lines(good))")
        #expect(good.contains { $0.level == .ok && $0.message == "Apple accepts the client secret for com.example.app" }, "\(lines(good))")

        let wrongTeam = Doctor.run(environment: environment(publicURL: "https://login.example.com", keyPath: key.path,
                                                            teamID: "WRONG12345", appleIDURL: url),
                                   configFile: nil, online: true)
        #expect(wrongTeam.contains { $0.level == .error && $0.message.contains("invalid_client") && $0.message.contains("APPLE_TEAM_ID") },
                "\(lines(wrongTeam))")
    }
}
