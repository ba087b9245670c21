import HTTPServer

/// A stand-in for Apple's `appleid.auth.js`, served at the path Apple's CDN uses
/// (`/appleauth/static/jsapi/appleid/1/LOCALE/appleid.auth.js`), so a login page running Apple's JS SDK signs in
/// against the simulator. It implements what relying parties call: `AppleID.auth.init(config)` and
/// `AppleID.auth.signIn()`.
///
/// - Redirect mode (`usePopup: false`): the page goes to the simulator's authorize page, which form_posts back.
/// - Popup mode (`usePopup: true`): the authorize page opens in a popup with `response_mode=web_message`;
///   `signIn()` resolves with `{authorization: {code, id_token, state}, user?}` once the popup posts it back
///   (only a message from the popup itself, from the simulator's origin, counts), or rejects with
///   `{error: "user_cancelled_authorize"}` (Cancel), `{error: "popup_closed_by_user"}` (the popup was closed), or
///   `{error: "popup_blocked_by_browser"}`. The same outcomes are dispatched on `document` as Apple's
///   `AppleIDSignInOnSuccess` / `AppleIDSignInOnFailure` events.
enum AppleJSSDKStandIn {
    static let pathPrefix = "/appleauth/static/jsapi/appleid/1/"
    static let fileName = "/appleid.auth.js"

    /// Any locale segment, as on Apple's CDN.
    static func serves(_ path: String) -> Bool {
        guard path.hasPrefix(pathPrefix), path.hasSuffix(fileName) else { return false }
        let locale = path.dropFirst(pathPrefix.count).dropLast(fileName.count)
        return !locale.isEmpty && locale.allSatisfy { $0.isLetter || $0 == "_" || $0 == "-" }
    }

    static var response: Response { SimulatorAssets.asset(script, type: "text/javascript; charset=utf-8") }

    static let script = """
        "use strict";
        /* appleid.auth.js stand-in, served by the simulated Apple ID: development and tests only. */
        (function () {
          var POPUP_WATCH_MS = 250;
          var src = document.currentScript.src;
          var ORIGIN = new URL(src).origin;
          var BASE = src.slice(0, src.indexOf("\(pathPrefix)"));
          var config = null;

          function authorizeURL(responseMode) {
            var query = {
              client_id: config.clientId, redirect_uri: config.redirectURI, response_type: "code id_token",
              scope: config.scope || "", response_mode: responseMode, state: config.state || "", nonce: config.nonce || ""
            };
            return BASE + "/auth/authorize?" + Object.keys(query).map(function (name) {
              return encodeURIComponent(name) + "=" + encodeURIComponent(query[name]);
            }).join("&");
          }

          function dispatch(name, detail) {
            document.dispatchEvent(new CustomEvent(name, { detail: detail }));
          }

          function signInWithPopup() {
            return new Promise(function (resolve, reject) {
              var popup = window.open(authorizeURL("web_message"), "AppleAuthentication", "width=560,height=720");
              var watch = 0;
              function finish(data) {
                window.clearInterval(watch);
                window.removeEventListener("message", receive);
                if (popup && !popup.closed) { popup.close(); }
                if (data.error) {
                  dispatch("AppleIDSignInOnFailure", { error: data.error });
                  reject({ error: data.error });
                } else {
                  dispatch("AppleIDSignInOnSuccess", data);
                  resolve(data);
                }
              }
              function receive(event) {
                if (event.origin !== ORIGIN || event.source !== popup) { return; }
                var message = event.data;
                if (message && message.method === "\(WebMessagePage.method)" && message.data) { finish(message.data); }
              }
              if (!popup) { finish({ error: "popup_blocked_by_browser" }); return; }
              window.addEventListener("message", receive);
              watch = window.setInterval(function () {
                if (popup.closed) { finish({ error: "popup_closed_by_user" }); }
              }, POPUP_WATCH_MS);
            });
          }

          window.AppleID = {
            auth: {
              init: function (options) { config = options || {}; },
              signIn: function () {
                if (!config) { throw new Error("AppleID.auth.init() must be called first"); }
                if (config.usePopup) { return signInWithPopup(); }
                window.location.assign(authorizeURL("form_post"));
                return new Promise(function () {});
              }
            }
          };
        })();

        """
}
