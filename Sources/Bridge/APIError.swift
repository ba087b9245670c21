import HTTPServer
import JOSE
import JSON

/// An error of the JSON API: `{"error": code, "message": text}` with its HTTP status.
struct APIError: Error {
    let status: Int
    let code: String
    let message: String
    var headers = HTTPHeaders()

    init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    var response: Response {
        var response = Response.json(JSONValue.object(["error": .string(code), "message": .string(message)]).serialized(),
                                     status: status)
        response.headers.set("Cache-Control", "no-store")
        for field in headers { response.headers.set(field.name, field.value) }
        return response
    }

    /// A lower-case technical reason as a sentence: capitalised, ending in a full stop.
    static func sentence(_ reason: String) -> String {
        guard let first = reason.first else { return reason }
        return first.uppercased() + reason.dropFirst() + (reason.hasSuffix(".") ? "" : ".")
    }

    static let unauthorized = APIError(401, "unauthorized", "A valid access token is required (Authorization: Bearer …).")
}

/// Answers API routes' thrown errors, and anything the HTTP layer refused, as JSON.
struct JSONErrors<Next: HTTPResponder>: HTTPResponder {
    let next: Next

    func respond(to request: Request) throws -> Response {
        do {
            var response = try next.respond(to: request)
            response.headers.set("Cache-Control", "no-store")
            return response
        } catch let error as APIError {
            return error.response
        } catch let error as HTTPError {
            var apiError = APIError(error.status, Self.code(for: error.status), error.message)
            apiError.headers = error.headers
            return apiError.response
        }
    }

    static func code(for status: Int) -> String {
        switch status {
        case 404: "not_found"
        case 405: "method_not_allowed"
        case 413: "body_too_large"
        case 415: "unsupported_media_type"
        case 429: "rate_limited"
        default: "bad_request"
        }
    }
}
