/// A problem in a template, located by file and line: `login.mustache:12: unclosed section "user"`.
public struct TemplateError: Error, CustomStringConvertible, Sendable, Equatable {
    public let file: String
    /// 1-based; 0 when the error is about the file as a whole (e.g. an unknown template name).
    public let line: Int
    public let message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)"
    }
}
