#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JOSE

/// The developer's Sign in with Apple key (the `.p8` file), with the team and key IDs that name it at Apple.
public struct AppleClientKey: Sendable {
    public let teamID: String
    public let keyID: String
    let privateKey: ECPrivateKey

    public var publicKey: ECPublicKey { privateKey.publicKey }

    public init(teamID: String, keyID: String, privateKey: ECPrivateKey) {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = privateKey
    }

    /// A .p8 is about 250 bytes; anything much larger is not one.
    static let maximumFileSize = 16_384

    /// Loads `path`, refusing a file that is missing, unreadable, open to group or others, not a PKCS#8 PEM
    /// private key, or not on P-256.
    public static func load(teamID: String, keyID: String, path: String) throws(ClientKeyError) -> AppleClientKey {
        var bytes = try readOwnerOnlyFile(path)
        defer { scrub(&bytes) }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("-----BEGIN PRIVATE KEY-----") else { throw .notPKCS8PrivateKey(path: path) }
        do {
            return AppleClientKey(teamID: teamID, keyID: keyID, privateKey: try ECPrivateKey(pem: text))
        } catch .invalidKey(let reason) {
            // A PEM that decoded but holds another kind of key or curve.
            throw .notP256(path: path, reason: reason)
        } catch {
            throw .notPKCS8PrivateKey(path: path)
        }
    }

    /// Opens first and checks the mode of what was opened, so the file checked is the file read.
    private static func readOwnerOnlyFile(_ path: String) throws(ClientKeyError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .missing(path: path) }
            throw .unreadable(path: path, reason: String(cString: strerror(code)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .unreadable(path: path, reason: "not a regular file") }
        let permissions = UInt32(info.st_mode) & 0o777
        guard permissions & 0o077 == 0 else { throw .openToOthers(path: path, mode: permissions) }

        var bytes = [UInt8](repeating: 0, count: maximumFileSize + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                read(fd, buffer.baseAddress! + count, buffer.count - count)
            }
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                scrub(&bytes)
                throw .unreadable(path: path, reason: reason)
            }
            count += got
        }
        defer { scrub(&bytes) }
        guard count <= maximumFileSize else { throw .notPKCS8PrivateKey(path: path) }
        return Array(bytes[..<count])
    }

    private static func scrub(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { memset(base, 0, buffer.count) }
        }
    }
}

/// Why the `.p8` key could not be used; each message names the file and what to do, never the key's bytes.
public enum ClientKeyError: Error, CustomStringConvertible, Equatable, Sendable {
    case missing(path: String)
    case unreadable(path: String, reason: String)
    /// `mode` holds the permission bits, e.g. 0o644.
    case openToOthers(path: String, mode: UInt32)
    case notPKCS8PrivateKey(path: String)
    case notP256(path: String, reason: String)

    public var description: String {
        switch self {
        case let .missing(path):
            "\(path) does not exist: download the key (.p8) from Certificates, Identifiers & Profiles → Keys and set APPLE_PRIVATE_KEY_PATH to it"
        case let .unreadable(path, reason):
            "\(path) cannot be read (\(reason)): make it a file owned by the user running the server, then run chmod 600 \(path)"
        case let .openToOthers(path, mode):
            "\(path) is \(mode & 0o044 != 0 ? "readable" : "writable") by group or others (mode \(Self.octal(mode))): run chmod 600 \(path)"
        case let .notPKCS8PrivateKey(path):
            "\(path) is not a PEM PKCS#8 private key (-----BEGIN PRIVATE KEY-----): use the .p8 file exactly as Apple issued it, unencrypted"
        case let .notP256(path, reason):
            "\(path) is not a P-256 key (\(reason)): Sign in with Apple keys are P-256; use the .p8 file Apple issued for this Key ID"
        }
    }

    private static func octal(_ mode: UInt32) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
