"""Real-browser tests: headless Chromium against `apple-signin-bridge dev` and its Apple ID simulator.

Walks the web sign-in, cancel, the re-POST page, the iOS webview bridge (for the bridge and for an OpenID client), the JS SDK mode with an SDK that never
arrives, the JS SDK's popup mode (sign-in, return_to, cancel and a closed popup, a tampered state), Korean pages, Continue as, sign-out (confirmed, and from a stale tab), GET on POST-only addresses,
return_to allowed and refused, the rate-limit page, and the Android relay's page (its redirect to intent:// held); checks every page of the bridge and the simulator with axe-core at phone (390x844, 3x) and desktop (1280x800) sizes, light
and dark (no serious or critical violation allowed), and writes a screenshot of each to the screenshot folder.
Usage: run_browser_tests.py EXECUTABLE RESOURCES_DIR SCREENSHOT_DIR
Prints one line per check and closes with "N passed, N failed"; exits 1 if anything failed."""
import base64
import hashlib
import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from cdp import Browser, Page, clean_dir, free_port

EXECUTABLE, RESOURCES, SHOTS = (os.path.abspath(argument) for argument in sys.argv[1:4])
APP_BUNDLE_ID = "dev.applesigninbridge.app"  # the dev server's default APPLE_BUNDLE_IDS
SERVICES_ID = "dev.applesigninbridge.web"  # the dev server's default APPLE_SERVICES_ID
ANDROID_PACKAGE = "dev.applesigninbridge.flutter"  # in the plain server's APPLE_ANDROID_PACKAGES
SDK_SCRIPT = "appleid.auth.js"  # Apple's JS SDK; in development the simulator serves a stand-in under this name
VARIANTS = [("phone", 390, 844, 3, True), ("desktop", 1280, 800, 1, False)]
SCHEMES = ["light", "dark"]


def axe_source():
    """axe-core as bundled in the pinned axe-playwright-python wheel (only its axe.min.js is used)."""
    spec = importlib.util.find_spec("axe_playwright_python")
    path = os.path.join(spec.submodule_search_locations[0], "axe.min.js")
    with open(path, encoding="utf-8") as file:
        return file.read()


AXE = axe_source()
AXE_VERSION = re.search(r"axe v([0-9.]+)", AXE[:200]).group(1)


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = []
        self.axe_summary = []

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print(f"ok   {name}" + (f" — {detail}" if detail else ""), flush=True)
        else:
            self.failed.append(name)
            print(f"FAIL {name}" + (f" — {detail}" if detail else ""), flush=True)
        return ok


class Server:
    """`apple-signin-bridge dev` on free loopback ports with its own temporary data folder."""

    def __init__(self, extra_env=None, simulator_port=None):
        self.port, self.simulator_port = free_port(), simulator_port or free_port()
        self.directory = tempfile.mkdtemp(prefix="asb-browser-")
        env = dict(os.environ, BRIDGE_PORT=str(self.port), SIMULATOR_PORT=str(self.simulator_port), **(extra_env or {}))
        for key in ["BRIDGE_PUBLIC_URL", "APPLE_ID_URL", "BRIDGE_DATABASE", "BRIDGE_SECRET_KEY"]:
            env.pop(key, None)
        self.log = open(os.path.join(self.directory, "server.log"), "w")
        self.process = subprocess.Popen([EXECUTABLE, "dev", "--resources", RESOURCES], cwd=self.directory, env=env,
                                        stdout=self.log, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        self.simulator = f"http://127.0.0.1:{self.simulator_port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=1)
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"the dev server did not start; see {self.log.name}")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Session:
    """The browser tab plus the helpers the flows share."""

    def __init__(self, page, results):
        self.page = page
        self.results = results

    def emulate(self, width, height, scale, mobile, scheme):
        self.page.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=scale,
                       mobile=mobile)
        self.page.call("Emulation.setTouchEmulationEnabled", enabled=mobile, maxTouchPoints=5 if mobile else 1)
        self.page.call("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": scheme}])

    def reset_emulation(self):
        self.emulate(1280, 800, 1, False, "light")

    def screenshot(self, path):
        metrics = self.page.call("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        shot = self.page.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                              clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["data"]))

    def axe(self):
        if not self.page.js("typeof window.axe !== 'undefined'"):
            self.page.call("Runtime.evaluate", expression=AXE, returnByValue=True)
        return self.page.js("""axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v => ({
            id: v.id, impact: v.impact, nodes: v.nodes.length,
            targets: v.nodes.slice(0, 3).map(n => n.target.join(' '))})))""", await_promise=True, timeout=60)

    def check_page(self, name, enforce=True, loading=False):
        """axe and a screenshot at every size and colour scheme; serious/critical violations fail unless not ours."""
        for size, width, height, scale, mobile in VARIANTS:
            for scheme in SCHEMES:
                self.emulate(width, height, scale, mobile, scheme)
                self.page.settle(loading)
                violations = self.axe()
                if violations is None:
                    self.results.check(f"axe {name} {size} {scheme}", False, "axe did not run")
                    continue
                blocking = [v for v in violations if v["impact"] in ("serious", "critical")]
                others = [v for v in violations if v not in blocking]
                self.screenshot(os.path.join(SHOTS, f"{name}-{size}-{scheme}.png"))
                summary = ", ".join(f"{v['id']} ({v['impact']}, {v['nodes']}: {'; '.join(v['targets'])})"
                                    for v in blocking) or "no serious/critical"
                if others:
                    summary += f"; minor/moderate: {', '.join(v['id'] for v in others)}"
                self.results.axe_summary.append((name, size, scheme, len(blocking), len(others)))
                if enforce:
                    self.results.check(f"axe {name} {size} {scheme}", not blocking, summary)
                else:
                    print(f"info axe {name} {size} {scheme} (the simulator, not the bridge's page) — {summary}",
                          flush=True)
        self.reset_emulation()
        self.page.settle(loading)

    def start_sign_in(self, server):
        page = self.page
        page.call("Network.clearBrowserCookies")
        page.navigate(server.base + "/login")
        page.js("document.getElementById('apple-signin').click()")
        return page.wait_for("location.pathname === '/auth/authorize' && document.readyState === 'complete'", 10)

    def consent(self, hide_email=False):
        if hide_email:
            self.page.js("(document.querySelector('input[name=email_choice][value=hide]') || {}).checked = true")
        self.page.js("document.querySelector('button[value=continue]').click()")

    def binding_cookie(self, server):
        cookies = self.page.call("Network.getCookies", urls=[server.base + "/apple_redirect"])["cookies"]
        return next((c for c in cookies if c["name"].startswith("asb_bind_")), None)


# ---- Flows ------------------------------------------------------------------------------------------------------

def web_sign_in(s, server):
    page, check = s.page, s.results.check
    page.call("Network.clearBrowserCookies")
    page.navigate(server.base + "/login")
    check("login page heading names the site", (page.js("document.querySelector('h1').innerText") or "")
          .startswith("Sign in to"))
    check("Apple button says Sign in with Apple",
          page.js("document.querySelector('#apple-signin').innerText.trim()") == "Sign in with Apple")
    s.check_page("login")
    page.js("document.getElementById('apple-signin').click()")
    at_apple = page.wait_for("location.pathname === '/auth/authorize' && document.readyState === 'complete'")
    check("the tap leads to the simulator's consent page", at_apple)
    s.check_page("simulator-consent")
    s.emulate(390, 844, 3, True, "light")
    page.settle()
    widths = page.js("[...document.querySelectorAll('.option input')].map(e => Math.round(e.getBoundingClientRect().width))")
    check("on a phone the simulator's radio buttons keep their size", bool(widths) and min(widths) >= 19, str(widths))
    s.reset_emulation()
    s.consent(hide_email=True)
    signed_in = page.wait_for("location.pathname === '/session' && document.readyState === 'complete'", 15)
    check("web sign-in lands on /session", signed_in,
          page.js("document.querySelector('h1') && document.querySelector('h1').innerText") or "")
    check("session page says how (web)", page.js("document.getElementById('flow').dataset.flow") == "web")
    s.check_page("session")
    s.emulate(390, 844, 3, True, "light")
    page.settle()
    split = page.js("""[...document.querySelectorAll('.email-part')].filter(e => e.getClientRects().length > 1)
        .map(e => e.textContent)""")
    relay = page.js("document.querySelector('.email') && document.querySelector('.email').textContent") or ""
    check("the relay address never breaks inside a domain label on a phone", split == [] and "privaterelay" in relay,
          relay)
    s.reset_emulation()
    page.js("document.querySelector('details.technical summary').click()")
    s.check_page("session-details")
    page.navigate(server.base + "/login")
    shown = page.js("document.getElementById('continue') && document.getElementById('continue').innerText") or ""
    check("signed in, /login offers Continue as the person", shown.startswith("Continue as "), shown)
    check("... and the way to use another Apple ID", page.js("document.getElementById('apple-signin') !== null"))
    s.check_page("login-continue")
    page.navigate(server.base + "/session")
    page.js("document.querySelector('form[action=\"/logout\"] button').click()")
    check("Sign out returns to /login and says so", page.wait_for(
        "location.pathname === '/login' && document.getElementById('signed-out') !== null", 10))
    check("the confirmation reads You are signed out",
          page.js("document.getElementById('signed-out').innerText") == "You are signed out.")
    s.check_page("signed-out")


def stale_sign_out(s, server):
    """A tab whose CSRF token went stale: the sign-out is explained and its own button works."""
    page, check = s.page, s.results.check
    s.start_sign_in(server)
    s.consent()
    page.wait_for("location.pathname === '/session' && document.readyState === 'complete'", 15)
    page.js("document.querySelector('form[action=\"/logout\"] input[name=csrf]').value = 'stale'")
    page.js("document.querySelector('form[action=\"/logout\"] button').click()")
    shown = page.wait_for("document.getElementById('sign-out') !== null", 10)
    check("a stale sign-out asks again kindly, with a working button", shown,
          page.js("document.querySelector('h1') && document.querySelector('h1').innerText") or "")
    s.check_page("sign-out-stale")
    page.js("document.getElementById('sign-out').click()")
    check("its Sign out button signs out", page.wait_for(
        "location.pathname === '/login' && document.getElementById('signed-out') !== null", 10))


def simulator_pages(s, server):
    """The simulator's other pages are held to the same axe rules as the bridge's."""
    page, check = s.page, s.results.check
    page.navigate(server.simulator + "/")
    check("the simulator's banner sits in a landmark",
          page.js("document.querySelector('.banner').closest('header, main, nav, footer, aside, [role=banner], "
                  "[role=main], [role=contentinfo], [role=navigation], [role=region]') !== null"))
    s.check_page("simulator-home")
    page.navigate(server.simulator + "/auth/authorize")
    s.check_page("simulator-error")


def korean(s, server):
    page, check = s.page, s.results.check
    page.call("Network.clearBrowserCookies")
    page.call("Network.setExtraHTTPHeaders", headers={"Accept-Language": "ko-KR,ko;q=0.9,en;q=0.5"})
    try:
        page.navigate(server.base + "/login")
        check("Accept-Language: ko gives the Korean login page", page.js("document.documentElement.lang") == "ko"
              and page.js("document.querySelector('#apple-signin').innerText.trim()") == "Apple로 로그인")
        check("Korean text renders in a CJK font, not boxes",
              page.js("document.fonts.check('16px sans-serif', '로그인')") is True)
        s.check_page("login-ko")
        page.navigate(server.base + "/no-such-page")
        check("the Korean 404 page", page.js("document.querySelector('h1').innerText") == "페이지를 찾을 수 없습니다")
        s.check_page("not-found-ko")
        s.start_sign_in(server)
        page.js("document.querySelector('button[value=cancel]').click()")
        page.wait_for("document.querySelector('h1') && document.querySelector('h1').innerText === '로그인이 취소되었습니다'", 10)
        s.check_page("cancelled-ko")
        page.navigate(server.base + "/login")
        page.js("document.querySelector('nav.languages a[hreflang=en]').click()")
        check("the language switch turns the page English", page.wait_for(
            "document.documentElement.lang === 'en' && document.readyState === 'complete'", 10))
        page.navigate(server.base + "/login")
        check("... and the choice is remembered over Accept-Language", page.js("document.documentElement.lang") == "en")
    finally:
        page.call("Network.setExtraHTTPHeaders", headers={})
        page.call("Network.clearBrowserCookies")


def rate_limited(s, server):
    """Past the limit, /login answers with a page that counts down and then continues by itself."""
    page, check = s.page, s.results.check
    flooding = threading.Event()
    flooding.set()

    def flood():  # the same loopback address as the browser, so it spends the browser's allowance
        while flooding.is_set():
            try:
                urllib.request.urlopen(server.base + "/login", timeout=5).read()
            except OSError:
                pass

    threads = [threading.Thread(target=flood, daemon=True) for _ in range(4)]
    page.call("Fetch.enable", patterns=[{"urlPattern": "*/public/js/retry-countdown.js*", "requestStage": "Request"}])
    try:
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        page.call("Page.navigate", url=server.base + "/login")
        paused = page.wait_event("Fetch.requestPaused", 15)
        flooding.clear()
        check("past the limit /login shows the rate-limit page", paused is not None
              and page.wait_for("document.getElementById('retry-countdown') !== null", 5))
        if paused is None:
            return
        check("its button waits", page.js("document.getElementById('retry-button').getAttribute('aria-disabled')") == "true")
        s.check_page("rate-limited", loading=True)
        page.call("Fetch.continueRequest", requestId=paused["requestId"])
    finally:
        flooding.clear()
        page.call("Fetch.disable")
    check("when the wait is over the page continues to the login page by itself", page.wait_for(
        "document.getElementById('apple-signin') !== null", 15))


def post_only_pages(s, server):
    page, check = s.page, s.results.check
    for path, onward, name in [("/apple_redirect", "/login", "get-apple-redirect"), ("/logout", "/session", "get-logout"),
                               ("/account/delete", "/session", "get-account-delete")]:
        page.navigate(server.base + path)
        link = page.js("document.querySelector('main a.button-primary') && "
                       "document.querySelector('main a.button-primary').getAttribute('href')")
        check(f"GET {path} explains and offers the way onward", link == onward
              and "Method Not Allowed" not in (page.js("document.body.innerText") or ""), str(link))
        s.check_page(name)


def return_to(s, server):
    page, check = s.page, s.results.check
    for target, expected, label in [("/session?from=return", "?from=return", "allowed"),
                                    ("//evil.example/", "", "refused")]:
        page.call("Network.clearBrowserCookies")
        page.navigate(server.base + "/login?return_to=" + urllib.parse.quote(target, safe=""))
        page.js("document.getElementById('apple-signin').click()")
        page.wait_for("location.pathname === '/auth/authorize' && document.readyState === 'complete'", 10)
        s.consent()
        landed = page.wait_for("location.host === '%s' && location.pathname === '/session'"
                               " && document.readyState === 'complete'" % f"127.0.0.1:{server.port}", 15)
        check(f"return_to {label}: lands on /session{expected}", landed and page.js("location.search") == expected,
              page.js("location.href") or "")


def account_deletion(s, server):
    page, check = s.page, s.results.check
    s.start_sign_in(server)
    s.consent()
    page.wait_for("location.pathname === '/session' && document.readyState === 'complete'", 15)
    page.js("document.querySelector('form[action=\"/account/delete\"] button').click()")
    page.wait_for("document.querySelector('input[name=confirm]') !== null", 10)
    order = page.js("[...document.querySelectorAll('form.actions-confirm > a, form.actions-confirm > button')]"
                    ".map(e => e.className)")
    check("Cancel comes before the destructive button", order == ["button", "button-danger"], str(order))
    s.check_page("account-delete")
    page.js("document.querySelector('button.button-danger').click()")
    deleted = page.wait_for("document.querySelector('.lead-primary') !== null", 10)
    check("account deleted page", deleted)
    colours = page.js("""[getComputedStyle(document.querySelector('.lead-primary')).color,
        getComputedStyle(document.querySelector('h1')).color]""")
    check("the deletion result's main sentence is in the text colour", colours and colours[0] == colours[1],
          str(colours))
    s.check_page("account-deleted")


def cancel(s, server):
    page, check = s.page, s.results.check
    s.start_sign_in(server)
    page.js("document.querySelector('button[value=cancel]').click()")
    shown = page.wait_for("document.querySelector('h1') && document.querySelector('h1').innerText === "
                          "'Sign-in cancelled'", 10)
    check("cancel shows a neutral Sign-in cancelled page", shown)
    text = page.js("document.querySelector('main').innerText") or ""
    check("no '!' and no error code on the cancelled page", "!" not in text and "Error" not in text
          and page.js("document.querySelector('.error-icon') === null"), text.replace("\n", " | "))
    check("one action on the cancelled page", page.js("document.querySelectorAll('main a').length") == 1)
    s.check_page("cancelled")


def repost(s, server):
    """Apple's cross-site POST arrives without the SameSite=None binding cookie: the re-POST page finishes it."""
    page, check = s.page, s.results.check
    s.start_sign_in(server)
    cookie = s.binding_cookie(server)
    check("the login page set a binding cookie", cookie is not None)
    if cookie is None:
        return
    page.call("Network.deleteCookies", name=cookie["name"], url=server.base + "/apple_redirect")
    # Hold repost.js so the page can be looked at before it submits itself.
    page.call("Fetch.enable", patterns=[{"urlPattern": "*/public/js/repost.js*", "requestStage": "Request"}])
    try:
        s.consent()
        paused = page.wait_event("Fetch.requestPaused", 15)
        check("the callback without the cookie answers with the re-POST page", paused is not None and
              page.wait_for("document.getElementById('repost') !== null", 5))
        if paused is None:
            return
        s.check_page("repost", loading=True)
        page.call("Network.setCookie", name=cookie["name"], value=cookie["value"], url=server.base + "/apple_redirect",
                  path=cookie["path"], secure=cookie["secure"], httpOnly=cookie["httpOnly"], sameSite="None")
        page.call("Fetch.continueRequest", requestId=paused["requestId"])
    finally:
        page.call("Fetch.disable")
    check("the re-POST, now with its cookie, signs in", page.wait_for("location.pathname === '/session'", 15))


FAKE_HANDLER = """
window.__appleLoginMessages = [];
window.webkit = { messageHandlers: { appleLogin: { postMessage: (message) => {
  window.__appleLoginMessages.push(JSON.parse(JSON.stringify(message))); } } } };
"""


def sign_in_link(page):
    """What the login page's Sign in with Apple link hands the webview bridge."""
    return page.js("({state: document.getElementById('apple-signin').dataset.state, "
                   "nonce: document.getElementById('apple-signin').dataset.nonce, "
                   "redirect: document.getElementById('apple-signin').dataset.redirectUri})")


def post_native_sign_in(page, action, fields):
    """Native code posts Apple's answer to the redirect URI inside the same webview."""
    page.js("""((action, fields) => { const form = document.createElement('form'); form.method = 'post';
        form.action = action; for (const [name, value] of Object.entries(fields)) { const input =
        document.createElement('input'); input.type = 'hidden'; input.name = name; input.value = value;
        form.appendChild(input); } document.body.appendChild(form); form.submit(); })(%s, %s)"""
            % (json.dumps(action), json.dumps({k: fields[k] for k in ("state", "id_token", "code") if k in fields})))


def native_fields(server, state, nonce, redirect_uri):
    """What an iOS app's native sign-in hands back: a real token for the app's bundle ID from the simulator."""
    query = urllib.parse.urlencode({"client_id": APP_BUNDLE_ID, "redirect_uri": redirect_uri,
                                    "response_type": "code id_token", "scope": "name email",
                                    "response_mode": "form_post", "state": state, "nonce": nonce})
    consent = urllib.request.urlopen(server.simulator + "/auth/authorize?" + query, timeout=10).read().decode()
    user = re.search(r'name="user" value="([^"]+)"', consent).group(1)
    form = urllib.parse.parse_qsl(query) + [("user", html.unescape(user)), ("action", "continue")]
    answer = urllib.request.urlopen(server.simulator + "/auth/authorize",
                                    data=urllib.parse.urlencode(form).encode(), timeout=10).read().decode()
    return {html.unescape(n): html.unescape(v)
            for n, v in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)"', answer)}


def webview_bridge(s, server):
    page, check = s.page, s.results.check
    page.call("Network.clearBrowserCookies")
    script = page.call("Page.addScriptToEvaluateOnNewDocument", source=FAKE_HANDLER)["identifier"]
    try:
        page.navigate(server.base + "/login")
        link = sign_in_link(page)
        page.js("document.getElementById('apple-signin').click()")
        time.sleep(0.3)
        messages = page.js("window.__appleLoginMessages") or []
        check("the tap goes to the native handler with this sign-in's state and nonce",
              len(messages) == 1 and messages[0].get("state") == link["state"]
              and messages[0].get("nonce") == link["nonce"] and messages[0].get("redirectURI") == link["redirect"],
              str(messages[:1])[:120])
        check("the webview stays on /login, the button busy", page.js("location.pathname") == "/login"
              and page.js("document.getElementById('apple-signin').getAttribute('aria-busy')") == "true")
        s.emulate(390, 844, 3, True, "light")
        page.settle()
        s.screenshot(os.path.join(SHOTS, "login-webview-busy-phone-light.png"))
        s.reset_emulation()
    finally:
        page.call("Page.removeScriptToEvaluateOnNewDocument", identifier=script)
    fields = native_fields(server, link["state"], link["nonce"], link["redirect"])
    post_native_sign_in(page, link["redirect"], fields)
    landed = page.wait_for("location.pathname === '/session' && document.readyState === 'complete'", 15)
    check("the native post lands on /session as a webview-native sign-in", landed and
          page.js("document.getElementById('flow').dataset.flow") == "webview-native"
          and (page.js("document.getElementById('nonce-verified').textContent") or "").startswith("Yes"))


class ClientCallback:
    """An OpenID client's redirect URI on loopback: a page that shows what arrived (never a code in a log)."""

    def __init__(self):
        import http.server

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"<!doctype html><html lang='en'><title>Client</title><h1 id='client'>Back at the app</h1></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.port = free_port()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.redirect_uri = f"http://127.0.0.1:{self.port}/callback"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


WEBVIEW_CLIENT = "webview-rp"


def webview_openid(s, server):
    """An OpenID client's sign-in in an app's webview: /oauth/authorize shows the bridge's login page, whose tap goes
    to the (stand-in) native handler with the attempt's state and nonce; the app's native sign-in is posted back in
    the webview and the browser lands on the client's redirect URI with a code."""
    page, check = s.page, s.results.check
    page.call("Network.clearBrowserCookies")
    verifier = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = urllib.parse.urlencode({"client_id": WEBVIEW_CLIENT, "redirect_uri": server.client.redirect_uri,
                                    "response_type": "code", "scope": "openid profile email", "state": "rp-state-7",
                                    "nonce": "rp-nonce-7", "code_challenge": challenge, "code_challenge_method": "S256"})
    script = page.call("Page.addScriptToEvaluateOnNewDocument", source=FAKE_HANDLER)["identifier"]
    try:
        page.navigate(server.base + "/oauth/authorize?" + query)
        shown = page.wait_for("document.getElementById('apple-signin') !== null", 10)
        check("an OpenID client's /oauth/authorize shows the bridge's login page", shown
              and page.js("location.pathname") == "/oauth/authorize")
        if not shown:
            return
        link = sign_in_link(page)
        page.js("document.getElementById('apple-signin').click()")
        time.sleep(0.3)
        messages = page.js("window.__appleLoginMessages") or []
        check("... whose tap goes to the native handler with that attempt's state and nonce",
              len(messages) == 1 and messages[0].get("state") == link["state"] and messages[0].get("nonce") == link["nonce"])
        s.check_page("login-openid-webview")
    finally:
        page.call("Page.removeScriptToEvaluateOnNewDocument", identifier=script)
    fields = native_fields(server, link["state"], link["nonce"], link["redirect"])
    post_native_sign_in(page, link["redirect"], fields)
    landed = page.wait_for(f"location.origin === 'http://127.0.0.1:{server.client.port}' && "
                           "document.getElementById('client') !== null", 15)
    answer = urllib.parse.parse_qs((page.js("location.search") or "").lstrip("?")) if landed else {}
    check("the native post lands on the client's redirect URI with a code, its state and the issuer",
          landed and len(answer.get("code", [""])[0]) > 20 and answer.get("state") == ["rp-state-7"]
          and answer.get("iss") == [server.base], f"at {page.js('location.origin + location.pathname')}")
    if not landed:
        return
    token = json.loads(urllib.request.urlopen(server.base + "/oauth/token", data=urllib.parse.urlencode({
        "grant_type": "authorization_code", "code": answer["code"][0], "redirect_uri": server.client.redirect_uri,
        "client_id": WEBVIEW_CLIENT, "code_verifier": verifier}).encode(), timeout=10).read())
    claims = json.loads(base64.urlsafe_b64decode(token["id_token"].split(".")[1] + "=="))
    check("... which redeems to an ID token with the client's nonce", claims.get("nonce") == "rp-nonce-7"
          and claims.get("aud") == WEBVIEW_CLIENT)


def js_sdk_never_arrives(s, server):
    """APPLE_JS_SDK=1 with the SDK's host accepting the request and never answering (held by the DevTools Fetch
    domain): the page must load, stay usable and fall back to the plain link."""
    page, check = s.page, s.results.check
    page.call("Network.clearBrowserCookies")
    page.call("Fetch.enable", patterns=[{"urlPattern": f"*/{SDK_SCRIPT}*", "requestStage": "Request"}])
    try:
        started = time.time()
        page.call("Page.navigate", url=server.base + "/login")
        loaded = page.wait_for("document.readyState === 'complete' && location.pathname === '/login'", 5)
        elapsed = time.time() - started
        check("APPLE_JS_SDK=1: the login page finishes loading with the SDK's host hanging", loaded, f"{elapsed:.2f} s")
        check("nothing is requested from the SDK's host before a tap",
              page.js(f"document.querySelector('script[src*=\"{SDK_SCRIPT}\"]') === null")
              and page.wait_event("Fetch.requestPaused", 0.5) is None)
        s.screenshot(os.path.join(SHOTS, "login-js-sdk-desktop-light.png"))
        page.js("document.getElementById('apple-signin').click()")
        held = page.wait_event("Fetch.requestPaused", 5)
        check("after the tap the button is busy and the page still answers",
              page.js("document.getElementById('apple-signin').getAttribute('aria-busy')") == "true"
              and page.js("1 + 1", timeout=2) == 2)
        tapped = time.time()
        fell_back = page.wait_for("location.pathname === '/auth/authorize'", 12)
        check("the SDK never arrives: the plain link to Apple's page is followed", fell_back and held is not None,
              f"after {time.time() - tapped:.1f} s; SDK request held: {held is not None}")
    finally:
        page.call("Fetch.disable")


def js_sdk_webview(s, server):
    page, check = s.page, s.results.check
    page.call("Network.clearBrowserCookies")
    script = page.call("Page.addScriptToEvaluateOnNewDocument", source=FAKE_HANDLER)["identifier"]
    try:
        page.navigate(server.base + "/login")
        page.js("document.getElementById('apple-signin').click()")
        time.sleep(0.5)
        check("APPLE_JS_SDK=1 in an iOS webview: the tap goes native, Apple's SDK is not looked for",
              len(page.js("window.__appleLoginMessages") or []) == 1
              and page.js(f"document.querySelector('script[src*=\"{SDK_SCRIPT}\"]') === null")
              and page.js("location.pathname") == "/login")
    finally:
        page.call("Page.removeScriptToEvaluateOnNewDocument", identifier=script)


# ---- Apple's JS SDK in popup mode (APPLE_JS_SDK=1, APPLE_JS_POPUP=1) -----------------------------------------

def tap(page, selector):
    """A real click (pressed and released at the element's centre), which lets the page open a popup."""
    point = page.js("""(() => { const e = document.querySelector(%s); e.scrollIntoView({block: 'center'});
        const r = e.getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()"""
                    % json.dumps(selector))
    for kind in ("mousePressed", "mouseReleased"):
        page.call("Input.dispatchMouseEvent", type=kind, x=point["x"], y=point["y"], button="left", clickCount=1)


def open_popup(s, server, browser, path="/login", before_tap=None):
    """Opens the login page, taps the Apple button and returns the popup's tab at the simulator's consent page."""
    page = s.page
    page.call("Network.clearBrowserCookies")
    page.navigate(server.base + path)
    if before_tap:
        page.js(before_tap)
    tap(page, "#apple-signin")
    deadline = time.time() + 10
    while time.time() < deadline:
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{browser.port}/json", timeout=2))
        found = next((t for t in targets if t["type"] == "page" and "/auth/authorize" in t["url"]), None)
        if found:
            popup = Page(found["webSocketDebuggerUrl"])
            popup.wait_for("location.pathname === '/auth/authorize' && document.readyState === 'complete'", 10)
            return popup
        time.sleep(0.1)
    return None


def popup_gone(popup, timeout=5):
    """True once the popup's tab has closed (its DevTools connection ends)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            popup.call("Runtime.evaluate", timeout=1, expression="1")
        except Exception:
            return True
        time.sleep(0.1)
    return False


def popup_sign_in(s, server, browser):
    page, check = s.page, s.results.check
    page.call("Network.clearBrowserCookies")
    page.navigate(server.base + "/login")
    link = page.js("(e => ({popup: e.dataset.usePopup, sdk: e.dataset.sdkSrc}))(document.getElementById('apple-signin'))")
    check("APPLE_JS_POPUP=1: the button asks for the popup and the SDK comes from the simulator in development",
          link["popup"] == "1" and link["sdk"].startswith(server.simulator + "/appleauth/"), str(link))
    s.check_page("login-popup")
    popup = open_popup(s, server, browser)
    check("a tap opens the simulator's consent page in a popup, asking for web_message", popup is not None and
          "response_mode=web_message" in (popup.js("location.search") or ""))
    if popup is None:
        return
    check("the login page stays where it is, its button busy", page.js("location.pathname") == "/login"
          and page.js("document.getElementById('apple-signin').getAttribute('aria-busy')") == "true")
    Session(popup, s.results).check_page("simulator-consent-popup")
    page.call("Fetch.enable", patterns=[{"urlPattern": "*/apple_redirect", "requestStage": "Request"}])
    try:
        popup.js("document.querySelector('button[value=continue]').click()")
        posted = page.wait_event("Fetch.requestPaused", 10)
        fields = urllib.parse.parse_qs((posted or {}).get("request", {}).get("postData", ""))
        check("the page posts Apple's form_post fields to /apple_redirect itself", posted is not None
              and posted["request"]["method"] == "POST" and sorted(fields) == ["code", "id_token", "state", "user"]
              and json.loads(fields["user"][0])["name"]["firstName"] == "Ada", str(sorted(fields)))
        if posted:
            page.call("Fetch.continueRequest", requestId=posted["requestId"])
    finally:
        page.call("Fetch.disable")
    check("the popup closes once it handed the answer over", popup_gone(popup))
    popup.close()
    landed = page.wait_for("location.pathname === '/session' && document.readyState === 'complete'", 15)
    text = page.js("document.querySelector('main') && document.querySelector('main').innerText") or ""
    check("sign-in through the popup lands on the session page with the member", landed and "Ada Lovelace" in text
          and "ada@example.com" in text and page.js("document.getElementById('flow').dataset.flow") == "web"
          and (page.js("document.getElementById('nonce-verified').textContent") or "").startswith("Yes"),
          page.js("location.href") or "")
    s.check_page("session-popup")


def popup_return_to(s, server, browser):
    page, check = s.page, s.results.check
    for target, host, path_and_query, label in [
            ("/session?from=return", f"127.0.0.1:{server.port}", "/session?from=return", "on this server"),
            (server.simulator + "/", f"127.0.0.1:{server.simulator_port}", "/", "on another origin")]:
        popup = open_popup(s, server, browser, "/login?return_to=" + urllib.parse.quote(target, safe=""))
        if not check(f"popup with return_to {label}: the popup opens", popup is not None):
            continue
        popup.js("document.querySelector('button[value=continue]').click()")
        landed = page.wait_for("location.host === %s && location.pathname + location.search === %s"
                               " && document.readyState === 'complete'" % (json.dumps(host), json.dumps(path_and_query)), 15)
        check(f"popup with return_to {label}: lands on {target}", landed, page.js("location.href") or "")
        popup.close()


def popup_cancel(s, server, browser):
    page, check = s.page, s.results.check
    notice = "document.getElementById('apple-signin-cancelled')"
    popup = open_popup(s, server, browser)
    if not check("cancel: the popup opens", popup is not None):
        return
    check("the cancelled notice is hidden while signing in", page.js(f"{notice}.hidden") is True)
    page.js("window.postMessage({method: 'oauthDone', data: {authorization: {state: 'forged', code: 'c', "
            "id_token: 'forged'}}}, '*')")
    time.sleep(0.5)
    check("a message that is not from the popup at Apple's origin is no answer", page.js("location.pathname") == "/login"
          and page.js("document.querySelector('form[method=post]') === null")
          and page.js("document.getElementById('apple-signin').getAttribute('aria-busy')") == "true")
    popup.js("document.querySelector('button[value=cancel]').click()")
    shown = page.wait_for(f"!{notice}.hidden", 10)
    check("Cancel in the popup: back on the login page with the cancelled wording", shown
          and page.js("location.pathname") == "/login"
          and page.js(f"{notice}.innerText").startswith("Sign-in cancelled. You cancelled signing in with Apple."),
          page.js(f"{notice}.innerText") or "")
    check("... the popup is gone and the button usable again", popup_gone(popup)
          and page.js("document.getElementById('apple-signin').getAttribute('aria-busy')") is None)
    popup.close()
    s.check_page("login-popup-cancelled")
    check("no session was made", page.navigate(server.base + "/session") and page.js("location.pathname") == "/login")

    page.call("Network.setExtraHTTPHeaders", headers={"Accept-Language": "ko-KR,ko;q=0.9"})
    try:
        popup = open_popup(s, server, browser)
        if not check("close: the popup opens (Korean page)", popup is not None):
            return
        popup.call("Page.close")
        shown = page.wait_for(f"!{notice}.hidden", 10)
        check("closing the popup: back on the Korean login page with its cancelled wording", shown
              and page.js(f"{notice}.innerText").startswith("로그인이 취소되었습니다"), page.js(f"{notice}.innerText") or "")
        popup.close()
        s.check_page("login-popup-cancelled-ko")
    finally:
        page.call("Network.setExtraHTTPHeaders", headers={})


TAMPER_STATE = """(() => { const submit = HTMLFormElement.prototype.submit;
  HTMLFormElement.prototype.submit = function () {
    const state = this.querySelector('input[name=state]'); if (state) state.value = state.value.slice(0, -2) + 'xx';
    return submit.call(this); }; })()"""


def popup_tampered_state(s, server, browser):
    page, check = s.page, s.results.check
    popup = open_popup(s, server, browser, before_tap=TAMPER_STATE)
    if not check("tampered state: the popup opens", popup is not None):
        return
    popup.js("document.querySelector('button[value=continue]').click()")
    refused = page.wait_for("location.pathname === '/apple_redirect' && document.querySelector('h1') !== null", 15)
    heading = page.js("document.querySelector('h1') && document.querySelector('h1').innerText") or ""
    check("a state changed on the page is refused as the form_post's is", refused
          and heading == "This sign-in cannot be finished", heading)
    popup.close()
    check("... and no session was made", page.navigate(server.base + "/session") and page.js("location.pathname") == "/login")


def web_message_page(s, server):
    """The simulator's popup answer page, opened without an opener: it keeps its answer and says what to do."""
    page, check = s.page, s.results.check
    page.call("Network.clearBrowserCookies")
    query = urllib.parse.urlencode({"client_id": "dev.applesigninbridge.web", "redirect_uri": server.base + "/apple_redirect",
                                    "response_type": "code id_token", "scope": "name email",
                                    "response_mode": "web_message", "state": "s", "nonce": "n"})
    page.navigate(server.simulator + "/auth/authorize?" + query)
    page.js("document.querySelector('button[value=continue]').click()")
    shown = page.wait_for("document.getElementById('web-message') !== null", 10)
    check("without an opener the web_message page stays, addressed to the redirect URI's origin", shown
          and page.js("document.getElementById('web-message').dataset.targetOrigin") == server.base)
    s.check_page("simulator-web-message")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


def relay_answer(url, post_data, content_type):
    """The relay's answer to the post the browser is about to make: status, headers, body, no redirect followed."""
    request = urllib.request.Request(url, data=post_data.encode(), headers={"Content-Type": content_type})
    try:
        response = urllib.request.build_opener(NoRedirect).open(request, timeout=10)
        return response.status, response.getheaders(), response.read()
    except urllib.error.HTTPError as error:
        return error.code, list(error.headers.items()), error.read()


def android_relay(s, server):
    """Flutter's sign_in_with_apple on Android: Apple form_posts to the relay, which answers 303 to the plugin's
    intent://. A Custom Tab that does not follow that redirect shows the page in the answer's body: the browser's post
    is held, made here, and its answer shown without the Location, as such a tab would show it, then checked."""
    page, check = s.page, s.results.check
    relay = f"{server.base}/apple/android/{ANDROID_PACKAGE}"
    query = urllib.parse.urlencode({"client_id": SERVICES_ID, "redirect_uri": relay, "response_type": "code id_token",
                                    "scope": "name email", "response_mode": "form_post", "state": "plugin-state",
                                    "nonce": hashlib.sha256(b"app nonce").hexdigest()}, quote_via=urllib.parse.quote)
    page.call("Network.clearBrowserCookies")
    page.call("Fetch.enable", patterns=[{"urlPattern": relay, "requestStage": "Request"}])
    paused, answered, location = None, False, ""
    try:
        page.navigate(server.simulator + "/auth/authorize?" + query)
        s.consent()
        paused = page.wait_event("Fetch.requestPaused", 10)
        check("Apple's form_post reaches the Android relay", paused is not None)
        if paused is None:
            return
        posted = paused["request"]
        content_type = next((v for k, v in posted.get("headers", {}).items() if k.lower() == "content-type"), "")
        status, headers, body = relay_answer(relay, posted.get("postData", ""), content_type)
        location = next((v for k, v in headers if k.lower() == "location"), "")
        check("the relay answers 303 to the plugin's intent://", status == 303
              and location.startswith("intent://callback?")
              and location.endswith(f"#Intent;package={ANDROID_PACKAGE};scheme=signinwithapple;end"),
              f"{status} {location[:40]}")
        shown_headers = [{"name": k, "value": v} for k, v in headers
                         if k.lower() not in ("location", "content-length", "connection", "transfer-encoding")]
        page.call("Fetch.fulfillRequest", requestId=paused["requestId"], responseCode=200, responseHeaders=shown_headers,
                  body=base64.b64encode(body).decode())
        answered = True
    finally:
        if paused is not None and not answered:
            page.call("Fetch.failRequest", requestId=paused["requestId"], errorReason="Aborted")
        page.call("Fetch.disable")
    shown = page.wait_for("document.getElementById('return-to-app') !== null", 10)
    check("the relay's page holds the same intent:// link", bool(shown and location)
          and page.js("document.getElementById('return-to-app').getAttribute('href')") == location)
    s.check_page("android-return")


def not_found(s, server):
    page, check = s.page, s.results.check
    page.navigate(server.base + "/no-such-page")
    check("an unknown address shows the error page with one action",
          page.js("document.querySelector('h1').innerText") == "Page not found"
          and page.js("document.querySelectorAll('main a').length") == 1)
    s.check_page("not-found")
    page.navigate(server.base + "/public/no-such-file.png")
    check("a missing /public/ file is a styled page", page.js("document.querySelector('link[rel=stylesheet]') !== null")
          and page.js("document.querySelector('h1').innerText") == "Page not found")
    s.check_page("public-not-found")


def main():
    clean_dir(SHOTS)
    results = Results()
    servers = []
    browser = None
    profile = None
    extra_folders = []
    try:
        client = ClientCallback()
        extra_folders.append(tempfile.mkdtemp(prefix="asb-clients-"))
        clients_file = os.path.join(extra_folders[0], "clients.json")
        with open(clients_file, "w") as file:
            json.dump([{"client_id": WEBVIEW_CLIENT, "name": "Webview app", "redirect_uris": [client.redirect_uri]}], file)
        plain = Server({"BRIDGE_SITE_NAME": "Example Shop", "BRIDGE_RETURN_URLS": "/session?from=return",
                        "BRIDGE_CLIENTS_FILE": clients_file, "APPLE_ANDROID_PACKAGES": ANDROID_PACKAGE})
        plain.client = client
        servers.append(plain)
        sdk = Server({"APPLE_JS_SDK": "1"})
        servers.append(sdk)
        popup_simulator_port = free_port()
        popup = Server({"APPLE_JS_SDK": "1", "APPLE_JS_POPUP": "1",
                        "BRIDGE_RETURN_URLS": f"/session?from=return, http://127.0.0.1:{popup_simulator_port}/*"},
                       simulator_port=popup_simulator_port)
        servers.append(popup)
        profile = tempfile.mkdtemp(prefix="asb-chromium-")
        browser = Browser(profile)
        page = browser.page
        page.call("Page.enable")
        page.call("Network.enable")
        print(f"axe-core {AXE_VERSION}; screenshots in {SHOTS}", flush=True)
        session = Session(page, results)
        session.reset_emulation()
        for flow, args in [(web_sign_in, (plain,)), (account_deletion, (plain,)), (cancel, (plain,)),
                           (repost, (plain,)), (webview_bridge, (plain,)), (webview_openid, (plain,)), (not_found, (plain,)),
                           (android_relay, (plain,)),
                           (stale_sign_out, (plain,)), (simulator_pages, (plain,)), (korean, (plain,)), (post_only_pages, (plain,)),
                           (return_to, (plain,)), (rate_limited, (plain,)),
                           (js_sdk_never_arrives, (sdk,)), (js_sdk_webview, (sdk,)),
                           (popup_sign_in, (popup, browser)), (popup_return_to, (popup, browser)),
                           (popup_cancel, (popup, browser)), (popup_tampered_state, (popup, browser)),
                           (web_message_page, (popup,))]:
            began = time.time()
            try:
                flow(session, *args)
                print(f"     ({flow.__name__}: {time.time() - began:.1f} s)", flush=True)
            except Exception as error:
                traceback.print_exc()
                results.check(f"{flow.__name__} ran to the end", False, repr(error))
    finally:
        if browser:
            browser.close()
        for server in servers:
            server.stop()
    # The servers' folders (database, log) and the browser profile are kept only when something failed.
    folders = [server.directory for server in servers] + ([profile] if profile else []) + extra_folders
    if results.failed:
        print("kept for a look: " + ", ".join(folders), flush=True)
    else:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"{results.passed} passed, {len(results.failed)} failed")
    return 0 if not results.failed else 1


if __name__ == "__main__":
    sys.exit(main())
