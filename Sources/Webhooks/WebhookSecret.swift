import Foundation
import JOSE

/// A Standard Webhooks signing secret (`whsec_` + base64 of the key) and the signature it makes: `v1,` + base64 of
/// HMAC-SHA256 over `webhook-id.webhook-timestamp.body` (standardwebhooks.com).
public struct WebhookSecret: Sendable {
    public static let prefix = "whsec_"
    /// Fewer key bytes than this are refused: Standard Webhooks asks for 24 to 64.
    public static let minimumKeyBytes = 24

    let key: [UInt8]

    /// Nil unless `text` is `whsec_` followed by standard base64 of at least `minimumKeyBytes` bytes.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        let prefix = Array(Self.prefix.utf8)
        guard bytes.count > prefix.count, bytes.prefix(prefix.count).elementsEqual(prefix),
              let key = Data(base64Encoded: String(decoding: bytes.dropFirst(prefix.count), as: UTF8.self)),
              key.count >= Self.minimumKeyBytes else { return nil }
        self.key = Array(key)
    }

    /// The `webhook-signature` header's value for one attempt.
    public func signature(messageID: String, timestamp: Int64, body: [UInt8]) -> String {
        let signed = Array("\(messageID).\(timestamp).".utf8) + body
        return "v1," + Data(HMACSHA256.authenticate(key: key, message: signed)).base64EncodedString()
    }

    /// A new secret in the form BRIDGE_WEBHOOK_SECRET takes (32 random bytes).
    public static func generate() -> String {
        prefix + Data(SecureRandom.bytes(32)).base64EncodedString()
    }
}
