internal import COpenSSL

/// OpenSSL reports failures through a per-thread error queue. Every failure path in this
/// module drains it, so no stale error is left behind to confuse a later caller.
enum OpenSSLErrorQueue {
    /// Reads and clears every queued error; returns them joined, oldest first.
    static func drain() -> String {
        var messages: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while case let code = ERR_get_error(), code != 0 {
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.joined(separator: "; ")
    }

    /// Discards queued errors without formatting them (for expected failures such as a bad signature).
    static func clear() {
        ERR_clear_error()
    }

    /// A `JOSEError.crypto` naming the failed step, with OpenSSL's own reason if it gave one.
    static func failure(_ step: String) -> JOSEError {
        let reason = drain()
        return .crypto(reason.isEmpty ? step : "\(step) (\(reason))")
    }
}
