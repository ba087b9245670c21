import Mustache
import Testing

@Suite("Template errors")
struct TemplateErrorTests {
    private func compileError(_ source: String, name: String = "login.mustache") -> String? {
        do {
            _ = try Template(source: source, name: name)
            return nil
        } catch {
            return (error as? TemplateError)?.description ?? "not a TemplateError: \(error)"
        }
    }

    @Test("compile errors name the file and line", arguments: [
        ("<p>\n{{#user}}\n<b>{{name}}</b>\n", #"login.mustache:2: unclosed section "user""#),
        ("{{#a}}\n{{#b}}\n{{/a}}", #"login.mustache:3: closing tag "a" does not match section "b" opened at line 2"#),
        ("ok\n\n{{/user}}", #"login.mustache:3: unexpected closing tag "user""#),
        ("line 1\n<p>{{name</p>\n", #"login.mustache:2: unclosed tag: missing "}}""#),
        ("{{{name}}", #"login.mustache:1: unclosed tag: missing "}}}""#),
        ("a\n{{=<% =}}", #"login.mustache:2: invalid delimiters "<%""#),
        ("{{= <% = %> =}}", #"login.mustache:1: invalid delimiters "<% = %>""#),
        ("a\nb\n{{ }}", "login.mustache:3: empty tag"),
        ("{{user..name}}", #"login.mustache:1: invalid name "user..name""#),
        ("{{!\ncomment\n}}\n{{#x}}", #"login.mustache:4: unclosed section "x""#),
        ("{{=<% %>=}}\n<%#x%>\n<%/y%>", #"login.mustache:3: closing tag "y" does not match section "x" opened at line 2"#),
    ])
    func compileErrors(source: String, expected: String) {
        #expect(compileError(source) == expected)
    }

    @Test func errorExposesItsParts() throws {
        let error = try #require(throws: TemplateError.self) {
            try Template(source: "\n{{#user}}", name: "login.mustache")
        }
        #expect(error == TemplateError(file: "login.mustache", line: 2, message: #"unclosed section "user""#))
    }

    @Test func libraryReportsTheTemplateName() {
        #expect(throws: TemplateError(file: "login", line: 1, message: #"unclosed section "user""#)) {
            try TemplateLibrary(sources: ["ok": "fine", "login": "{{#user}}"])
        }
    }

    @Test func unknownPartialFailsAtLoadTime() {
        #expect(throws: TemplateError(file: "page", line: 3, message: #"unknown partial "footr""#)) {
            try TemplateLibrary(sources: ["page": "a\n{{#x}}\n  {{> footr}}\n{{/x}}", "footer": ""])
        }
    }

    @Test func unknownTemplateFailsAtRender() throws {
        let library = try TemplateLibrary(sources: ["page": ""])
        let error = try #require(throws: TemplateError.self) { try library.render("pgae", [:]) }
        #expect(error.description == "pgae: unknown template")
    }

    @Test func endlessPartialRecursionIsAnError() throws {
        let library = try TemplateLibrary(sources: ["loop": "x\n{{> loop}}"])
        let error = try #require(throws: TemplateError.self) { try library.render("loop", [:]) }
        #expect(error.description == #"loop:2: partials nested more than 100 deep at "loop""#)
    }
}
