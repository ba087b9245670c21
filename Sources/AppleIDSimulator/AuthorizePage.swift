/// The consent page: pick a test user, share or hide the email, continue or cancel.
enum AuthorizePage {
    static func render(_ request: AuthorizeRequest, users: [SimulatedUser]) -> String {
        let userOptions = users.enumerated().map { index, user in
            option(name: "user", value: user.sub, checked: index == 0, title: user.fullName, detail: user.email)
        }
        var sections = [fieldset(legend: "Choose a test user", options: userOptions)]
        if request.scopes.contains("email") {
            sections.append(fieldset(legend: "Email", options: [
                option(name: "email_choice", value: "share", checked: true, title: "Share My Email",
                       detail: "The app receives the user's real address."),
                option(name: "email_choice", value: "hide", checked: false, title: "Hide My Email",
                       detail: "The app receives a private relay address (…@privaterelay.appleid.com)."),
            ]))
        }
        let body = """
            <h1>Sign in with Apple ID</h1>
            <p class="lead">Use a test Apple ID to sign in to <strong>\(HTML.escape(request.clientID))</strong>.</p>
            <p class="lead muted"><small>The result is sent to \(HTML.escape(request.redirectOrigin))</small></p>
            <form method="post" action="/auth/authorize">
            \(HTML.hiddenFields(request.original))
            \(sections.joined(separator: "\n"))
            <div class="actions">
            <button type="submit" name="action" value="continue" class="primary">Continue</button>
            <button type="submit" name="action" value="cancel" class="secondary">Cancel</button>
            </div>
            </form>
            """
        return HTML.document(title: "Sign in with Apple ID (simulated)", body: body)
    }

    private static func fieldset(legend: String, options: [String]) -> String {
        "<fieldset>\n<legend>\(HTML.escape(legend))</legend>\n\(options.joined(separator: "\n"))\n</fieldset>"
    }

    private static func option(name: String, value: String, checked: Bool, title: String, detail: String) -> String {
        """
        <label class="option"><input type="radio" name="\(HTML.escape(name))" value="\(HTML.escape(value))"\
        \(checked ? " checked" : "")><span><strong>\(HTML.escape(title))</strong>\
        <small>\(HTML.escape(detail))</small></span></label>
        """
    }
}
