import AppleIDSimulator
import Foundation
import HTTPServer
import JOSE

/// Makes single-use sign-ins the way a browser would get them: a real `GET /login` (binding cookie, state,
/// nonce from the page), then an identity token for that nonce signed by the local stand-in for Apple.
/// Each sign-in is written as a complete `POST /apple_redirect` form_post, ready to be sent exactly once.
struct Preparation {
    let bridgePort: Int
    let count: Int
    let files: Int
    let workers: Int
    let directory: String
    let servicesID: String
    /// Subjects are `<prefix><index>`, so the verification can tell bench users from anything else.
    let subjectPrefix: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// One browser's view of a fresh login page.
    struct LoginPage {
        let state: String
        let nonce: String
        let bindingCookie: String
    }

    func run(simulator: AppleIDStandIn) throws {
        let started = Date()
        let made = Outputs(files: files)
        let failures = Outputs(files: 1)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let connection = KeepAliveConnection(port: bridgePort)
            for index in stride(from: worker, to: count, by: workers) {
                do {
                    let request = try makeSignIn(index: index, connection: connection, simulator: simulator)
                    made.add(request, file: index % files, index: index)
                } catch {
                    failures.add(Array("\(error)".utf8), file: 0, index: index)
                }
            }
        }
        if let first = failures.all(file: 0).first {
            throw Failure(description: "\(failures.all(file: 0).count) of \(count) sign-ins could not be prepared; first: "
                          + String(decoding: first, as: UTF8.self))
        }
        for file in 0..<files {
            try write(made.all(file: file), to: "\(directory)/requests.\(file + 1)")
        }
        let seconds = Date().timeIntervalSince(started)
        // Unbuffered: this process is terminated rather than ended, so nothing may stay in a buffer.
        FileHandle.standardOutput.write(Data(String(
            format: "  prepared %d sign-ins in %.1f s (%.0f/s: GET /login + token signing, %d workers)\n",
            count, seconds, Double(count) / seconds, workers).utf8))
    }

    /// The client address a reverse proxy on loopback would report for this sign-in's browser:
    /// every sign-in comes from its own address, as real users do.
    static func clientAddress(_ index: Int) -> String {
        "10.\((index >> 16) & 255).\((index >> 8) & 255).\(index & 255)"
    }

    func makeSignIn(index: Int, connection: KeepAliveConnection, simulator: AppleIDStandIn) throws -> [UInt8] {
        let client = Self.clientAddress(index)
        let page = try login(connection: connection, client: client)
        let token = try simulator.mintIdentityToken(IdentityTokenClaims(
            audience: servicesID, subject: subjectPrefix + String(index), nonce: page.nonce,
            email: "bench\(index)@example.com"))
        let body = FormFields([("state", page.state), ("id_token", token)]).urlEncoded
        let head = "POST /apple_redirect HTTP/1.1\r\nHost: 127.0.0.1:\(bridgePort)\r\n"
            + "Content-Type: application/x-www-form-urlencoded\r\nOrigin: https://appleid.apple.com\r\n"
            + "Cookie: \(page.bindingCookie)\r\nX-Forwarded-For: \(client)\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        return Array((head + body).utf8)
    }

    func login(connection: KeepAliveConnection, client: String) throws -> LoginPage {
        let request = "GET /login HTTP/1.1\r\nHost: 127.0.0.1:\(bridgePort)\r\nAccept: text/html\r\nX-Forwarded-For: \(client)\r\n\r\n"
        let answer = try connection.exchange(Array(request.utf8))
        guard answer.status == 200 else { throw Failure(description: "GET /login answered \(answer.status)") }
        let html = answer.text
        guard let state = Self.attribute("data-state", in: html), let nonce = Self.attribute("data-nonce", in: html),
              let binding = answer.headerValues("Set-Cookie").first(where: { $0.hasPrefix("asb_bind_") }),
              let pair = binding.split(separator: ";").first else {
            throw Failure(description: "GET /login gave no sign-in link or no binding cookie")
        }
        return LoginPage(state: state, nonce: nonce, bindingCookie: String(pair))
    }

    /// The value of `name="…"` in the page (state and nonce are base64url, so no entity decoding is needed).
    static func attribute(_ name: String, in html: String) -> String? {
        guard let start = html.range(of: " \(name)=\"") else { return nil }
        let rest = html[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }

    /// Records as wrk's script reads them: the byte length on its own line, then the raw request.
    func write(_ requests: [[UInt8]], to path: String) throws {
        var data = Data()
        data.reserveCapacity(requests.reduce(0) { $0 + $1.count + 8 })
        for request in requests {
            data.append(contentsOf: Array("\(request.count)\n".utf8))
            data.append(contentsOf: request)
        }
        try data.write(to: URL(fileURLWithPath: path))
    }
}

/// Results collected from many workers, kept in index order per output file.
final class Outputs: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [[(index: Int, bytes: [UInt8])]]

    init(files: Int) { items = Array(repeating: [], count: files) }

    func add(_ bytes: [UInt8], file: Int, index: Int) {
        lock.lock()
        items[file].append((index, bytes))
        lock.unlock()
    }

    func all(file: Int) -> [[UInt8]] {
        lock.lock()
        defer { lock.unlock() }
        return items[file].sorted { $0.index < $1.index }.map(\.bytes)
    }
}
