import HTTPServer
import JOSE
import JSON

extension AppleIDStandIn {
    /// `GET /auth/authorize`: validates the request like Apple and shows the consent page.
    func showAuthorizePage(_ request: Request) -> Response {
        do {
            let authorize = try registered(AuthorizeRequest(request.query))
            return HTML.response(AuthorizePage.render(authorize, users: users), formAction: consentFormAction(authorize))
        } catch {
            return errorPage(error)
        }
    }

    /// `authorize` when its redirect URI is a registered Return URL; Apple's refusal otherwise.
    private func registered(_ authorize: AuthorizeRequest) throws(AuthorizeError) -> AuthorizeRequest {
        guard returnURLs.allows(authorize.redirectURI) else {
            throw AuthorizeError(code: "invalid_request", reason: "Invalid web redirect url: it is not a registered Return URL.")
        }
        return authorize
    }

    /// `POST /auth/authorize`: the consent form. Its hidden fields came back from the browser,
    /// so they are validated again rather than trusted.
    func completeAuthorization(_ request: Request) throws -> Response {
        let form = request.formBody ?? FormFields()
        let authorize: AuthorizeRequest
        do {
            authorize = try registered(AuthorizeRequest(form))
        } catch {
            return errorPage(error)
        }
        var fields: [(name: String, value: String)] = []
        if let state = authorize.state { fields.append(("state", state)) }

        if form["action"] == "cancel" {
            logger.info("simulator_authorize_cancelled", ["client_id": authorize.clientID])
            return deliver(fields + [("error", "user_cancelled_authorize")], to: authorize)
        }
        guard let user = users.first(where: { $0.sub == form["user"] }) else {
            return errorPage(AuthorizeError(code: "invalid_request", reason: "Choose one of the test users."))
        }
        let sharesEmail = authorize.scopes.contains("email")
        let hidesEmail = sharesEmail && form["email_choice"] == "hide"
        let consent = Consent(clientID: authorize.clientID, user: user,
                              sharedEmail: sharesEmail ? (hidesEmail ? user.privateRelayEmail : user.email) : nil,
                              isPrivateEmail: hidesEmail, authTime: clock())
        let (code, isFirst) = issueCode(for: consent, redirectURI: authorize.redirectURI, nonce: authorize.nonce)

        fields.append(("code", code))
        if authorize.includesIDToken {
            var claims = IdentityTokenClaims(audience: consent.clientID, subject: currentSubject(of: user),
                                             nonce: authorize.nonce, code: code, email: consent.sharedEmail,
                                             isPrivateEmail: consent.isPrivateEmail, issuedAt: consent.authTime)
            claims.transferSubject = currentTransferSubject(of: user)
            claims.issuer = issuer
            fields.append(("id_token", try mintIdentityToken(claims)))
        }
        if isFirst, let userJSON = Self.userJSON(consent, scopes: authorize.scopes) {
            fields.append(("user", userJSON))
        }
        logger.info("simulator_authorized", ["client_id": consent.clientID, "sub": user.sub,
                                             "first": String(isFirst), "private_email": String(hidesEmail)])
        return deliver(fields, to: authorize)
    }

    /// The unsigned `user` JSON Apple posts on a first authorization: the name and the email chosen.
    static func userJSON(_ consent: Consent, scopes: Set<String>) -> String? {
        var members: [String: JSONValue] = [:]
        if scopes.contains("name") {
            members["name"] = ["firstName": .string(consent.user.firstName), "lastName": .string(consent.user.lastName)]
        }
        if let email = consent.sharedEmail { members["email"] = .string(email) }
        return members.isEmpty ? nil : JSONValue.object(members).serialized()
    }

    /// Sends the result back the way the request asked: a cross-site form POST, a message to the page that opened
    /// this popup, or a redirect carrying the fields in the query or the fragment.
    func deliver(_ fields: [(name: String, value: String)], to authorize: AuthorizeRequest) -> Response {
        let encoded = FormFields(fields.map { FormFields.Pair($0.name, $0.value) }).urlEncoded
        switch authorize.responseMode {
        case .formPost:
            let page = AutoPostPage.render(action: authorize.redirectURI, fields: fields, origin: authorize.redirectOrigin)
            return HTML.response(page, formAction: callbackFormAction(authorize))
        case .webMessage:
            let page = WebMessagePage.render(message: WebMessagePage.message(fields), targetOrigin: authorize.redirectOrigin)
            return HTML.response(page, formAction: "'none'")
        case .query:
            let separator = authorize.redirectURI.contains("?") ? "&" : "?"
            return Response.redirect(to: authorize.redirectURI + separator + encoded, status: 302)
        case .fragment:
            return Response.redirect(to: authorize.redirectURI + "#" + encoded, status: 302)
        }
    }

    /// The auto-post page's `form-action`: the redirect URI's origin and where the relying party sends the browser
    /// on from there.
    func callbackFormAction(_ authorize: AuthorizeRequest) -> String {
        let onward = (callbackDestinations[authorize.redirectURI] ?? []).filter(HTML.isSafeSource)
        return ([authorize.redirectOrigin] + onward.filter { $0 != authorize.redirectOrigin }).joined(separator: " ")
    }

    /// The consent page's `form-action`. Its post is answered with a page (form_post, web_message), or with a
    /// redirect to the redirect URI (query, fragment), which Chromium checks against this policy too.
    func consentFormAction(_ authorize: AuthorizeRequest) -> String {
        authorize.responseMode.carriesResultInPage ? "'self'" : "'self' " + callbackFormAction(authorize)
    }

    func errorPage(_ error: AuthorizeError) -> Response {
        logger.info("simulator_authorize_refused", ["error": error.code])
        return HTML.response(InformationPages.error(error), status: 400)
    }
}
