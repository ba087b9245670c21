/// The JSON error code of an error the HTTP layer raised itself, which carries only a status.
package enum HTTPErrorCode {
    package static func code(for status: Int) -> String {
        switch status {
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 413: "body_too_large"
        case 415: "unsupported_media_type"
        case 429: "rate_limited"
        case 503: "service_unavailable"
        default: "bad_request"
        }
    }
}
