// What the HTTP listener turns a request into, and what reads it: header fields collected one by one into
// HTTPHeaders, the query into FormFields, the head's checks (RequestHead: framing, Host, header names, the
// target's path), the Request values derived from them (cookies, media type, form body, client address behind a
// proxy, bearer token, Content-Length), and routing with static files and security headers. libmicrohttpd's own parsing and callbacks are not part of this target.
import Foundation
@testable import HTTPServer

/// Input: a request line `METHOD /path?query`, header lines `Name: value`, an empty line, then the body.
/// The first byte picks the peer address (a local proxy or a remote client).
func fuzzRequest(_ input: UnsafeBufferPointer<UInt8>) {
    guard let selector = input.first else { return }
    let request = makeRequest(from: UnsafeBufferPointer(rebasing: input.dropFirst()),
                              remoteAddress: selector & 1 == 0 ? "127.0.0.1" : "203.0.113.7")
    readEverything(request)
    route(request)
}

private func makeRequest(from bytes: UnsafeBufferPointer<UInt8>, remoteAddress: String) -> Request {
    let text = String(decoding: bytes, as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
    let requestLine = lines.popFirst() ?? ""
    let parts = requestLine.split(separator: " ", maxSplits: 1)
    let method = parts.first.map(String.init) ?? "GET"
    let target = parts.count > 1 ? parts[1] : "/"
    let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    let query = target.firstIndex(of: "?").map { FormFields(urlEncoded: String(target[target.index(after: $0)...])) }

    var headers = HTTPHeaders()
    while let line = lines.popFirst(), !line.isEmpty {
        let colon = line.firstIndex(of: ":") ?? line.endIndex
        let value = colon == line.endIndex ? "" : line[line.index(after: colon)...].drop { $0 == " " }
        headers.add(String(line[..<colon]), String(value))
    }
    let body = Array(lines.joined(separator: "\n").utf8)
    return Request(method: method, path: String(path), query: query ?? FormFields(), headers: headers, body: body,
                   remoteAddress: remoteAddress)
}

private func readEverything(_ request: Request) {
    _ = request.cookies
    _ = request.mediaType
    _ = request.formBody
    _ = request.bearerToken
    _ = request.headers["Content-Length"].flatMap { Int($0) }
    let client = request.clientAddress
    if !request.remoteAddress.hasPrefix("127."), client != request.remoteAddress {
        fatalError("a remote peer chose its client address: \(client)")
    }
    for field in request.headers {
        for known in ["Content-Length", "cookie", "AUTHORIZATION", "X-Forwarded-For", "Transfer-Encoding"] {
            let same = HTTPHeaders.sameName(field.name, known)
            if field.name.utf8.allSatisfy({ $0 < 0x80 }), same != (field.name.lowercased() == known.lowercased()) {
                fatalError("header name comparison is wrong for \(field.name) and \(known)")
            }
        }
        guard request.headers[field.name] != nil else { fatalError("a header cannot be found by its own name") }
    }
    checkHead(request)
    var copy = request.headers
    copy.set("Cache-Control", "no-store")
    copy.remove("content-length")
    guard copy["Content-Length"] == nil, copy.values("cache-control") == ["no-store"] else {
        fatalError("set/remove left the wrong fields")
    }
}

private func checkHead(_ request: Request) {
    let problem = RequestHead.problem(isHTTP11: request.method.utf8.count % 2 == 0, headers: request.headers)
    // Bytes: a space followed by a combining mark is one Character, which `hasSuffix(" ")` does not see.
    if problem == nil, request.headers.contains(where: { $0.name.utf8.contains { $0 == 0x20 || $0 == 0x09 } }) {
        fatalError("a header name with whitespace passed")
    }
    if problem == nil, request.headers.filter({ HTTPHeaders.sameName($0.name, "Authorization") }).count > 1 {
        fatalError("two Authorization headers passed")
    }
    for field in request.headers where HTTPHeaders.sameName(field.name, "Host") && RequestHead.isHost(field.value) {
        if field.value.utf8.contains(where: { " /?#@\\\t\r\n\"<>".utf8.contains($0) || $0 >= 0x80 }) {
            fatalError("a Host with a character no host has passed: \(field.value)")
        }
    }
    // Bytes: `hasPrefix("/")` compares Characters, and `/` followed by a combining mark is one Character.
    let path = RequestHead.path(ofTarget: request.path)
    if !path.utf8.elementsEqual(request.path.utf8), path.utf8.first != UInt8(ascii: "/") {
        fatalError("an absolute-form target became a path that does not start with /: \(path)")
    }
}

/// Answers every error of its group itself, marked as the group's.
private struct MarkingMiddleware: RouteMiddleware {
    func respond(to request: Request, next: (Request) -> Reply) -> Reply {
        next(request).recover { error in
            guard let error = error as? HTTPError else { throw error }
            return .text(error.message, status: error.status)
        }.map { response in
            var response = response
            response.headers.set("X-Group", "api")
            return response
        }
    }
}

private let apiGroup = RouteGroup("api", owning: ["/api/"], MarkingMiddleware())

/// A small site: exact routes, a prefix with static files, a group owning `/api/`, security headers on top.
private let site: SecurityHeaders<Router> = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asb-fuzz-public-\(getpid())")
    try? FileManager.default.createDirectory(at: directory.appendingPathComponent("css"), withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("css/site.css").path,
                                       contents: Data("body{}".utf8))
    _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("robots.txt").path,
                                       contents: Data("User-agent: *".utf8))
    guard let files = try? StaticFiles(directory: directory.path) else { fatalError("static files did not load") }
    try? FileManager.default.removeItem(at: directory)
    var router = Router()
    router.add("GET", "/login") { request in .text("login \(request.query["next"] ?? "")") }
    router.add("POST", "/apple_redirect") { request in .text("form \(request.formBody?.pairs.count ?? -1)") }
    router.addPrefix("GET", files.urlPrefix) { try files.respond(to: $0) }
    router.add("GET", "/api/me", apiGroup.route { _ in .text("me") })
    return SecurityHeaders(router, sessionCookieNames: ["asb_session"])
}()

private func route(_ request: Request) {
    do {
        let response = try site.respond(to: request).wait()
        // Whatever follows `/api/` (a combining mark included), the group owning the prefix answers.
        if request.path.utf8.starts(with: "/api/".utf8), response.headers["X-Group"] != "api" {
            fatalError("a path under /api/ was not answered by the group owning /api/")
        }
        if !request.path.utf8.starts(with: "/api/".utf8), response.headers["X-Group"] != nil {
            fatalError("a path outside /api/ was answered by the group owning /api/")
        }
        if request.path.hasPrefix("/public/"), response.status == 200,
           response.body != Array("body{}".utf8), response.body != Array("User-agent: *".utf8), request.method != "HEAD" {
            fatalError("static files served something that is not one of its files")
        }
    } catch let error as HTTPError {
        guard (400..<500).contains(error.status) else { fatalError("a request got a \(error.status)") }
    } catch {
        fatalError("an unexpected error escaped: \(error)")
    }
}
