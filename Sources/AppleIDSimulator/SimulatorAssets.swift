import HTTPServer

/// The stylesheet and script the simulator's pages load, served by the simulator itself so a strict
/// Content-Security-Policy (no inline script or style) holds.
enum SimulatorAssets {
    static let scriptPath = "/auth/simulator.js"
    static let stylesheetPath = "/auth/simulator.css"

    static var scriptResponse: Response { asset(script, type: "text/javascript; charset=utf-8") }
    static var stylesheetResponse: Response { asset(stylesheet, type: "text/css; charset=utf-8") }

    /// A script or style sheet as the simulator serves them: never cached, never sniffed.
    static func asset(_ text: String, type: String) -> Response {
        var response = Response(status: 200, body: Array(text.utf8))
        response.headers.set("Content-Type", type)
        response.headers.set("Cache-Control", "no-cache")
        response.headers.set("X-Content-Type-Options", "nosniff")
        return response
    }

    /// Submits the form_post back to the relying party, as Apple's page does; the visible button remains for no-JS.
    /// In a popup (web_message) it posts the result to the opener, addressed to the redirect URI's origin so no
    /// other page can read it; the opener closes the popup once it has the answer, and this page closes itself
    /// after POPUP_CLOSE_MS should the opener not.
    static let script = """
        "use strict";
        (function () {
          var POPUP_CLOSE_MS = 3000;
          var form = document.querySelector("form[data-auto-submit]");
          if (form) { form.submit(); }
          var message = document.getElementById("web-message");
          if (message && window.opener) {
            window.opener.postMessage(JSON.parse(message.getAttribute("data-message")),
                                      message.getAttribute("data-target-origin"));
            window.setTimeout(function () { window.close(); }, POPUP_CLOSE_MS);
          }
        })();

        """

    static let stylesheet = """
        :root { color-scheme: light dark; --fg: #1d1d1f; --muted: #6e6e73; --bg: #f5f5f7; --card: #fff;
          --line: #d2d2d7; --accent: #0071e3; --warn-bg: #fff4ce; --warn-fg: #5c4400;
          /* White on this blue is 4.7:1 in both schemes; dark mode's lighter --accent (#2997ff) is not (3.0:1). */
          --primary-bg: #0071e3; }
        @media (prefers-color-scheme: dark) {
          :root { --fg: #f5f5f7; --muted: #a1a1a6; --bg: #000; --card: #1c1c1e; --line: #3a3a3c;
            --accent: #2997ff; --warn-bg: #3d3200; --warn-fg: #ffe58f; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; font: 17px/1.45 -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
          color: var(--fg); background: var(--bg); }
        .banner { background: var(--warn-bg); color: var(--warn-fg); text-align: center; font-weight: 600;
          padding: .6rem 1rem; font-size: .9rem; border-bottom: 1px solid var(--line); }
        .banner p { margin: 0; }
        .card { max-width: 28rem; margin: 1.5rem auto; padding: 1.5rem; background: var(--card);
          border-radius: 18px; box-shadow: 0 2px 12px rgba(0, 0, 0, .08); }
        @media (max-width: 30rem) { .card { margin: 0; border-radius: 0; box-shadow: none; min-height: 100vh; } }
        h1 { font-size: 1.5rem; margin: 0 0 .5rem; text-align: center; }
        p { margin: .5rem 0; }
        .lead { text-align: center; }
        .muted, small { color: var(--muted); }
        fieldset { border: 0; padding: 0; margin: 1.25rem 0 0; }
        legend { font-weight: 600; margin-bottom: .5rem; }
        .option { display: flex; gap: .75rem; align-items: center; padding: .75rem; border: 1px solid var(--line);
          border-radius: 12px; margin-bottom: .5rem; cursor: pointer; }
        .option input { flex: 0 0 auto; width: 1.2rem; height: 1.2rem; margin: 0; accent-color: var(--accent); }
        .option span { display: flex; flex-direction: column; }
        .actions { display: flex; flex-direction: column; gap: .6rem; margin-top: 1.5rem; }
        button { font: inherit; font-weight: 600; padding: .8rem 1rem; border-radius: 12px; cursor: pointer;
          min-height: 44px; }
        .primary { background: var(--primary-bg); color: #fff; border: 0; }
        .secondary { background: transparent; color: var(--accent); border: 1px solid var(--line); }
        code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; word-break: break-all; }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem .75rem; }
        dt { font-weight: 600; }
        dd { margin: 0; }
        ul.endpoints { padding-left: 1.2rem; }

        """
}
