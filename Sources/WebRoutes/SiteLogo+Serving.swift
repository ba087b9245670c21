import BridgeSettings
import HTTPServer

extension SiteLogo {
    /// Serves the logo file read at start-up (`BRIDGE_SITE_LOGO` naming a file outside `Public/`).
    package func respond(_ request: Request) throws -> Response {
        guard let served else { throw HTTPError(404, "There is no file at this address.") }
        var response = Response(status: 200, headers: HTTPHeaders([("Content-Type", served.contentType)]), body: served.body)
        response.headers.set("Cache-Control", "public, max-age=3600")
        return response
    }
}
