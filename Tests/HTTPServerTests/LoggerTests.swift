import Foundation
@testable import HTTPServer
@testable import Logging
import Testing
import TestSupport

/// Collects log lines written by a server under test.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    var logger: Logger { Logger(minimumLevel: .debug) { line in self.append(line) } }
    func append(_ line: String) { lock.lock(); stored.append(line); lock.unlock() }
    var lines: [String] { lock.lock(); defer { lock.unlock() }; return stored }
}

@Suite("Logger keeps every event on one line")
struct LoggerTests {
    @Test("CR LF (one Swift Character), lone controls, DEL, C1, NEL and line separators are escaped")
    func escapesPerScalar() {
        let hostile = "a\r\nb\rc\nd\u{0}e\u{1B}f\u{7F}g\u{85}h\u{9B}i\u{2028}j\u{2029}k\tl"
        let quoted = Logger.quoted(hostile)
        #expect(quoted == "\"a\\r\\nb\\rc\\nd\\u{0000}e\\u{001B}f\\u{007F}g\\u{0085}h\\u{009B}i\\u{2028}j\\u{2029}k\\tl\"")
        let unsafeLeft = quoted.unicodeScalars.filter { ($0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029) }
        #expect(unsafeLeft.isEmpty)
    }

    @Test("plain values stay bare; spaces, quotes and non-ASCII text are kept readable")
    func plainValues() {
        #expect(Logger.quoted("/healthz") == "/healthz")
        #expect(Logger.quoted("") == "\"\"")
        #expect(Logger.quoted("a b=\"c\\") == "\"a b=\\\"c\\\\\"")
        #expect(Logger.quoted("café") == "café")
        #expect(Logger.quoted("é x") == "\"é x\"")
    }

    @Test("a request path with %0d%0a writes one log line through a real server")
    func forgedPathThroughServer() throws {
        let log = LogLines()
        let server = MicroHTTPDListener(configuration: ServerConfiguration(host: "127.0.0.1", port: 0),
                                responder: testRouter(), logger: log.logger)
        try server.start()
        let path = "/x%0d%0atime=2026-01-01T00:00:00.000Z%20level=info%20event=account_deleted%20member=1"
            + "%c2%85event=a%e2%80%a8event=b"
        let response = try RawHTTPClient.request(port: server.port, path: path)
        server.shutdown()
        #expect(response.status == 404)
        let lines = log.lines
        #expect(lines.count == 1)
        let joined = lines.joined(separator: "\n")
        let breaks = joined.unicodeScalars.filter { ($0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029) }
        #expect(breaks.isEmpty)
        #expect(lines.first?.contains("path=\"/x\\r\\ntime=") == true)
    }
}

@Suite("Logger timestamps")
struct LoggerTimestampTests {
    @Test("timestamps are ISO 8601 UTC with milliseconds and within a second of now")
    func format() throws {
        let stamp = Logger.timestamp()
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let parsed = try #require(parser.date(from: stamp))
        #expect(stamp.count == 24)
        #expect(abs(parsed.timeIntervalSinceNow) < 2)
    }
}

@Suite("Logger timestamps without gmtime")
struct LoggerCivilDateTests {
    static func formatted(_ seconds: Int64, _ milliseconds: Int = 0) -> String {
        var bytes: [UInt8] = []
        Logger.appendTimestamp(secondsSince1970: seconds, milliseconds: milliseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("known instants, leap days and century years format as ISO 8601 UTC")
    func knownInstants() {
        #expect(Self.formatted(0) == "1970-01-01T00:00:00.000Z")
        #expect(Self.formatted(951_782_400, 7) == "2000-02-29T00:00:00.007Z")
        #expect(Self.formatted(4_107_542_399, 999) == "2100-02-28T23:59:59.999Z")
        #expect(Self.formatted(4_107_542_400) == "2100-03-01T00:00:00.000Z")
        #expect(Self.formatted(1_798_761_599, 123) == "2026-12-31T23:59:59.123Z")
        #expect(Self.formatted(-1) == "1969-12-31T23:59:59.000Z")
    }

    @Test("every day from 1960 to 2140 matches gmtime_r")
    func matchesGmtime() {
        var mismatches: [String] = []
        for day in Int64(-3_653)...Int64(62_000) {
            var seconds = Int(day * 86_400 + 45_296)  // 12:34:56
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let expected = String(format: "%04d-%02d-%02dT12:34:56.000Z", parts.tm_year + 1900, parts.tm_mon + 1,
                                  parts.tm_mday)
            let got = Self.formatted(Int64(seconds))
            if got != expected { mismatches.append("\(got) != \(expected)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
    }
}

@Suite("The request line")
struct RequestLineTests {
    /// Everything after the timestamp, which differs between two calls.
    static func withoutTime(_ line: String) -> Substring { line.drop { $0 != " " } }

    @Test("it reads exactly as the general log call writes it", arguments: [
        ("GET", "/healthz", 200, UInt64(499), nil as Int?),
        ("POST", "/apple_redirect", 303, 1_234_567, nil),
        ("GET", "/a path\"with=quotes", 404, 0, 2),
        ("", "", 0, 1000, nil),
    ])
    func sameAsGeneral(method: String, path: String, status: Int, microseconds: UInt64, aborted: Int?) throws {
        let lines = LogLines()
        let micros = "\(microseconds / 1000).\(String(microseconds % 1000 + 1000).dropFirst())"
        if let aborted {
            lines.logger.info("request", ["method": method, "path": path, "status": String(status),
                                          "duration_ms": micros, "aborted": String(aborted)])
        } else {
            lines.logger.info("request", ["method": method, "path": path, "status": String(status), "duration_ms": micros])
        }
        lines.logger.request(method: method, path: path, status: status, microseconds: microseconds, aborted: aborted)
        let written = lines.lines
        #expect(written.count == 2)
        #expect(Self.withoutTime(written[0]) == Self.withoutTime(written[1]))
        #expect(written[1].contains(" duration_ms=\(micros)"))
    }
}
