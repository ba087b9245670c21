import Foundation
import Mustache
import Testing

@Suite("Template library")
struct TemplateLibraryTests {
    /// A fresh directory with the given files, removed after `body` runs.
    private func withDirectory(_ files: [String: String], _ body: (String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("mustache-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, contents) in files {
            try contents.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        try body(directory.path)
    }

    @Test func loadsDirectoryWithLayoutPartials() throws {
        let files = [
            "header.mustache": "<!doctype html>\n<title>{{title}}</title>\n",
            "footer.mustache": "</html>\n",
            "login.mustache": "{{> header}}\n<main>\n  <a href=\"{{authorizeURL}}\">Sign in</a>\n</main>\n{{> footer}}\n",
            "notes.txt": "not a template {{#",
        ]
        try withDirectory(files) { path in
            let library = try TemplateLibrary(directory: path)
            #expect(library.names == ["footer", "header", "login"])
            let html = try library.render("login", [
                "title": "Sign in",
                "authorizeURL": "https://appleid.apple.com/auth/authorize?client_id=x&state=y",
            ])
            #expect(html == """
                <!doctype html>
                <title>Sign in</title>
                <main>
                  <a href="https://appleid.apple.com/auth/authorize?client_id=x&amp;state=y">Sign in</a>
                </main>
                </html>

                """)
        }
    }

    @Test func errorsNameTheFileWithExtension() throws {
        let login = String(repeating: "<p>line</p>\n", count: 11) + "{{#user}}\n<b>{{name}}</b>\n"
        try withDirectory(["login.mustache": login, "ok.mustache": "fine"]) { path in
            let error = try #require(throws: TemplateError.self) { try TemplateLibrary(directory: path) }
            #expect(error.description == #"login.mustache:12: unclosed section "user""#)
        }
    }

    @Test func unknownPartialInDirectoryNamesTheFile() throws {
        try withDirectory(["page.mustache": "<body>\n  {{> nav}}\n</body>\n"]) { path in
            let error = try #require(throws: TemplateError.self) { try TemplateLibrary(directory: path) }
            #expect(error.description == #"page.mustache:2: unknown partial "nav""#)
        }
    }

    @Test func missingDirectoryIsATemplateError() {
        #expect(throws: TemplateError.self) {
            try TemplateLibrary(directory: "/nonexistent/mustache-templates")
        }
    }

    @Test func renderSourceUsesLibraryTemplatesAndExtraPartials() throws {
        let library = try TemplateLibrary(sources: ["brand": "Bridge"])
        #expect(try library.render(source: "{{> brand}}: {{> extra}}{{> none}}", ["x": 1],
                                   partials: ["extra": "x={{x}}"]) == "Bridge: x=1")
    }
}
