import Foundation

/// The OpenID provider's rows. Every backend implements these with the same semantics as the rest of
/// `StoreTransaction` (whole unix seconds; expired means `expiresAt <= now`).
public protocol OpenIDProviderTransaction {
    func insertProviderSigningKey(_ key: ProviderSigningKeyRecord) throws
    /// Every stored key, oldest first.
    func providerSigningKeys() throws -> [ProviderSigningKeyRecord]
    /// Marks every key other than `keyID` that is not retired yet as retired at `now`; returns how many.
    @discardableResult func retireProviderSigningKeys(except keyID: String, now: Date) throws -> Int

    /// Kept until its login attempt goes (deleted with it).
    func insertProviderAuthorization(_ authorization: ProviderAuthorization) throws
    func providerAuthorization(stateHash: String) throws -> ProviderAuthorization?

    /// Also removes codes that expired more than an hour before `code.createdAt`.
    func insertAuthorizationCode(_ code: AuthorizationCodeRecord) throws
    /// Atomic: of concurrent callers, exactly one gets `.redeemed`.
    func redeemAuthorizationCode(codeHash: String, now: Date) throws -> CodeRedemption
    func setAuthorizationCodeFamily(codeHash: String, familyID: String) throws

    func insertProviderGrant(_ grant: ProviderGrant) throws
    func providerGrant(familyID: String) throws -> ProviderGrant?
    /// The family of a refresh token, rotated or not; nil when unknown.
    func refreshTokenFamily(tokenHash: String) throws -> String?
}
