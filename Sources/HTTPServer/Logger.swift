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

    /// Quotes and escapes a value so that it stays inside one logfmt field on one line. Works per Unicode
    /// scalar: Swift's `Character` merges `\r\n` into one grapheme, which a per-Character check would let through.
    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.utf8.contains(where: { $0 <= 0x20 || $0 == 0x22 || $0 == 0x3D || $0 == 0x5C || $0 >= 0x7F }),
              value.isEmpty || value.unicodeScalars.contains(where: { isSpecial($0) || isUnsafe($0) }) else { return value }
        var escaped = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where isUnsafe(scalar):
                let hex = String(scalar.value, radix: 16, uppercase: true)
                escaped += "\\u{" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }

    /// Characters that end or split a logfmt field.
    private static func isSpecial(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\"" || scalar == "=" || scalar == "\\"
    }

    /// Scalars a terminal or log viewer may treat as a line break or control: C0, DEL, C1 (incl. NEL U+0085),
    /// and the Unicode line and paragraph separators.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
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
