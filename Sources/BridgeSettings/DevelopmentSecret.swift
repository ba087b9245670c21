import Foundation
import JOSE

/// In development only: a secret key generated once and kept in `data/dev-secret.key` (mode 0600),
/// so sessions survive restarts without any setup.
package enum DevelopmentSecret {
    package static func loadOrCreate(at path: String) throws -> [UInt8] {
        if let text = try? String(contentsOfFile: path, encoding: .utf8),
           let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), data.count >= 32 {
            return Array(data)
        }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let key = SecureRandom.bytes(32)
        guard FileManager.default.createFile(atPath: path, contents: Data((Data(key).base64EncodedString() + "\n").utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError("BRIDGE_SECRET_KEY", "is not set and \(path) cannot be written")
        }
        return key
    }
}
