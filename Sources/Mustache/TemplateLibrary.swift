import Foundation

/// A set of compiled templates that can include each other as partials by name.
public final class TemplateLibrary: Sendable {
    private let templates: [String: Template]

    /// Loads every `*.mustache` file in `directory` (not recursively). A template is named
    /// by its file name without the extension; errors name the file, e.g. `login.mustache:12: …`.
    public convenience init(directory: String) throws {
        let fileNames: [String]
        do {
            fileNames = try FileManager.default.contentsOfDirectory(atPath: directory)
                .filter { $0.hasSuffix(".mustache") }
                .sorted()
        } catch {
            throw TemplateError(file: directory, line: 0, message: "cannot list the template directory")
        }
        var templates: [String: Template] = [:]
        for fileName in fileNames {
            let path = (directory as NSString).appendingPathComponent(fileName)
            guard let data = FileManager.default.contents(atPath: path),
                  let source = String(data: data, encoding: .utf8) else {
                throw TemplateError(file: fileName, line: 0, message: "cannot read the file as UTF-8")
            }
            let name = String(fileName.dropLast(".mustache".count))
            templates[name] = try Template(source: source, name: name, fileName: fileName)
        }
        try self.init(templates: templates)
    }

    /// Compiles `sources` (template name → source); errors name the template by its name.
    public convenience init(sources: [String: String]) throws {
        var templates: [String: Template] = [:]
        for (name, source) in sources {
            templates[name] = try Template(source: source, name: name)
        }
        try self.init(templates: templates)
    }

    private init(templates: [String: Template]) throws(TemplateError) {
        try Self.checkPartialsExist(in: templates)
        self.templates = templates
    }

    public var names: [String] {
        templates.keys.sorted()
    }

    public func render(_ name: String, _ context: MustacheValue) throws -> String {
        guard let template = templates[name] else {
            throw TemplateError(file: name, line: 0, message: "unknown template")
        }
        return try template.render(context, partials: templates)
    }

    /// Compiles and renders `source` on the spot, with `partials` (name → source) added to
    /// this library's templates. Unlike the library's own templates, a missing partial renders
    /// as nothing, as the spec says. Meant for tests, not for per-request use.
    public func render(source: String, _ context: MustacheValue, partials: [String: String] = [:]) throws -> String {
        var available = templates
        for (name, partialSource) in partials {
            available[name] = try Template(source: partialSource, name: name)
        }
        return try Template(source: source).render(context, partials: available)
    }

    /// A misspelt partial would otherwise silently render as nothing, so it fails at load time.
    private static func checkPartialsExist(in templates: [String: Template]) throws(TemplateError) {
        for name in templates.keys.sorted() {
            let template = templates[name]!
            for reference in template.partialReferences where templates[reference.name] == nil {
                throw TemplateError(file: template.fileName, line: reference.line,
                                    message: "unknown partial \"\(reference.name)\"")
            }
        }
    }
}
