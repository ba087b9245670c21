import Foundation
import HTTPServer
import JOSE
import JSON
import WebPresentation

/// Reading an app's JSON body, whichever of the field names in use it sends.
extension NativeAPI {
    package static func jsonObject(_ request: Request) throws(APIError) -> JSONValue {
        guard request.hasMediaType("application/json") else { throw .unsupportedMediaType }
        guard let value = try? JSONValue.parse(request.body), case .object = value else { throw .malformedJSON }
        return value
    }

    /// The first of `names` that holds a non-blank string, trimmed.
    package static func firstString(_ body: JSONValue, _ names: [String]) -> String? {
        for name in names {
            if let value = body[name]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty { return value }
        }
        return nil
    }

    /// The Apple user id the app says it has (`snsUserId`, `userIdentifier`, or `user` as a plain string).
    package static func claimedSubject(_ body: JSONValue) -> String? {
        if let value = firstString(body, ["snsUserId", "userIdentifier"]) { return value }
        if let user = firstString(body, ["user"]), !user.hasPrefix("{") { return user }
        return nil
    }
}
