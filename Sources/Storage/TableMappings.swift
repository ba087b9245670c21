import Foundation

// One named mapping per table: the column names every backend's schema uses and the
// model value a row of them becomes.

extension TableMapping where Model == User {
    package static let users = TableMapping(table: "users", columns: [
        "id", "provider", "provider_user_id", "email", "is_private_email", "email_verified",
        "display_name", "created_at", "updated_at", "email_forwarding_enabled",
    ]) { row in
        User(id: try row.requiredInteger("id"), provider: try row.requiredText("provider"),
             providerUserID: try row.requiredText("provider_user_id"), email: try row.text("email"),
             isPrivateEmail: try row.bool("is_private_email"), emailVerified: try row.bool("email_verified"),
             displayName: try row.text("display_name"), createdAt: try row.date("created_at"),
             updatedAt: try row.date("updated_at"), emailForwardingEnabled: try row.bool("email_forwarding_enabled"))
    }
}

extension TableMapping where Model == LoginAttempt {
    package static let loginAttempts = TableMapping(table: "login_attempts", columns: [
        "state", "nonce", "binding_hash", "created_at", "expires_at", "consumed_at",
    ]) { row in
        LoginAttempt(state: try row.requiredText("state"), nonce: try row.requiredText("nonce"),
                     bindingHash: try row.requiredText("binding_hash"), createdAt: try row.date("created_at"),
                     expiresAt: try row.date("expires_at"), consumedAt: try row.optionalDate("consumed_at"))
    }
}

extension TableMapping where Model == ProviderAuthorization {
    package static let providerAuthorizations = TableMapping(table: "provider_authorizations", columns: [
        "state_hash", "client_id", "redirect_uri", "client_state", "nonce", "code_challenge", "scope", "created_at",
        "response_mode",
    ]) { row in
        ProviderAuthorization(stateHash: try row.requiredText("state_hash"), clientID: try row.requiredText("client_id"),
                              redirectURI: try row.requiredText("redirect_uri"), clientState: try row.text("client_state"),
                              nonce: try row.text("nonce"), codeChallenge: try row.text("code_challenge"),
                              scope: try row.requiredText("scope"), createdAt: try row.date("created_at"),
                              responseMode: try row.requiredText("response_mode"))
    }
}

extension TableMapping where Model == Session {
    package static let sessions = TableMapping(table: "sessions", columns: [
        "id_hash", "user_id", "flow", "nonce_verified", "created_at", "expires_at",
    ]) { row in
        Session(idHash: try row.requiredText("id_hash"), userID: try row.requiredInteger("user_id"),
                flow: try row.requiredText("flow"), nonceVerified: try row.bool("nonce_verified"),
                createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"))
    }
}

extension TableMapping where Model == RefreshToken {
    /// Also the columns of `revoked_refresh_tokens`, which keeps a revoked family's tokens.
    package static let refreshTokens = TableMapping(table: "refresh_tokens", columns: [
        "token_hash", "family_id", "session_id_hash", "user_id", "created_at", "expires_at", "rotated_at",
    ]) { row in
        RefreshToken(tokenHash: try row.requiredText("token_hash"), familyID: try row.requiredText("family_id"),
                     sessionIDHash: try row.requiredText("session_id_hash"),
                     userID: try row.requiredInteger("user_id"), createdAt: try row.date("created_at"),
                     expiresAt: try row.date("expires_at"), rotatedAt: try row.optionalDate("rotated_at"))
    }
}

extension TableMapping where Model == AppleTokenRecord {
    package static let appleTokens = TableMapping(table: "apple_tokens", columns: [
        "user_id", "client_id", "encrypted_refresh_token", "updated_at",
    ]) { row in
        AppleTokenRecord(userID: try row.requiredInteger("user_id"), clientID: try row.requiredText("client_id"),
                         encryptedRefreshToken: try row.requiredBlob("encrypted_refresh_token"),
                         updatedAt: try row.date("updated_at"))
    }
}

extension TableMapping where Model == PendingRevocation {
    package static let pendingRevocations = TableMapping(table: "pending_revocations", columns: [
        "id", "client_id", "encrypted_token", "token_type_hint", "attempts", "next_attempt_at", "last_error",
        "created_at",
    ]) { row in
        PendingRevocation(id: try row.requiredInteger("id"), clientID: try row.requiredText("client_id"),
                          encryptedToken: try row.requiredBlob("encrypted_token"),
                          tokenTypeHint: try row.requiredText("token_type_hint"),
                          attempts: Int(try row.requiredInteger("attempts")),
                          nextAttemptAt: try row.date("next_attempt_at"), lastError: try row.text("last_error"),
                          createdAt: try row.date("created_at"))
    }
}

extension TableMapping where Model == ProviderSigningKeyRecord {
    package static let providerSigningKeys = TableMapping(table: "provider_signing_keys", columns: [
        "kid", "public_jwk", "sealed_private_key", "created_at", "retired_at",
    ]) { row in
        ProviderSigningKeyRecord(keyID: try row.requiredText("kid"), publicJWK: try row.requiredText("public_jwk"),
                                 sealedPrivateKey: try row.requiredBlob("sealed_private_key"),
                                 createdAt: try row.date("created_at"), retiredAt: try row.optionalDate("retired_at"))
    }
}

extension TableMapping where Model == AuthorizationCodeRecord {
    package static let authorizationCodes = TableMapping(table: "authorization_codes", columns: [
        "code_hash", "client_id", "redirect_uri", "code_challenge", "scope", "nonce", "user_id", "auth_time",
        "created_at", "expires_at", "redeemed_at", "family_id",
    ]) { row in
        AuthorizationCodeRecord(codeHash: try row.requiredText("code_hash"), clientID: try row.requiredText("client_id"),
                                redirectURI: try row.requiredText("redirect_uri"),
                                codeChallenge: try row.text("code_challenge"), scope: try row.requiredText("scope"),
                                nonce: try row.text("nonce"), userID: try row.requiredInteger("user_id"),
                                authTime: try row.date("auth_time"), createdAt: try row.date("created_at"),
                                expiresAt: try row.date("expires_at"), redeemedAt: try row.optionalDate("redeemed_at"),
                                familyID: try row.text("family_id"))
    }
}

extension TableMapping where Model == ProviderGrant {
    package static let providerGrants = TableMapping(table: "provider_grants", columns: [
        "family_id", "client_id", "user_id", "scope", "auth_time", "created_at",
    ]) { row in
        ProviderGrant(familyID: try row.requiredText("family_id"), clientID: try row.requiredText("client_id"),
                      userID: try row.requiredInteger("user_id"), scope: try row.requiredText("scope"),
                      authTime: try row.date("auth_time"), createdAt: try row.date("created_at"))
    }
}

extension TableMapping where Model == MemberTransfer {
    package static let memberTransfers = TableMapping(table: "member_transfers", columns: [
        "user_id", "transfer_sub", "target_team", "exported_at", "imported_at", "new_sub", "import_failure",
    ]) { row in
        MemberTransfer(userID: try row.requiredInteger("user_id"), transferSub: try row.requiredText("transfer_sub"),
                       targetTeam: try row.requiredText("target_team"), exportedAt: try row.date("exported_at"),
                       importedAt: try row.optionalDate("imported_at"), newSub: try row.text("new_sub"),
                       importFailure: try row.text("import_failure"))
    }
}

extension TableMapping where Model == MemberGroup {
    package static let memberGroups = TableMapping(table: "member_groups", columns: ["user_id", "group_name", "joined_at"]) { row in
        MemberGroup(userID: try row.requiredInteger("user_id"), name: try row.requiredText("group_name"),
                    joinedAt: try row.date("joined_at"))
    }
}

extension TableMapping where Model == GroupInvitation {
    package static let groupInvitations = TableMapping(table: "group_invitations", columns: [
        "token_hash", "group_name", "created_at", "expires_at", "redeemed_at",
    ]) { row in
        GroupInvitation(tokenHash: try row.requiredText("token_hash"), groupName: try row.requiredText("group_name"),
                        createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
                        redeemedAt: try row.optionalDate("redeemed_at"))
    }
}
