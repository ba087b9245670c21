import Foundation
import Synchronization
import TestSupport

/// A stand-in PostgreSQL server on loopback that speaks just enough of the wire protocol (version 3, no TLS, no
/// password) to answer libpq: every statement succeeds, changing one row (`INSERT 0 1`, `UPDATE 1`, …) and returning
/// none. What a real server does only in a rare race can be scripted: `endSessionAtNextPipelineSync` makes it answer
/// every command of the next pipeline and then send, in place of the sync point's ReadyForQuery, the FATAL that a
/// backend told to stop between two messages sends (57P01), keeping the socket open a while, as a backend still
/// exiting does.
final class ScriptedPostgresServer: Sendable {
    let port: Int
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var endSessionAtPipelineSync = false
        var connections = 0
        var sessionsEnded = 0
        /// Sockets open now. Each is closed under the lock as it leaves this list, so `stop` never shuts down a
        /// descriptor number the process already gave to another socket (another test's connection).
        var clients: Set<Int32> = []
        var stopped = false
    }

    init() throws {
        let listening = try LoopbackListener(backlog: 16)
        listener = listening.descriptor
        port = listening.port
        let server = self
        Thread.detachNewThread { server.acceptLoop() }
    }

    /// A libpq connection string for this server.
    var conninfo: String {
        "host=127.0.0.1 port=\(port) user=scripted dbname=scripted sslmode=disable gssencmode=disable"
    }

    var url: String {
        "postgres://scripted@127.0.0.1:\(port)/scripted?sslmode=disable&gssencmode=disable"
    }

    func endSessionAtNextPipelineSync() { state.withLock { $0.endSessionAtPipelineSync = true } }
    var connections: Int { state.withLock { $0.connections } }
    var sessionsEnded: Int { state.withLock { $0.sessionsEnded } }
    /// Client sockets this server has open now.
    var openSessions: Int { state.withLock { $0.clients.count } }

    /// Wakes the accept loop, which then closes the listening socket (closed here, its number could be reused
    /// before the loop's next `accept`), and ends every session.
    func stop() {
        state.withLock { state in
            state.stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            for client in state.clients { shutdown(client, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            let acceptError = errno
            let accepted = state.withLock { state -> Bool in
                guard client >= 0, !state.stopped else { return false }
                state.connections += 1
                state.clients.insert(client)
                return true
            }
            guard accepted else {
                if client >= 0 { close(client) }
                if client < 0 && acceptError == EINTR { continue }
                close(listener)
                return
            }
            let server = self
            Thread.detachNewThread { server.serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        defer {
            state.withLock { state in
                state.clients.remove(client)
                close(client)
            }
        }
        let session = Session(client: client)
        guard session.startUp() else { return }
        var statements: [String: String] = [:]  // prepared name → SQL
        var portal = ""
        var executedSinceSync = 0
        while let (type, body) = session.readMessage() {
            var reader = MessageReader(body: body)
            switch type {
            case UInt8(ascii: "P"):  // Parse
                let name = reader.string(), sql = reader.string()
                statements[name] = sql
                session.sendMessage("1", [])
            case UInt8(ascii: "B"):  // Bind
                _ = reader.string()
                portal = statements[reader.string()] ?? ""
                session.sendMessage("2", [])
            case UInt8(ascii: "D"):  // Describe
                session.sendMessage("n", [])
            case UInt8(ascii: "E"):  // Execute
                executedSinceSync += 1
                session.sendMessage("C", Self.cString(Self.commandTag(portal)))
            case UInt8(ascii: "Q"):  // a simple query (SET …)
                session.sendMessage("C", Self.cString(Self.commandTag(reader.string())))
                session.sendMessage("Z", [UInt8(ascii: "I")])
            case UInt8(ascii: "S"):  // Sync
                // A sync after commands, not the one ending a PQprepare's Parse.
                let endSession = executedSinceSync > 0 && state.withLock { state in
                    defer { state.endSessionAtPipelineSync = false }
                    return state.endSessionAtPipelineSync
                }
                executedSinceSync = 0
                if endSession {
                    session.sendMessage("E", Self.fatalShutdown)
                    state.withLock { $0.sessionsEnded += 1 }
                    session.drainUntilClosed()
                    return
                }
                session.sendMessage("Z", [UInt8(ascii: "I")])
            case UInt8(ascii: "X"):  // Terminate
                return
            default:  // Flush, Close: nothing to answer
                continue
            }
        }
    }

    private static func commandTag(_ sql: String) -> String {
        let verb = sql.trimmingCharacters(in: .whitespacesAndNewlines).prefix { $0.isLetter }.uppercased()
        switch verb {
        case "INSERT": return "INSERT 0 1"
        case "UPDATE", "DELETE", "SELECT": return "\(verb) 1"
        default: return verb
        }
    }

    private static let fatalShutdown: [UInt8] = {
        var fields: [UInt8] = []
        for (code, value) in [("S", "FATAL"), ("V", "FATAL"), ("C", "57P01"),
                              ("M", "terminating connection due to administrator command")] {
            fields.append(UInt8(ascii: Unicode.Scalar(code)!))
            fields += cString(value)
        }
        return fields + [0]
    }()

    private static func cString(_ text: String) -> [UInt8] { Array(text.utf8) + [0] }
}

/// One client's socket: reads whole messages, writes framed ones.
private struct Session {
    let client: Int32

    /// Declines TLS and GSS encryption, then accepts the startup message without a password.
    func startUp() -> Bool {
        while true {
            guard let lengthBytes = readBytes(4), let rest = readBytes(Int(Self.int32(lengthBytes)) - 4), rest.count >= 4 else {
                return false
            }
            let code = Self.int32(Array(rest[0..<4]))
            if code == 80_877_103 || code == 80_877_104 {  // SSLRequest, GSSENCRequest
                writeBytes([UInt8(ascii: "N")])
                continue
            }
            sendMessage("R", Self.bytes(Int32(0)))  // AuthenticationOk
            for (name, value) in [("server_version", "15.0"), ("client_encoding", "UTF8"),
                                  ("standard_conforming_strings", "on"), ("integer_datetimes", "on")] {
                sendMessage("S", Array(name.utf8) + [0] + Array(value.utf8) + [0])
            }
            sendMessage("K", Self.bytes(Int32(4242)) + Self.bytes(Int32(1)))
            sendMessage("Z", [UInt8(ascii: "I")])
            return true
        }
    }

    func readMessage() -> (UInt8, [UInt8])? {
        guard let header = readBytes(5) else { return nil }
        guard let body = readBytes(Int(Self.int32(Array(header[1..<5]))) - 4) else { return nil }
        return (header[0], body)
    }

    func sendMessage(_ type: Character, _ body: [UInt8]) {
        writeBytes([type.asciiValue!] + Self.bytes(Int32(body.count + 4)) + body)
    }

    /// Reads until the client closes its end, as a backend does while it exits.
    func drainUntilClosed() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while recv(client, &buffer, buffer.count, 0) > 0 {}
    }

    private func readBytes(_ count: Int) -> [UInt8]? {
        guard count >= 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { recv(client, $0.baseAddress! + done, count - done, 0) }
            guard got > 0 else { return nil }
            done += got
        }
        return bytes
    }

    private func writeBytes(_ bytes: [UInt8]) {
        var done = 0
        while done < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            done += sent
        }
    }

    private static func int32(_ bytes: [UInt8]) -> Int32 {
        bytes.prefix(4).reduce(Int32(0)) { ($0 << 8) | Int32($1) }
    }

    private static func bytes(_ value: Int32) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}

private struct MessageReader {
    let body: [UInt8]
    var offset = 0

    mutating func string() -> String {
        let end = body[offset...].firstIndex(of: 0) ?? body.endIndex
        defer { offset = min(end + 1, body.endIndex) }
        return String(decoding: body[offset..<end], as: UTF8.self)
    }
}
