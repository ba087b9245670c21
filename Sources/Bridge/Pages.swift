import HTTPServer
import Mustache

/// Renders the HTML pages from `Templates/`, compiled once at start-up.
public struct Pages: Sendable {
    let library: TemplateLibrary
    let devMode: Bool

    public init(directory: String, devMode: Bool) throws {
        library = try TemplateLibrary(directory: directory)
        self.devMode = devMode
        for required in ["login", "session", "error", "repost", "header", "footer"] where !library.names.contains(required) {
            throw TemplateError(file: "\(directory)/\(required).mustache", line: 0, message: "template is missing")
        }
    }

    public func render(_ name: String, status: Int = 200, _ context: [String: MustacheValue]) -> Response {
        var context = context
        context["devMode"] = .bool(devMode)
        do {
            return .html(try library.render(name, .object(context)), status: status)
        } catch {
            // Templates compiled at start-up; a render failure is a bug, answered plainly.
            return .text("The page could not be shown.\n", status: 500)
        }
    }

    /// A page that says what went wrong in words a person understands.
    public func error(status: Int, heading: String, message: String, detail: String? = nil,
                      retryURL: String? = "/login") -> Response {
        var context: [String: MustacheValue] = [
            "title": .string(heading), "status": .int(status), "heading": .string(heading), "message": .string(message),
            "homeURL": "/login",
        ]
        if let detail { context["detail"] = .string(detail) }
        if let retryURL { context["retryURL"] = .string(retryURL) }
        return render("error", status: status, context)
    }
}
