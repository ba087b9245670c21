import Foundation
import HTTPServer
import Testing
import TestSupport

@Suite("Static files under /public/")
final class StaticFilesTests {
    /// A package-like tree, made for each test and removed after it: a secret beside the public folder that
    /// traversal must never reach.
    let root: String

    init() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("static-\(UUID().uuidString)")
        self.root = root.path
        try FileManager.default.createDirectory(at: root.appendingPathComponent("Public/css"), withIntermediateDirectories: true)
        try "body{color:black}".write(to: root.appendingPathComponent("Public/css/site.css"), atomically: true, encoding: .utf8)
        try "console.log(1)".write(to: root.appendingPathComponent("Public/app.js"), atomically: true, encoding: .utf8)
        try "SECRET-PACKAGE".write(to: root.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func router(_ files: StaticFiles) -> Router {
        var router = Router()
        router.addPrefix("GET", "/public/") { try files.respond(to: $0) }
        return router
    }

    @Test("serves files with content type and cache headers, and 304 on a matching ETag")
    func servesFiles() throws {
        let files = try StaticFiles(directory: root + "/Public")
        try withServer(responder: router(files)) { server in
            let css = try RawHTTPClient.request(port: server.port, path: "/public/css/site.css")
            #expect(css.status == 200)
            #expect(css.text == "body{color:black}")
            #expect(css.header("Content-Type") == "text/css; charset=utf-8")
            #expect(css.header("Cache-Control") == "public, max-age=3600")
            let etag = try #require(css.header("ETag"))
            let js = try RawHTTPClient.request(port: server.port, path: "/public/app.js")
            #expect(js.header("Content-Type") == "text/javascript; charset=utf-8")
            let again = try RawHTTPClient.request(port: server.port, path: "/public/css/site.css", headers: [("If-None-Match", etag)])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
        }
    }

    @Test("If-None-Match gives 304 for the file's tag in a list, weak or not, or for *; 200 for other tags")
    func conditionalForms() throws {
        let files = try StaticFiles(directory: root + "/Public")
        try withServer(responder: router(files)) { server in
            let etag = try #require(try RawHTTPClient.request(port: server.port, path: "/public/app.js").header("ETag"))
            func status(_ headers: [(String, String)]) throws -> Int {
                try RawHTTPClient.request(port: server.port, path: "/public/app.js", headers: headers).status
            }
            #expect(try status([("If-None-Match", "\"other\", \(etag)")]) == 304)
            #expect(try status([("If-None-Match", "W/\(etag)")]) == 304)
            #expect(try status([("If-None-Match", "*")]) == 304)
            #expect(try status([("If-None-Match", "\"other\""), ("If-None-Match", etag)]) == 304)
            #expect(try status([("If-None-Match", "\"other\", W/\"another\"")]) == 200)
            #expect(try status([("If-None-Match", "")]) == 200)
        }
    }

    @Test("HEAD and 304 send no body and say the file's length, as a GET would (RFC 9110: never another length)")
    func lengthWithoutBody() throws {
        let files = try StaticFiles(directory: root + "/Public")
        try withServer(responder: router(files)) { server in
            let length = String("body{color:black}".utf8.count)
            let head = try RawHTTPClient.request(port: server.port, method: "HEAD", path: "/public/css/site.css")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == length)
            #expect(head.header("Content-Type") == "text/css; charset=utf-8")
            let etag = try #require(head.header("ETag"))
            let unchanged = try RawHTTPClient.request(port: server.port, path: "/public/css/site.css",
                                                      headers: [("If-None-Match", etag)])
            #expect(unchanged.status == 304)
            #expect(unchanged.body.isEmpty)
            #expect(unchanged.headerValues("Content-Length").allSatisfy { $0 == length })
            // A kept-alive client reading by Content-Length finds the next answer right after each of them.
            let connection = try KeepAliveHTTPConnection(port: server.port)
            #expect(try connection.request("HEAD", "/public/css/site.css").body.isEmpty)
            #expect(try connection.request("GET", "/public/app.js").text == "console.log(1)")
        }
    }

    @Test("refuses path traversal, plain and encoded", arguments: [
        "/public/../Package.swift", "/public/%2e%2e/Package.swift", "/public/%2E%2E%2FPackage.swift",
        "/public/..%2fPackage.swift", "/public/css/../../Package.swift", "/public/..%5cPackage.swift",
        "/public//Package.swift", "/public/%2e%2e%2f%2e%2e%2fetc/passwd", "/public/./app.js",
    ])
    func traversal(path: String) throws {
        let files = try StaticFiles(directory: root + "/Public")
        try withServer(responder: router(files)) { server in
            let response = try RawHTTPClient.request(port: server.port, path: path)
            #expect(response.status == 400 || response.status == 404)
            #expect(!response.text.contains("SECRET-PACKAGE"))
            #expect(!response.text.contains("root:"))
        }
    }

    @Test("404 for a file that is not there")
    func missingFile() throws {
        let files = try StaticFiles(directory: root + "/Public")
        let response = try? files.respond(to: Request(method: "GET", path: "/public/none.css"))
        #expect(response == nil)
        #expect(throws: HTTPError.self) { try files.respond(to: Request(method: "GET", path: "/public/none.css")) }
    }
}
