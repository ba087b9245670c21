import Mustache
import Testing

@Suite("Rendering")
struct RenderingTests {
    private func render(_ source: String, _ context: MustacheValue, partials: [String: String] = [:]) throws -> String {
        try TemplateLibrary(sources: [:]).render(source: source, context, partials: partials)
    }

    @Suite("HTML escaping")
    struct Escaping {
        let hostile: MustacheValue = ["text": "<script>\"'&</script>"]

        @Test func variablesAreEscaped() throws {
            let library = try TemplateLibrary(sources: ["page": "<p>{{text}}</p>"])
            #expect(try library.render("page", hostile) == "<p>&lt;script&gt;&quot;&#39;&amp;&lt;/script&gt;</p>")
        }

        @Test func tripleMustacheIsRaw() throws {
            let library = try TemplateLibrary(sources: ["page": "{{{text}}}"])
            #expect(try library.render("page", hostile) == "<script>\"'&</script>")
        }

        @Test func ampersandIsRaw() throws {
            let library = try TemplateLibrary(sources: ["page": "{{& text }}"])
            #expect(try library.render("page", hostile) == "<script>\"'&</script>")
        }

        @Test func escapingKeepsNonASCIIText() throws {
            let library = try TemplateLibrary(sources: ["page": "{{text}}"])
            #expect(try library.render("page", ["text": "김 & 李 👩‍💻 <ok>"]) == "김 &amp; 李 👩‍💻 &lt;ok&gt;")
        }
    }

    @Suite("Sections")
    struct Sections {
        let library: TemplateLibrary

        init() throws {
            library = try TemplateLibrary(sources: [
                "list": "<ul>\n{{#items}}\n  <li>{{name}} ({{owner}})</li>\n{{/items}}\n</ul>\n",
                "empty": "{{#items}}<li>{{name}}</li>{{/items}}{{^items}}<p>No items.</p>{{/items}}",
                "strings": "{{#tags}}[{{.}}]{{/tags}}",
                "message": "{{#error}}<p class=\"error\">{{error}}</p>{{/error}}{{^error}}ok{{/error}}",
            ])
        }

        @Test func iteratesListsWithParentContext() throws {
            let context: MustacheValue = ["owner": "ann", "items": [["name": "a"], ["name": "b"]]]
            #expect(try library.render("list", context) == "<ul>\n  <li>a (ann)</li>\n  <li>b (ann)</li>\n</ul>\n")
        }

        @Test func invertedSectionRendersForEmptyOrMissingList() throws {
            #expect(try library.render("empty", ["items": []]) == "<p>No items.</p>")
            #expect(try library.render("empty", [:]) == "<p>No items.</p>")
            #expect(try library.render("empty", ["items": [["name": "x"]]]) == "<li>x</li>")
        }

        @Test func implicitIteratorOverStrings() throws {
            #expect(try library.render("strings", ["tags": ["a", "<b>"]]) == "[a][&lt;b&gt;]")
        }

        @Test("empty string and null are falsy, other strings truthy", arguments: [
            (MustacheValue.string(""), "ok"),
            (.null, "ok"),
            (.string("Bad password"), "<p class=\"error\">Bad password</p>"),
        ])
        func stringTruthiness(error: MustacheValue, expected: String) throws {
            #expect(try library.render("message", ["error": error]) == expected)
        }
    }

    @Test func dottedNames() throws {
        let context: MustacheValue = ["user": ["name": "Ann", "email": ["address": "a@example.com"]]]
        #expect(try render("{{user.name}} <{{user.email.address}}>{{user.missing.x}}", context)
            == "Ann <a@example.com>")
    }

    @Test("number formatting", arguments: [
        (MustacheValue.int(3), "3"), (.int(-12), "-12"), (.double(1.5), "1.5"),
        (.double(2.0), "2"), (.double(1.21), "1.21"), (.bool(true), "true"), (.null, ""),
    ])
    func numberFormatting(value: MustacheValue, expected: String) throws {
        #expect(try render("{{value}}", ["value": value]) == expected)
    }

    @Test func partialsAsLayoutKeepIndentation() throws {
        let library = try TemplateLibrary(sources: [
            "head": "<head>\n  <title>{{title}}</title>\n</head>\n",
            "footer": "<footer>{{year}}</footer>\n",
            "page": "<html>\n  {{> head}}\n  <body>\n    {{#user}}\n    <p>Hi {{name}}</p>\n    {{/user}}\n    {{> footer}}\n  </body>\n</html>\n",
        ])
        let expected = """
            <html>
              <head>
                <title>Login &amp; more</title>
              </head>
              <body>
                <p>Hi Ann</p>
                <footer>2025</footer>
              </body>
            </html>

            """
        #expect(try library.render("page", ["title": "Login & more", "year": 2025, "user": ["name": "Ann"]]) == expected)
    }

    @Test func templateRendersWithoutLibrary() throws {
        let template = try Template(source: "Hello, {{name}}!{{> absent}}", name: "hello")
        #expect(template.name == "hello")
        #expect(try template.render(["name": "world"]) == "Hello, world!")
    }

    @Test func compiledOnceRenderedConcurrently() async throws {
        let library = try TemplateLibrary(sources: ["item": "<b>{{n}}</b>"])
        let results = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for n in 0..<50 {
                group.addTask { (n, try library.render("item", ["n": .int(n)])) }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(results.count == 50)
        #expect(results.allSatisfy { $0.value == "<b>\($0.key)</b>" })
    }
}
