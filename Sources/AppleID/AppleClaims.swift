import Foundation
import JSON

/// The claims of a JWT Apple signed (an identity token or a server notification), decoded once: every claim
/// this server reads is type- and range-checked here, so the rules that follow work on plain values.
public struct AppleClaims: Sendable, Equatable {
    public var issuer: String
    /// `aud` as sent: a string becomes one entry. Which of them may be accepted is the policy's rule.
    public var audiences: [String]
    public var subject: String?
    public var issuedAt: Date?
    public var expiresAt: Date?
    public var authTime: Date?
    public var nonce: String?
    public var codeHash: String?
    public var email: String?
    public var emailVerified: Bool?
    public var isPrivateEmail: Bool?
    public var realUserStatus: Int?
    public var jwtID: String?
    /// During an app's transfer to another team, Apple's identifier of the person for that transfer.
    public var transferSubject: String?
    /// Notifications only: Apple documents it as a JSON string holding an object.
    public var events: JSONValue?

    public init(_ claims: [String: JSONValue]) throws(TokenRejection) {
        issuer = claims["iss"]?.stringValue ?? ""
        audiences = Self.audiences(claims["aud"])
        subject = Self.nonEmptyString(claims["sub"])
        issuedAt = try NumericDate.decode(claims["iat"], claim: "iat")
        expiresAt = try NumericDate.decode(claims["exp"], claim: "exp")
        authTime = try NumericDate.decode(claims["auth_time"], claim: "auth_time")
        nonce = Self.nonEmptyString(claims["nonce"])
        codeHash = claims["c_hash"]?.stringValue
        email = Self.nonEmptyString(claims["email"])
        emailVerified = Self.flag(claims["email_verified"])
        isPrivateEmail = Self.flag(claims["is_private_email"])
        realUserStatus = claims["real_user_status"]?.doubleValue.flatMap { Int(exactly: $0) }
        jwtID = Self.nonEmptyString(claims["jti"])
        transferSubject = Self.nonEmptyString(claims["transfer_sub"])
        events = claims["events"]
    }

    /// A string or an array of strings; anything else names no audience (and so matches none).
    private static func audiences(_ value: JSONValue?) -> [String] {
        switch value {
        case let .string(audience)?: [audience]
        case let .array(entries)?: entries.map { $0.stringValue ?? "" }
        default: []
        }
    }

    static func nonEmptyString(_ value: JSONValue?) -> String? {
        guard let text = value?.stringValue, !text.isEmpty else { return nil }
        return text
    }

    /// Apple sends `email_verified`, `is_private_email` and the like both as JSON booleans and as the strings
    /// "true"/"false"; anything else is no answer.
    static func flag(_ value: JSONValue?) -> Bool? {
        switch value {
        case let .bool(flag)?: flag
        case let .string(text)?: text.lowercased() == "true" ? true : text.lowercased() == "false" ? false : nil
        default: nil
        }
    }
}
