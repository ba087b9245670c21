import Foundation
import TextBytes

/// Serves files under a directory at a URL prefix. Files are read once at start-up, so a request can only
/// ever name a file that was there; `..`, encoded or not, never reaches the file system.
public struct StaticFiles: Sendable {
    struct File: Sendable {
        let relativePath: String
        let body: [UInt8]
        let contentType: String
        let etag: String
    }

    private let files: [String: File]
    public let urlPrefix: String
    public let maxAge: Int

    public init(directory: String, urlPrefix: String = "/public/", maxAge: Int = 3600) throws {
        self.urlPrefix = urlPrefix
        self.maxAge = maxAge
        var files: [String: File] = [:]
        let root = URL(fileURLWithPath: directory).standardizedFileURL
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else {
            throw HTTPError(500, "static file directory \(directory) cannot be read")
        }
        for case let url as URL in enumerator {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            let relative = String(url.standardizedFileURL.path.dropFirst(root.path.count + 1))
            let body = Array(try Data(contentsOf: url))
            files[relative] = File(relativePath: relative, body: body, contentType: StaticFiles.contentType(for: relative),
                                   etag: "\"\(StaticFiles.fingerprint(body))\"")
        }
        self.files = files
    }

    public var fileCount: Int { files.count }

    public func respond(to request: Request) throws -> Response {
        // By bytes, as the router matched the prefix: a path's first Characters may be longer than the prefix's.
        guard request.path.utf8.starts(with: urlPrefix.utf8) else { throw HTTPError(404, "There is no file at this address.") }
        let relative = String(decoding: request.path.utf8.dropFirst(urlPrefix.utf8.count), as: UTF8.self)
        let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: { $0 == ".." || $0 == "." || $0.isEmpty || $0.contains("\\") || $0.contains("\0") }) {
            throw HTTPError(400, "That file path is not allowed.")
        }
        guard let file = files[relative], file.relativePath.hasSameUTF8(as: relative) else { throw HTTPError(404, "There is no file at this address.") }
        var headers = HTTPHeaders([
            ("Content-Type", file.contentType),
            ("Cache-Control", "public, max-age=\(maxAge)"),
            ("ETag", file.etag),
            ("X-Content-Type-Options", "nosniff"),
        ])
        // The file goes with a HEAD and a 304 too: libmicrohttpd sends neither body, but its Content-Length is that
        // of the response it is given, and for those two it must be the file's (RFC 9110, 8.6), never 0.
        if Self.noneMatch(request.headers.values("If-None-Match"), fails: file.etag) {
            headers.remove("Content-Type")
            return Response(status: 304, headers: headers, body: file.body)
        }
        return Response(status: 200, headers: headers, body: file.body)
    }

    /// Whether `If-None-Match` (all its lines) names `etag`, so that the answer is 304 (RFC 9110, 13.1.2): `*`, or
    /// a list in which one entity tag matches by the weak comparison (`W/"x"` matches `"x"`).
    static func noneMatch(_ lines: [String], fails etag: String) -> Bool {
        lines.contains { line in
            line.split(separator: ",").contains { member in
                let tag = member.trimmingCharacters(in: .whitespaces)
                return tag == "*" || (tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)) == Substring(etag)
            }
        }
    }

    static func contentType(for path: String) -> String {
        switch path.split(separator: ".").last.map({ $0.lowercased() }) ?? "" {
        case "css": "text/css; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "html": "text/html; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "json": "application/json"
        case "txt": "text/plain; charset=utf-8"
        case "woff2": "font/woff2"
        default: "application/octet-stream"
        }
    }

    /// FNV-1a 64: a cheap content fingerprint for ETags (not a security boundary).
    static func fingerprint(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100000001b3 }
        return String(hash, radix: 16)
    }
}
