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
    /// nil: standard error, written as bytes without building a String.
    private let sink: (@Sendable (String) -> Void)?

    /// `sink` receives each line (without its newline); without one, lines go to standard error.
    public init(minimumLevel: Level = .info, sink: (@Sendable (String) -> Void)? = nil) {
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    public static let silent = Logger(minimumLevel: .error, sink: { _ in })

    /// Every request writes a line, so it is built as bytes in one buffer (appending Strings piece by piece was
    /// most of the cost of logging, and logging most of the cost of a small request beyond the socket calls).
    public func log(_ level: Level, _ event: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard level >= minimumLevel else { return }
        var line: [UInt8] = []
        line.reserveCapacity(192)
        line.append(contentsOf: "time=".utf8)
        Logger.appendTimestamp(to: &line)
        line.append(contentsOf: " level=".utf8)
        line.append(contentsOf: level.name.utf8)
        line.append(contentsOf: " event=".utf8)
        Logger.appendQuoted(event, to: &line)
        for (key, value) in fields {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: key.utf8)
            line.append(UInt8(ascii: "="))
            Logger.appendQuoted(value, to: &line)
        }
        if let sink {
            sink(String(decoding: line, as: UTF8.self))
        } else {
            line.append(UInt8(ascii: "\n"))
            // One write call per line keeps lines from different threads whole.
            _ = line.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count) }
        }
    }

    static func appendQuoted(_ value: String, to line: inout [UInt8]) {
        line.append(contentsOf: (isPlainASCII(value) ? value : quoted(value)).utf8)
    }

    /// Non-empty, and printable ASCII other than the characters that end or split a field: logged as is.
    private static func isPlainASCII(_ value: String) -> Bool {
        !value.isEmpty && !value.utf8.contains { $0 <= 0x20 || $0 == 0x22 || $0 == 0x3D || $0 == 0x5C || $0 >= 0x7F }
    }

    public func info(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, event, fields) }
    public func warning(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.warning, event, fields) }
    public func error(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, event, fields) }

    /// Quotes and escapes a value so that it stays inside one logfmt field on one line. Works per Unicode
    /// scalar: Swift's `Character` merges `\r\n` into one grapheme, which a per-Character check would let through.
    static func quoted(_ value: String) -> String {
        guard !isPlainASCII(value),
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
        var bytes: [UInt8] = []
        appendTimestamp(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the current UTC time as `2026-01-31T23:59:59.123Z`, formatted by hand into bytes:
    /// `String(format:)` or a String per number costs more than the rest of a small request.
    static func appendTimestamp(to text: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        func put(_ value: Int32, _ width: Int, _ separator: UInt8) {
            var value = Int(value)
            var digits: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &digits) { buffer in
                for position in stride(from: width - 1, through: 0, by: -1) {
                    buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                text.append(contentsOf: buffer.prefix(width))
            }
            text.append(separator)
        }
        put(parts.tm_year + 1900, 4, UInt8(ascii: "-"))
        put(parts.tm_mon + 1, 2, UInt8(ascii: "-"))
        put(parts.tm_mday, 2, UInt8(ascii: "T"))
        put(parts.tm_hour, 2, UInt8(ascii: ":"))
        put(parts.tm_min, 2, UInt8(ascii: ":"))
        put(parts.tm_sec, 2, UInt8(ascii: "."))
        put(Int32(now.tv_nsec / 1_000_000), 3, UInt8(ascii: "Z"))
    }
}
