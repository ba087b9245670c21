import Foundation

extension SQLTransaction {
    // MARK: - Codes the Android relay handed over

    func recordRelayedCode(codeHash: String, redirectURI: String, expiresAt: Date) throws {
        try run("""
            INSERT INTO relayed_codes (code_hash, redirect_uri, expires_at) VALUES ($1, $2, $3)
            ON CONFLICT (code_hash) DO NOTHING
            """, [.text(codeHash), .text(redirectURI), .date(expiresAt)])
    }

    func relayedCodeRedirectURI(codeHash: String, now: Date) throws -> String? {
        try query("SELECT redirect_uri FROM relayed_codes WHERE code_hash = $1 AND expires_at > $2",
                  [.text(codeHash), .date(now)]) { try $0.requiredText("redirect_uri") }.first
    }
}
