import AppleID
import Foundation
import JOSE
import Testing
import TestSupport

extension AppleIDTests {
    @Suite("Loading the .p8 key")
    struct ClientKeyLoading {
        static let opensslPath = "/usr/bin/openssl"

        static func load(_ path: String) throws(ClientKeyError) -> AppleClientKey {
            try AppleClientKey.load(teamID: "TEAM123456", keyID: "KEY1234567", path: path)
        }

        /// Runs `openssl genpkey` for curves JOSE cannot generate.
        static func opensslKey(curve: String) throws -> String {
            let process = try ChildProcess(
                executable: opensslPath, arguments: ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:\(curve)"],
                environment: ProcessInfo.processInfo.environment, standardError: .discard)
            let data = process.standardOutput?.readDataToEndOfFile() ?? Data()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0)
            return String(decoding: data, as: UTF8.self)
        }

        @Test("a P-256 PKCS#8 key with mode 0600 loads and keeps its team and key IDs")
        func loads() throws {
            let file = try KeyFile.generated()
            defer { file.remove() }
            let key = try Self.load(file.path)
            #expect(key.teamID == "TEAM123456")
            #expect(key.keyID == "KEY1234567")
        }

        @Test("a missing file says so and where to get the key")
        func missing() throws {
            let path = NSTemporaryDirectory() + "no-such-dir-\(UUID().uuidString)/AuthKey.p8"
            #expect(throws: ClientKeyError.missing(path: path)) { try Self.load(path) }
            #expect(ClientKeyError.missing(path: path).description
                == "\(path) does not exist: download the key (.p8) from Certificates, Identifiers & Profiles → Keys and set APPLE_PRIVATE_KEY_PATH to it")
        }

        @Test("a key readable by group or others is refused with the chmod to run", arguments: [0o644, 0o640, 0o604] as [mode_t])
        func openToOthers(mode: mode_t) throws {
            let file = try KeyFile.generated(mode: mode)
            defer { file.remove() }
            #expect(throws: ClientKeyError.openToOthers(path: file.path, mode: UInt32(mode))) { try Self.load(file.path) }
            if mode == 0o644 {
                #expect(ClientKeyError.openToOthers(path: file.path, mode: 0o644).description
                    == "\(file.path) is readable by group or others (mode 0644): run chmod 600 \(file.path)")
            }
        }

        @Test("group-writable counts too, and says writable")
        func groupWritable() throws {
            let file = try KeyFile.generated(mode: 0o620)
            defer { file.remove() }
            do {
                _ = try Self.load(file.path)
                Issue.record("loaded a group-writable key")
            } catch {
                #expect(error == .openToOthers(path: file.path, mode: 0o620))
                #expect(error.description.contains("writable by group or others (mode 0620)"))
            }
        }

        @Test("a directory is unreadable as a key")
        func directory() throws {
            let file = try KeyFile.generated()
            defer { file.remove() }
            #expect(throws: ClientKeyError.unreadable(path: file.directory, reason: "not a regular file")) {
                try Self.load(file.directory)
            }
        }

        @Test("garbage, an SEC1 or encrypted PEM, and an empty file are not PKCS#8 private keys",
              arguments: ["not a key at all",
                          "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
                          "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n",
                          "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n",
                          ""])
        func garbage(contents: String) throws {
            let file = try KeyFile(contents: contents)
            defer { file.remove() }
            #expect(throws: ClientKeyError.notPKCS8PrivateKey(path: file.path)) { try Self.load(file.path) }
            #expect(ClientKeyError.notPKCS8PrivateKey(path: file.path).description
                == "\(file.path) is not a PEM PKCS#8 private key (-----BEGIN PRIVATE KEY-----): use the .p8 file exactly as Apple issued it, unencrypted")
        }

        @Test("a P-384 key is refused as not P-256, without key bytes in the message",
              .enabled(if: FileManager.default.isExecutableFile(atPath: opensslPath)))
        func p384() throws {
            let pem = try Self.opensslKey(curve: "P-384")
            let file = try KeyFile(contents: pem)
            defer { file.remove() }
            do {
                _ = try Self.load(file.path)
                Issue.record("loaded a P-384 key")
            } catch {
                guard case let .notP256(path, reason) = error else {
                    Issue.record("expected notP256, got \(error)")
                    return
                }
                #expect(path == file.path)
                #expect(reason.contains("secp384r1"))
                #expect(error.description.hasPrefix("\(file.path) is not a P-256 key ("))
                Self.expectNoKeyMaterial(error.description, pem: pem)
            }
        }

        @Test("an RSA key is refused as not P-256")
        func rsa() throws {
            let pem = try RSAPrivateKey.generate().pemString()
            let file = try KeyFile(contents: pem)
            defer { file.remove() }
            do {
                _ = try Self.load(file.path)
                Issue.record("loaded an RSA key")
            } catch {
                guard case .notP256 = error else {
                    Issue.record("expected notP256, got \(error)")
                    return
                }
                Self.expectNoKeyMaterial(error.description, pem: pem)
            }
        }

        static func expectNoKeyMaterial(_ message: String, pem: String) {
            let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }
            for line in body where line.count >= 16 {
                #expect(!message.contains(line.prefix(16)))
            }
        }
    }
}
