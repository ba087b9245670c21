/// The page that carries the result back to the relying party as a cross-site form POST,
/// submitted by the simulator's script (or by hand without JavaScript).
enum AutoPostPage {
    static func render(action: String, fields: [(name: String, value: String)], origin: String) -> String {
        let body = """
            <h1>Returning to the app…</h1>
            <p class="lead muted">Sending the sign-in result to \(HTML.escape(origin)).</p>
            <form method="post" action="\(HTML.escape(action))" data-auto-submit>
            \(HTML.hiddenFields(fields))
            <div class="actions"><button type="submit" class="primary">Continue</button></div>
            </form>
            """
        return HTML.document(title: "Returning to the app", body: body, includesScript: true)
    }
}
