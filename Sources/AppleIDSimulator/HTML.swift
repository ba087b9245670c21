import HTTPServer
import Mustache

/// Building blocks for the simulator's pages. Every dynamic value goes through `escape`.
enum HTML {
    static func escape(_ text: String) -> String { htmlEscaped(text) }

    static func hiddenFields(_ fields: [(name: String, value: String)]) -> String {
        fields.map { #"<input type="hidden" name="\#(escape($0.name))" value="\#(escape($0.value))">"# }
            .joined(separator: "\n")
    }

    /// A full page: the development-only banner, the card with `body`, and the simulator's script when asked.
    static func document(title: String, body: String, includesScript: Bool = false) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex">
        <title>\(escape(title))</title>
        <link rel="stylesheet" href="\(SimulatorAssets.stylesheetPath)">
        </head>
        <body>
        <header class="banner"><p>Simulated Apple ID — development only</p></header>
        <main class="card">
        \(body)
        </main>
        \(includesScript ? #"<script src="\#(SimulatorAssets.scriptPath)"></script>"# : "")
        </body>
        </html>
        """
    }

    /// Whether `source` can go into a `form-action` list as it is: a scheme or an origin (any port allowed), no
    /// spaces, quotes, `;` or host wildcards.
    static func isSafeSource(_ source: String) -> Bool {
        let withoutAnyPort = source.hasSuffix(":*") ? source.dropLast(2) : Substring(source)
        return withoutAnyPort.count > 1
            && withoutAnyPort.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-._:/[]".contains($0)) }
    }

    /// An HTML response whose policy allows only the simulator's own script and style, and form posts to `formAction`.
    static func response(_ html: String, status: Int = 200, formAction: String = "'self'") -> Response {
        var response = Response.html(html, status: status)
        response.headers.set("Content-Security-Policy",
                             "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                 + "form-action \(formAction); frame-ancestors 'none'; base-uri 'none'")
        response.headers.set("Cache-Control", "no-store")
        response.headers.set("Referrer-Policy", "no-referrer")
        response.headers.set("X-Content-Type-Options", "nosniff")
        return response
    }
}
