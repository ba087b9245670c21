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
        var read = ClaimValues()
        for (name, value) in claims { read.set(name, value) }
        try self.init(read)
    }

    /// The same claims from the members of the JSON object in document order (`JSONValue.parseObjectMembers`):
    /// one pass over the few members a token has, without a dictionary of them.
    public init(members: [(key: String, value: JSONValue)]) throws(TokenRejection) {
        var read = ClaimValues()
        for (name, value) in members { read.set(name, value) }
        try self.init(read)
    }

    private init(_ claims: ClaimValues) throws(TokenRejection) {
        issuer = claims.iss?.stringValue ?? ""
        audiences = Self.audiences(claims.aud)
        subject = Self.nonEmptyString(claims.sub)
        issuedAt = try NumericDate.decode(claims.iat, claim: "iat")
        expiresAt = try NumericDate.decode(claims.exp, claim: "exp")
        authTime = try NumericDate.decode(claims.authTime, claim: "auth_time")
        nonce = Self.nonEmptyString(claims.nonce)
        codeHash = claims.cHash?.stringValue
        email = Self.nonEmptyString(claims.email)
        emailVerified = Self.flag(claims.emailVerified)
        isPrivateEmail = Self.flag(claims.isPrivateEmail)
        realUserStatus = claims.realUserStatus?.doubleValue.flatMap { Int(exactly: $0) }
        jwtID = Self.nonEmptyString(claims.jti)
        transferSubject = Self.nonEmptyString(claims.transferSub)
        events = claims.events
    }

    /// The raw value of each claim this server reads; the others are ignored.
    private struct ClaimValues {
        var iss, aud, sub, iat, exp, authTime, nonce, cHash, email, emailVerified, isPrivateEmail, realUserStatus, jti,
            transferSub, events: JSONValue?

        /// By length first: a `switch` over fifteen string literals compared the name with each in turn.
        mutating func set(_ name: String, _ value: JSONValue) {
            switch name.utf8.count {
            case 3:
                switch name {
                case "iss": iss = value
                case "aud": aud = value
                case "sub": sub = value
                case "iat": iat = value
                case "exp": exp = value
                case "jti": jti = value
                default: break
                }
            case 5:
                if name == "nonce" { nonce = value } else if name == "email" { email = value }
            case 6:
                if name == "c_hash" { cHash = value } else if name == "events" { events = value }
            case 9:
                if name == "auth_time" { authTime = value }
            case 12:
                if name == "transfer_sub" { transferSub = value }
            case 14:
                if name == "email_verified" { emailVerified = value }
            case 16:
                if name == "is_private_email" { isPrivateEmail = value } else if name == "real_user_status" { realUserStatus = value }
            default:
                break
            }
        }
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
