import AppleID
import BridgeSettings
import HTTPServer
import SignIn
import Storage
import TextBytes

/// `GET /auth/verify`: whether the browser behind a proxied request is signed in, and as whom. `200` names the
/// member in `X-Auth-Request-User` (the member id), `X-Auth-Request-Email` and `X-Auth-Request-Groups` (a comma
/// list), the last two empty when unknown or none; `401` without a live session; with `?group=G` (or `G1,G2`: any
/// of them), `403` for a member in none of them. Reads only: no write, no call to Apple, no rate limit. The bodies
/// of `401` and `403` say nothing about the person.
package struct ForwardAuth: Sendable {
    /// What it reads and writes of the store.
    package typealias StoreRole = any SessionTransaction & MemberGroupsTransaction
    package let store: StoreAccess<StoreRole>
    package let clock: WallClock
    package let cookieNames: CookieNames

    package init(store: StoreAccess<StoreRole>, clock: WallClock, cookieNames: CookieNames) {
        self.store = store
        self.clock = clock
        self.cookieNames = cookieNames
    }

    package func verify(_ request: Request) throws -> Response {
        let required = try Self.requiredGroups(request.query["group"])
        guard let id = sessionID(request) else { throw HTTPError(401, "Not signed in.") }
        let now = clock.now
        let found = try store.read { transaction -> (User, [String])? in
            guard let (_, user) = try transaction.session(idHash: SecretTokens.digest(id), now: now) else { return nil }
            return (user, try transaction.groups(userID: user.id).map(\.name))
        }
        guard let (user, groups) = found else { throw HTTPError(401, "Not signed in.") }
        if let required, !required.contains(where: { wanted in groups.contains { $0.hasSameUTF8(as: wanted) } }) {
            throw HTTPError(403, "Signed in, but not in a group this address requires.")
        }
        let email = user.email.flatMap { email in email.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F } ? email : nil }
        var response = Response.text("Signed in.\n")
        response.headers.set("X-Auth-Request-User", String(user.id))
        response.headers.set("X-Auth-Request-Email", Self.fieldValue(email ?? ""))
        response.headers.set("X-Auth-Request-Groups", Self.fieldValue(groups.joined(separator: ",")))
        return response
    }

    /// Every header is sent, empty when there is nothing to say: a proxy that copies a header the answer lacks may
    /// pass on something else (Caddy 2.6's `copy_headers` passes its unreplaced placeholder, and the browser's own
    /// header stays where a proxy only sets what it got). libmicrohttpd refuses an empty value, so an empty one is
    /// a single space, which HTTP reads as the empty value (RFC 9110 §5.5: whitespace around a value is not part of
    /// it).
    package static func fieldValue(_ value: String) -> String {
        value.isEmpty ? " " : value
    }

    /// The session cookie's value; nil without one, or with two of that name (one of them planted: neither is
    /// believed).
    private func sessionID(_ request: Request) -> String? {
        let sent = request.sentCookies.filter { $0.name.hasSameUTF8(as: cookieNames.session) }
        guard sent.count == 1, let id = sent.first?.value, !id.isEmpty else { return nil }
        return id
    }

    /// `?group=`: nil when absent; a comma list of group names, any of which admits.
    package static func requiredGroups(_ value: String?) throws(HTTPError) -> [String]? {
        guard let value else { return nil }
        let names = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard names.allSatisfy(StoreInput.isGroupName) else {
            throw HTTPError(400, "group must be a group name, or a comma list of them (A-Z a-z 0-9 . _ : @ -).")
        }
        return names
    }
}
