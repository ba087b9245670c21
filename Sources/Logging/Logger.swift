import Foundation

/// Structured one-line log events in logfmt: `time=… level=info event=request method=GET path=/ status=200`.
/// Callers pass only fields that are safe to log: never query strings, tokens, codes or cookie values.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    public let minimumLevel: Level
    /// nil: standard error, written as bytes without building a String, in batches (`StandardErrorLog`).
    private let sink: (@Sendable (String) -> Void)?

    /// `sink` receives each line (without its newline); without one, lines go to standard error.
    public init(minimumLevel: Level = .info, sink: (@Sendable (String) -> Void)? = nil) {
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    public static let silent = Logger(minimumLevel: .error, sink: { _ in })

    /// Every request writes a line, so it is built as bytes in one buffer, each piece copied from its UTF-8 storage
    /// (appending Strings, or even their `.utf8` views, piece by piece was most of the cost of logging, and logging
    /// most of the cost of a small request beyond the socket calls).
    public func log(_ level: Level, _ event: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard level >= minimumLevel else { return }
        var line: [UInt8] = []
        line.reserveCapacity(256)
        Logger.appendLiteral("time=", to: &line)
        Logger.appendTimestamp(to: &line)
        Logger.appendLiteral(" level=", to: &line)
        Logger.appendRaw(level.name, to: &line)
        Logger.appendLiteral(" event=", to: &line)
        Logger.appendQuoted(event, to: &line)
        for (key, value) in fields {
            line.append(UInt8(ascii: " "))
            Logger.appendRaw(key, to: &line)
            line.append(UInt8(ascii: "="))
            Logger.appendQuoted(value, to: &line)
        }
        emit(&line, level)
    }

    /// The line every request ends with, exactly as `log(.info, "request", [method, path, status, duration_ms,
    /// aborted?])` writes it, without the general fields' overhead: it is most of what the server logs.
    public func request(method: String, path: String, status: Int, microseconds: UInt64, aborted: Int? = nil) {
        guard Level.info >= minimumLevel else { return }
        var line: [UInt8] = []
        line.reserveCapacity(192)
        Logger.appendLiteral("time=", to: &line)
        Logger.appendTimestamp(to: &line)
        Logger.appendLiteral(" level=info event=request method=", to: &line)
        Logger.appendQuoted(method, to: &line)
        Logger.appendLiteral(" path=", to: &line)
        Logger.appendQuoted(path, to: &line)
        Logger.appendLiteral(" status=", to: &line)
        Logger.appendDecimal(UInt64(max(0, status)), to: &line)
        Logger.appendLiteral(" duration_ms=", to: &line)
        Logger.appendDecimal(microseconds / 1000, to: &line)
        let fraction = microseconds % 1000
        line.append(UInt8(ascii: "."))
        line.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / 100))
        line.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / 10 % 10))
        line.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction % 10))
        if let aborted {
            Logger.appendLiteral(" aborted=", to: &line)
            Logger.appendQuoted(String(aborted), to: &line)
        }
        emit(&line, .info)
    }

    private func emit(_ line: inout [UInt8], _ level: Level) {
        if let sink {
            sink(String(decoding: line, as: UTF8.self))
        } else {
            line.append(UInt8(ascii: "\n"))
            // Whole lines go into the thread's buffer, so lines from different threads stay whole.
            StandardErrorLog.shared.append(line, urgent: level >= .warning)
        }
    }

    static func appendDecimal(_ value: UInt64, to line: inout [UInt8]) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // UInt64's 20 digits fit in 24 bytes
        withUnsafeMutableBytes(of: &digits) { bytes in
            var value = value, start = bytes.count
            repeat {
                start -= 1
                bytes[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
                value /= 10
            } while value > 0
            line.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
        }
    }

    /// A literal's bytes, copied from where the compiler put them: a short `String` is copied out of its inline
    /// storage again by `withUTF8`, for every piece of every line.
    static func appendLiteral(_ text: StaticString, to line: inout [UInt8]) {
        line.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Writes out the lines to standard error that are still buffered (see `StandardErrorLog`); call it before
    /// writing to standard error directly, so that what came first shows first.
    public static func flush() {
        StandardErrorLog.shared.flush()
    }

    static func appendRaw(_ text: String, to line: inout [UInt8]) {
        var text = text
        text.withUTF8 { line.append(contentsOf: $0) }
    }

    static func appendQuoted(_ value: String, to line: inout [UInt8]) {
        var value = value
        let plain = value.withUTF8 { bytes in
            guard isPlainASCII(bytes) else { return false }
            line.append(contentsOf: bytes)
            return true
        }
        if !plain { appendRaw(quoted(value), to: &line) }
    }

    /// Non-empty, and printable ASCII other than the characters that end or split a field: logged as is.
    private static func isPlainASCII(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { isPlainASCII($0) }
    }

    private static func isPlainASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty else { return false }
        for byte in bytes where byte <= 0x20 || byte == 0x22 || byte == 0x3D || byte == 0x5C || byte >= 0x7F {
            return false
        }
        return true
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
        appendTimestamp(secondsSince1970: Int64(now.tv_sec), milliseconds: Int(now.tv_nsec / 1_000_000), to: &text)
    }

    /// The date is computed arithmetically (proleptic Gregorian, UTC) rather than with `gmtime_r`, which takes
    /// glibc's process-wide time-zone lock: every listener thread logs every request, and they queued on it.
    static func appendTimestamp(secondsSince1970: Int64, milliseconds: Int, to text: inout [UInt8]) {
        var (days, secondOfDay) = secondsSince1970.quotientAndRemainder(dividingBy: 86_400)
        if secondOfDay < 0 { days -= 1; secondOfDay += 86_400 }
        let (year, month, day) = civilDate(daysSince1970: days)
        let second = Int(secondOfDay)
        // Digits go into a fixed buffer of the stamp's 24 bytes, appended once.
        var stamp: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &stamp) { bytes in
            func put(_ value: Int, width: Int, at offset: Int, then separator: UInt8) {
                var value = value
                for position in stride(from: offset + width - 1, through: offset, by: -1) {
                    bytes[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
                    value /= 10
                }
                bytes[offset + width] = separator
            }
            put(year, width: 4, at: 0, then: UInt8(ascii: "-"))
            put(month, width: 2, at: 5, then: UInt8(ascii: "-"))
            put(day, width: 2, at: 8, then: UInt8(ascii: "T"))
            put(second / 3600, width: 2, at: 11, then: UInt8(ascii: ":"))
            put(second / 60 % 60, width: 2, at: 14, then: UInt8(ascii: ":"))
            put(second % 60, width: 2, at: 17, then: UInt8(ascii: "."))
            put(milliseconds, width: 3, at: 20, then: UInt8(ascii: "Z"))
            text.append(contentsOf: bytes.bindMemory(to: UInt8.self))
        }
    }

    /// Year, month (1-12) and day (1-31) of a day counted from 1970-01-01, by Howard Hinnant's
    /// `civil_from_days` (eras of 400 years, years starting in March so that leap days come last).
    static func civilDate(daysSince1970: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = daysSince1970 + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}
