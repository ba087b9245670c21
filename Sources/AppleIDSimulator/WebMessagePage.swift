import JSON

/// The page that ends a popup sign-in (`response_mode=web_message`): the simulator's script posts the result to the
/// window that opened the popup, addressed to the redirect URI's origin only, as Apple's popup does.
enum WebMessagePage {
    /// The message's `method`, which the stand-in SDK looks for before it reads `data`.
    static let method = "oauthDone"

    static func render(message: JSONValue, targetOrigin: String) -> String {
        let body = """
            <h1>Returning to the app…</h1>
            <p class="lead muted">Handing the sign-in result to \(HTML.escape(targetOrigin)).</p>
            <div id="web-message" data-message="\(HTML.escape(message.serialized()))" \
            data-target-origin="\(HTML.escape(targetOrigin))"></div>
            <p class="lead muted"><small>If this window stays open, close it and go back to the app.</small></p>
            """
        return HTML.document(title: "Returning to the app", body: body, includesScript: true)
    }

    /// The fields a form_post would carry, in the shape Apple's JS hands to the page:
    /// `{method, data: {authorization: {code, id_token, state}, user?}}`, or `{method, data: {error, state?}}`.
    /// `user` becomes an object, as Apple's JS delivers it.
    static func message(_ fields: [(name: String, value: String)]) -> JSONValue {
        func field(_ name: String) -> JSONValue? { fields.first { $0.name == name }.map { .string($0.value) } }
        var data: [String: JSONValue] = [:]
        if let error = field("error") {
            data["error"] = error
            data["state"] = field("state")
        } else {
            var authorization: [String: JSONValue] = [:]
            for name in ["code", "id_token", "state"] { authorization[name] = field(name) }
            data["authorization"] = .object(authorization)
            if let user = fields.first(where: { $0.name == "user" })?.value { data["user"] = try? JSONValue.parse(user) }
        }
        return .object(["method": .string(method), "data": .object(data)])
    }
}
