import AppleID
import BridgeSettings
import HTTPServer
import JOSE
import Logging
import SignIn
import Storage
import TextBytes
import WebPresentation

/// `POST /apple/android/<package>`: Apple's form_post for Flutter's `sign_in_with_apple` on Android, whose Custom Tab
/// sent Apple this relay's URL as its `redirect_uri`. The identity token is verified first, as on the web; then the
/// browser is sent, with the posted fields unchanged, to the plugin's
/// `intent://callback?…#Intent;package=<package>;scheme=signinwithapple;end`, and the code is recorded as relayed so
/// that the app's sign-in (`POST /api/auth/apple`) exchanges it with this URL. Apple's errors (a cancel) are handed
/// over the same way, for the plugin to report. Nothing here signs anyone in.
///
/// The nonce: the plugin puts what the app gives it into Apple's request (the app hashes its server nonce into it),
/// so the relay cannot know the value; it requires a Services-ID token to carry one, as the verifier does, and the
/// app's sign-in checks it against the raw server nonce the app sends.
package struct AndroidRelay: Sendable {
    /// What Apple posts, and the plugin reads.
    package static let appleFields: Set<String> = ["state", "code", "id_token", "user", "error"]

    /// APPLE_ANDROID_PACKAGES.
    package let packages: [String]
    package let servicesID: String?
    package let verifier: IdentityTokenVerifier
    package let relayedCodes: RelayedCodes
    /// The relay's URL for a package (the Services ID's Return URL).
    package let relayURL: @Sendable (String) -> String
    package let pages: Pages
    package let logger: Logger

    package init(packages: [String], servicesID: String?, verifier: IdentityTokenVerifier, relayedCodes: RelayedCodes,
                 relayURL: @escaping @Sendable (String) -> String, pages: Pages, logger: Logger) {
        self.packages = packages
        self.servicesID = servicesID
        self.verifier = verifier
        self.relayedCodes = relayedCodes
        self.relayURL = relayURL
        self.pages = pages
        self.logger = logger
    }

    package func relay(_ request: Request, _ fields: FormFields) throws -> Reply {
        guard let package = configuredPackage(in: request.path) else { throw PageRefusal.unknownAndroidApp }
        // Checked by its first value here, the app might read another: one value each, or nothing is relayed.
        if !fields.repeatedNames.isDisjoint(with: Self.appleFields) {
            throw HTTPError(400, "A field of Apple's answer is repeated.")
        }
        if let error = fields["error"], !error.isEmpty {
            logger.info("android_relay_apple_error", ["package": package, "error": AppleOAuthError(rawValue: error)?.rawValue ?? "other"])
            return Reply(Self.handOver(fields, to: package, pages: pages))
        }
        guard let idToken = fields["id_token"], !idToken.isEmpty else { throw PageRefusal.missingIDToken }
        guard let code = fields["code"], !code.isEmpty else { throw SignInFailure.codeExchange(.missingCode) }
        // What follows captures only what it uses.
        let (logger, pages, servicesID, relayedCodes, relayURL) = (logger, pages, servicesID, relayedCodes, relayURL)
        // No nonce is expected: a Services-ID token must carry one all the same. A rejection is logged by the group.
        return try verifier.verifying(idToken, context: VerificationContext(expectedNonce: nil, authorizationCode: code),
                                      callingApple: false, refusing: { SignInFailure.tokenRejected($0) }) { identity in
            // The plugin's codes are issued to the Services ID: a bundle ID's token was not made by Apple's web sign-in.
            guard let servicesID, identity.audience.hasSameUTF8(as: servicesID) else {
                throw SignInFailure.tokenRejected(.wrongAudience(identity.audience))  // one of ours: it verified
            }
            return request.answer(afterWriting: relayedCodes.recording(code, from: relayURL(package)),
                                  to: relayedCodes.store) { _ in
                logger.info("android_sign_in_relayed", ["package": package])
                return Self.handOver(fields, to: package, pages: pages)
            }
        }
    }

    /// The configured package the path names (compared byte for byte), or nil.
    package func configuredPackage(in path: String) -> String? {
        let prefix = BridgeConfiguration.androidRelayPathPrefix.utf8
        guard path.utf8.starts(with: prefix) else { return nil }
        let named = path.utf8.dropFirst(prefix.count)
        return packages.first { $0.utf8.elementsEqual(named) }  // a Substring's view: no contiguous String to compare
    }

    /// `303` to the plugin's intent, with a page holding the same link: a Custom Tab does not always follow a
    /// redirect to `intent://`, and a tap on the link does. The answer carries Apple's code and token: `no-store`.
    package static func handOver(_ fields: FormFields, to package: String, pages: Pages) -> Response {
        let intent = intentURL(fields, package: package)
        var response = pages.render("android-return", status: 303, ["intentURL": .string(intent)])
        response.headers.set("Location", intent)
        response.headers.set("Cache-Control", "no-store")
        response.headers.set("Referrer-Policy", "no-referrer")
        return response
    }

    /// The URL `sign_in_with_apple` listens for: the posted fields as its query, every byte outside RFC 3986's
    /// unreserved characters percent-encoded, so neither the header nor the page can be broken out of.
    package static func intentURL(_ fields: FormFields, package: String) -> String {
        "intent://callback?" + fields.urlEncoded + "#Intent;package=" + package + ";scheme=signinwithapple;end"
    }
}
