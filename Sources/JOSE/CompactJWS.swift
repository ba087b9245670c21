import JSON
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A compact-serialized JWS (`header.payload.signature`, RFC 7515 §7.1), split and decoded
/// but NOT verified. Nothing in the header is trusted: call `requireAlgorithm(in:)` before
/// choosing a key, then verify `signature` over `signingInput`.
public struct CompactJWS: Sendable {
    public static let defaultMaxLength = 16_384

    /// The protected header's members in order. Kept as read: a token's header has two or three, and looking them
    /// up in a dictionary built for the purpose cost more than scanning them.
    public let headerMembers: [(key: String, value: JSONValue)]
    /// The protected header; always a JSON object.
    public var header: JSONValue { .object(Dictionary(uniqueKeysWithValues: headerMembers.lazy.map { ($0.key, $0.value) })) }
    /// The decoded payload bytes (for a JWT, the claims JSON).
    public let payload: [UInt8]
    /// The decoded signature bytes; empty for an unsecured (`alg: none`) token.
    public let signature: [UInt8]
    /// The ASCII bytes of `header.payload` exactly as they appeared in the token.
    public let signingInput: [UInt8]

    /// The header's `alg`, if it is a string.
    public var algorithm: String? { headerValue("alg")?.stringValue }
    /// The header's `kid`, if it is a string.
    public var keyID: String? { headerValue("kid")?.stringValue }

    /// The header member called `name`.
    public func headerValue(_ name: String) -> JSONValue? { headerMembers.first { $0.key == name }?.value }

    @inlinable
    public init(parsing token: some StringProtocol, maxLength: Int = CompactJWS.defaultMaxLength) throws(JOSEError) {
        self = try withContiguousBytes(token.utf8) { bytes throws(JOSEError) in
            try CompactJWS(bytes: bytes, maxLength: maxLength)
        }
    }

    @usableFromInline
    init(bytes token: UnsafeBufferPointer<UInt8>, maxLength: Int) throws(JOSEError) {
        guard token.count <= maxLength else { throw .tooLarge(limit: maxLength) }
        guard let first = Self.firstDot(in: token, from: 0),
              let second = Self.firstDot(in: token, from: first + 1),
              Self.firstDot(in: token, from: second + 1) == nil
        else {
            throw .malformedToken("expected 3 dot-separated segments, found \(Self.countDots(token) + 1)")
        }
        let dots = (first: first, second: second)
        let headerPart = UnsafeBufferPointer(rebasing: token[..<dots.first])
        let payloadPart = UnsafeBufferPointer(rebasing: token[(dots.first + 1)..<dots.second])
        let signaturePart = UnsafeBufferPointer(rebasing: token[(dots.second + 1)...])

        guard !headerPart.isEmpty else { throw .malformedToken("header segment is empty") }
        guard let headerJSON = Base64URL.decode(buffer: headerPart) else {
            throw .malformedToken("header segment is not valid base64url")
        }
        guard let payload = Base64URL.decode(buffer: payloadPart) else {
            throw .malformedToken("payload segment is not valid base64url")
        }
        guard let signature = Base64URL.decode(buffer: signaturePart) else {
            throw .malformedToken("signature segment is not valid base64url")
        }
        let members: [(key: String, value: JSONValue)]
        do {
            members = try JSONValue.parseObjectMembers(headerJSON, maxLength: maxLength)
        } catch {
            // Refused in the words `JSONValue.parse` gives: invalid JSON with its reason, else JSON that is no object.
            do {
                _ = try JSONValue.parse(headerJSON, maxLength: maxLength)
            } catch {
                throw .malformedToken("header is not valid JSON (\(error.reason))")
            }
            throw .malformedToken("header is not a JSON object")
        }
        // RFC 7515 §4.1.11: extensions marked critical must be understood; we understand none.
        guard !members.contains(where: { $0.key == "crit" }) else {
            throw .malformedToken("header has critical extensions (\"crit\") we do not support")
        }

        self.headerMembers = members
        self.payload = payload
        self.signature = signature
        self.signingInput = Array(UnsafeBufferPointer(rebasing: token[..<dots.second]))
    }

    /// The protected header of a compact JWS, decoded and parsed without touching the payload or signature: for
    /// decisions made before verifying (which key, whether it is held). Nil for anything `init(parsing:)` would
    /// refuse over its length, its segments or its header; the payload and signature are not checked.
    public static func header(ofToken token: String, maxLength: Int = CompactJWS.defaultMaxLength) -> JSONValue? {
        var token = token
        return token.withUTF8 { bytes -> JSONValue? in
            guard bytes.count <= maxLength, let first = firstDot(in: bytes, from: 0), first > 0,
                  let second = firstDot(in: bytes, from: first + 1), firstDot(in: bytes, from: second + 1) == nil,
                  let headerJSON = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: bytes[..<first])),
                  let header = try? JSONValue.parse(headerJSON, maxLength: maxLength),
                  case .object(let members) = header, members["crit"] == nil
            else { return nil }
            return header
        }
    }

    /// Checks the header's `alg` against an allow-list, before any key is chosen or any
    /// crypto is done. Refuses `none`, `HS256` (key confusion) and everything unlisted.
    @discardableResult
    public func requireAlgorithm(in allowed: [JWSAlgorithm]) throws(JOSEError) -> JWSAlgorithm {
        guard let value = headerValue("alg") else { throw .malformedToken("header has no \"alg\"") }
        guard let name = value.stringValue else { throw .malformedToken("header \"alg\" is not a string") }
        guard let algorithm = JWSAlgorithm(rawValue: name), allowed.contains(algorithm) else {
            throw .algorithmNotAllowed(Self.loggable(name))
        }
        return algorithm
    }

    /// The payload parsed as a JSON object (the JWT claims set).
    public func claims() throws(JOSEError) -> [String: JSONValue] {
        let value: JSONValue
        do {
            value = try JSONValue.parse(payload)
        } catch {
            throw .malformedToken("payload is not valid JSON (\(error.reason))")
        }
        guard case .object(let claims) = value else { throw .malformedToken("payload is not a JSON object") }
        return claims
    }

    /// memchr is vectorised; a byte loop over a 1 KB token is measurably slower.
    private static func firstDot(in token: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < token.count, let base = token.baseAddress,
              let found = memchr(base + start, Int32(UInt8(ascii: ".")), token.count - start)
        else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }

    private static func countDots(_ token: UnsafeBufferPointer<UInt8>) -> Int {
        token.reduce(0) { count, byte in byte == UInt8(ascii: ".") ? count + 1 : count }
    }

    /// Header values come from the sender: keep them short and printable before they reach a log.
    private static func loggable(_ value: String) -> String {
        let printable = value.unicodeScalars.prefix(40).map { (0x20..<0x7F).contains($0.value) ? Character($0) : "?" }
        return String(printable) + (value.unicodeScalars.count > 40 ? "…" : "")
    }
}
