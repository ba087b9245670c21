import Foundation

/// Structured one-line log events in logfmt: `time=… level=info event=request method=GET path=/ status=200`.
/// Callers pass only fields that are safe to log: never query strings, tokens, codes or cookie values.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var name: String { ["debug", "info", "warning", "error"][rawValue] }
    }

    public let minimumLevel: Level
    private let sink: @Sendable (String) -> Void

    public init(minimumLevel: Level = .info, sink: @escaping @Sendable (String) -> Void = Logger.standardError) {
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    public static let silent = Logger(minimumLevel: .error, sink: { _ in })

    public static func standardError(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        // One write call per line keeps lines from different threads whole.
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    public func log(_ level: Level, _ event: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard level >= minimumLevel else { return }
        var line = "time=\(Logger.timestamp()) level=\(level.name) event=\(Logger.quoted(event))"
        for (key, value) in fields { line += " \(key)=\(Logger.quoted(value))" }
        sink(line)
    }

    public func info(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, event, fields) }
    public func warning(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.warning, event, fields) }
    public func error(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, event, fields) }

    static func quoted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline || $0 == "\\" }
        guard needsQuotes else { return value }
        var escaped = ""
        for character in value {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            default: escaped.append(character)
            }
        }
        return "\"\(escaped)\""
    }

    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        // Formatted by hand: String(format:) costs more than the rest of a small request.
        var text = ""
        text.reserveCapacity(24)
        func digits(_ value: Int, _ width: Int) {
            let string = String(value)
            if string.count < width { text += String(repeating: "0", count: width - string.count) }
            text += string
        }
        digits(Int(parts.tm_year) + 1900, 4); text += "-"; digits(Int(parts.tm_mon) + 1, 2); text += "-"
        digits(Int(parts.tm_mday), 2); text += "T"; digits(Int(parts.tm_hour), 2); text += ":"
        digits(Int(parts.tm_min), 2); text += ":"; digits(Int(parts.tm_sec), 2); text += "."
        digits(Int(now.tv_nsec / 1_000_000), 3); text += "Z"
        return text
    }
}
