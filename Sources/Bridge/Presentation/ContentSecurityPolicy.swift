/// The content security policy of every HTML page this service sends: its own scripts and styles only, plus
/// Apple's JS SDK when APPLE_JS_SDK is on.
enum ContentSecurityPolicy {
    static func header(allowingAppleJSSDK: Bool) -> String {
        let script = allowingAppleJSSDK ? "'self' https://appleid.cdn-apple.com" : "'self'"
        return "default-src 'none'; script-src \(script); style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }
}
