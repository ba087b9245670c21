import Foundation
import Mustache
import Testing

/// Every case of the Mustache specification modules the renderer supports (lambdas excepted).
@Suite("Mustache specification")
struct SpecTests {
    @Test("spec case", arguments: try SpecCase.load(modules: [
        "interpolation", "sections", "inverted", "partials", "comments", "delimiters",
    ]))
    func specCase(_ specCase: SpecCase) throws {
        let library = try TemplateLibrary(sources: [:])
        let rendered = try library.render(source: specCase.template, specCase.data, partials: specCase.partials)
        #expect(rendered == specCase.expected, "\(specCase.description)")
    }
}

struct SpecCase: Sendable, CustomTestStringConvertible {
    let module: String
    let name: String
    let template: String
    let data: MustacheValue
    let partials: [String: String]
    let expected: String

    var description: String { "\(module): \(name)" }
    var testDescription: String { description }

    struct LoadError: Error, CustomStringConvertible {
        let description: String
    }

    /// The spec lives beside the repository: `<repo>/../shared/specs/mustache/`.
    /// Symlinks are resolved so a scratch package that links to this directory finds it too.
    static var specDirectory: URL {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent()  // MustacheTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // package root
            .appendingPathComponent("../shared/specs/mustache").standardized
    }

    static func load(modules: [String]) throws -> [SpecCase] {
        try modules.flatMap { try load(module: $0) }
    }

    static func load(module: String) throws -> [SpecCase] {
        let file = specDirectory.appendingPathComponent("\(module).json")
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw LoadError(description: "Mustache spec file missing: \(file.path)")
        }
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let tests = root["tests"] as? [[String: Any]], !tests.isEmpty else {
            throw LoadError(description: "Mustache spec file has no tests: \(file.path)")
        }
        return try tests.map { test in
            guard let name = test["name"] as? String,
                  let template = test["template"] as? String,
                  let expected = test["expected"] as? String else {
                throw LoadError(description: "malformed case in \(file.path): \(test)")
            }
            return SpecCase(module: module, name: name, template: template,
                            data: MustacheValue(jsonObject: test["data"] ?? NSNull()),
                            partials: test["partials"] as? [String: String] ?? [:],
                            expected: expected)
        }
    }
}
