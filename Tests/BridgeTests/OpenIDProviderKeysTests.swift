import Bridge
import Foundation
import HTTPServer
import JOSE
import JSON
import OpenIDProvider
import OperatorCommands
import Testing
import TestSupport

@Suite("OpenID provider keys and clients file", .serialized)
struct OpenIDProviderKeysTests {
    let executable = ExecutableTests()
    func validEnvironment(port: Int, directory: String) -> [String: String] {
        executable.validEnvironment(port: port, directory: directory)
    }
    func temporaryDirectory() throws -> String { try executable.temporaryDirectory() }

    func publishedKeyIDs(_ port: Int) throws -> [String] {
        let jwks = try JSONValue.parse(try RawHTTPClient.request(port: port, path: ProviderEndpoints.jwks).body)
        return (jwks["keys"]?.arrayValue ?? []).compactMap { $0["kid"]?.stringValue }
    }

    @Test("a malformed clients file stops start-up with one line naming the client")
    func malformedClientsFile() throws {
        let directory = try temporaryDirectory()
        let file = directory + "/clients.json"
        try #"[{"client_id": "shop-app", "name": "Shop", "redirect_uris": ["http://shop.example.com/cb"]}]"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        var environment = validEnvironment(port: freeLoopbackPort(), directory: directory)
        environment["BRIDGE_CLIENTS_FILE"] = file
        let result = try RunningProcess(["serve"], environment: environment).wait()
        #expect(result.status != 0)
        let lines = result.errors.split(separator: "\n").filter { !$0.hasPrefix("time=") }
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("configuration error: BRIDGE_CLIENTS_FILE client \"shop-app\": redirect URI") == true,
                "stderr: \(result.errors)")
    }

    @Test("a client registered as `api`, the JSON API's own id, stops start-up with one line naming the key and the id")
    func reservedClientID() throws {
        let file = try temporaryDirectory() + "/clients.json"
        try #"[{"client_id": "api", "name": "Looks like the API", "redirect_uris": ["https://shop.example.com/cb"]}]"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let problem = configurationProblem(["BRIDGE_CLIENTS_FILE": file])
        #expect(problem?.description
                == #"configuration error: BRIDGE_CLIENTS_FILE client "api": client_id "api" is reserved: the server uses it itself"#)
    }

    @Test("`keys rotate` adds a key that signs from then on; the old one stays published")
    func rotate() throws {
        let directory = try temporaryDirectory()
        let port = freeLoopbackPort()
        let environment = validEnvironment(port: port, directory: directory)
        let first = try RunningProcess(["serve"], environment: environment)
        for _ in 0..<100 where (try? RawHTTPClient.request(port: port, path: "/healthz")) == nil { usleep(50_000) }
        let before = try publishedKeyIDs(port)
        kill(first.process.processIdentifier, SIGTERM)
        _ = first.wait()
        #expect(before.count == 1)

        let rotation = try RunningProcess(["keys", "rotate"], environment: environment).wait()
        #expect(rotation.status == 0, "stderr: \(rotation.errors)")
        #expect(rotation.output.hasPrefix("new signing key "))
        #expect(!rotation.output.contains("PRIVATE"))

        let second = try RunningProcess(["serve"], environment: environment)
        defer { kill(second.process.processIdentifier, SIGTERM); _ = second.wait() }
        for _ in 0..<100 where (try? RawHTTPClient.request(port: port, path: "/healthz")) == nil { usleep(50_000) }
        let after = try publishedKeyIDs(port)
        #expect(after.count == 2 && after.contains(before[0]))
        let newKeyID = try #require(after.first { $0 != before[0] })
        #expect(rotation.output.contains(newKeyID))
    }

    @Test("a changed BRIDGE_SECRET_KEY cannot open the stored signing key: start-up stops with one line naming it")
    func changedSecret() throws {
        let directory = try temporaryDirectory()
        let port = freeLoopbackPort()
        var environment = validEnvironment(port: port, directory: directory)
        let first = try RunningProcess(["serve"], environment: environment)
        for _ in 0..<100 where (try? RawHTTPClient.request(port: port, path: "/healthz")) == nil { usleep(50_000) }
        kill(first.process.processIdentifier, SIGTERM)
        _ = first.wait()
        environment["BRIDGE_SECRET_KEY"] = Data(repeating: 9, count: 32).base64EncodedString()
        let second = try RunningProcess(["serve"], environment: environment).wait()
        #expect(second.status != 0)
        let lines = second.errors.split(separator: "\n").filter { !$0.hasPrefix("time=") }
        #expect(lines.count == 1 && lines.first?.hasPrefix("configuration error: BRIDGE_SECRET_KEY cannot open") == true,
                "stderr: \(second.errors)")
    }

    @Test("after a rotation tokens carry the new kid and tokens signed before still work")
    func rotationInRunningServer() throws {
        let party = try RelyingParty()
        let old = try party.redeem(try party.code())
        let oldAccess = try #require(old.body["access_token"]?.stringValue)
        let oldKeyID = try CompactJWS(parsing: oldAccess).keyID
        let configuration = party.harness.app.configuration
        _ = try ProviderKeyCommand.rotate(configuration: configuration, logger: .silent)
        party.harness.clock.advance(by: 61)  // running instances look for new keys every minute
        let fresh = try party.redeem(try party.code())
        let freshKeyID = try CompactJWS(parsing: try #require(fresh.body["id_token"]?.stringValue)).keyID
        #expect(freshKeyID != nil && freshKeyID != oldKeyID)
        let jwks = try JSONValue.parse(try party.harness.request(path: ProviderEndpoints.jwks).body)
        #expect((jwks["keys"]?.arrayValue ?? []).count == 2)
        #expect(try party.harness.api(ProviderEndpoints.userinfo, method: "GET", bearer: oldAccess).status == 200)
    }
}
