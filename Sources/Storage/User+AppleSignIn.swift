import Foundation

extension User {
    /// The user as it should be stored after another verified sign-in.
    ///
    /// Email and its flags follow the newer token; a token without an email keeps the
    /// stored one (Apple may omit it). The display name is only filled in when none is
    /// known: Apple sends it on the first sign-in only, so a later empty or different
    /// name never replaces it. `updatedAt` moves only when something changed.
    /// Backend-independent so every `Store` applies the same rules.
    func applyingSignIn(_ profile: AppleUserProfile, now: Date) -> User {
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

extension Optional<String> {
    /// The trimmed string, or nil when it is missing or only whitespace.
    var nonBlank: String? {
        guard let trimmed = self?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else {
            return nil
        }
        return trimmed
    }
}
