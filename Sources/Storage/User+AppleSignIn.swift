import Foundation

extension User {
    /// The user as it should be stored after another verified sign-in.
    ///
    /// Email and its flags follow the newer token; a token without an email keeps the
    /// stored one (Apple may omit it). The display name is only filled in when none is
    /// known: Apple sends it on the first sign-in only, so a later empty or different
    /// name never replaces it. `updatedAt` moves only when something changed.
    /// Backend-independent so every `Store` applies the same rules.
    package func applyingSignIn(_ profile: AppleUserProfile, now: Date) -> User {
        var updated = self
        if let email = profile.email.nonBlank {
            updated.email = email
            updated.emailVerified = profile.emailVerified
            updated.isPrivateEmail = profile.isPrivateEmail
        }
        if displayName.nonBlank == nil, let name = profile.displayName.nonBlank {
            updated.displayName = name
        }
        if updated != self {
            updated.updatedAt = now
        }
        return updated
    }
}

extension User {
    /// The user a first sign-in creates (its `id` is assigned by the store). The email
    /// flags only count when there is an email; blank strings are stored as missing.
    package static func firstSignIn(_ profile: AppleUserProfile, now: Date) -> User {
        let email = profile.email.nonBlank
        return User(id: 0, provider: appleProvider, providerUserID: profile.sub, email: email,
                    isPrivateEmail: email != nil && profile.isPrivateEmail,
                    emailVerified: email != nil && profile.emailVerified,
                    displayName: profile.displayName.nonBlank, createdAt: now, updatedAt: now)
    }
}

extension Optional<String> {
    /// The trimmed string, or nil when it is missing or only whitespace.
    package var nonBlank: String? {
        guard var string = self, !string.isEmpty else { return nil }
        // Nothing to trim when both ends are visible ASCII: the usual name or address, which then skips Foundation's
        // CharacterSet walk (1.6 % of a sign-in's instructions, for two fields).
        func isVisibleASCII(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }
        if string.withUTF8({ isVisibleASCII($0[0]) && isVisibleASCII($0[$0.count - 1]) }) { return string }
        let trimmed = string.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}
