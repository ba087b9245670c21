"""A real browser through a relying party no one on this project wrote: Debian's Apache with mod_auth_openidc,
configured with the bridge's discovery URL, a client ID and secret, and nothing else about the bridge.

Headless Chromium opens Apache's protected page, goes through the bridge's authorization endpoint and the Apple ID
simulator's pages (choosing a test user), back through Apache's redirect URI, and must land on the protected page
showing the member's `sub` -- the id the bridge's database holds for that Apple user; then a second relying party
(another client on another origin) signs the same browser in from its bridge session, without Apple. Also: the same through the
bridge's re-post page (the binding cookie dropped on the way), and plain web sign-ins whose BRIDGE_AFTER_SIGN_IN_URL
or allowed return_to lies on another origin, directly and through the re-post page. These are the flows that
Chromium's `form-action` checks on the redirects after a form post used to block.
Usage: run_relying_party_test.py EXECUTABLE RESOURCES_DIR
Prints one line per check and closes with "N passed, N failed"; exits 1 if anything failed."""
import hashlib
import contextlib
import json
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Browser"))
from cdp import Browser, free_port  # noqa: E402
from checks import Results, stop  # noqa: E402

EXECUTABLE, RESOURCES = (os.path.abspath(argument) for argument in sys.argv[1:3])
CLIENT_ID = "intranet-apache"
WIKI_CLIENT_ID = "wiki-apache"
APACHE_MODULES = "/usr/lib/apache2/modules"


def wait_until_answering(url, what, log_path, process):
    for _ in range(150):
        if process.poll() is not None:
            break
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return  # it answers, if only with an error status
        except OSError:
            time.sleep(0.1)
    with open(log_path, errors="replace") as log:
        tail = log.read()[-2000:]
    raise RuntimeError(f"{what} did not come up:\n{tail}")


class Origins:
    """The loopback addresses of this run: the bridge, its simulator, and Apache's four origins (the protected
    intranet and a protected wiki, two relying parties; an app a web sign-in lands on, a shop an allowed return_to
    leads to)."""

    def __init__(self):
        self.bridge_port, self.simulator_port = free_port(), free_port()
        self.intranet_port, self.app_port, self.shop_port = free_port(), free_port(), free_port()
        self.wiki_port = free_port()
        self.bridge = f"http://127.0.0.1:{self.bridge_port}"
        self.simulator = f"http://127.0.0.1:{self.simulator_port}"
        self.intranet = f"http://127.0.0.1:{self.intranet_port}"
        self.app = f"http://127.0.0.1:{self.app_port}"
        self.shop = f"http://127.0.0.1:{self.shop_port}"
        self.redirect_uri = self.intranet + "/protected/redirect_uri"
        self.wiki = f"http://127.0.0.1:{self.wiki_port}"
        self.wiki_redirect_uri = self.wiki + "/protected/redirect_uri"


class Bridge:
    """`apple-signin-bridge dev` with Apache's two sites registered as confidential OpenID clients."""

    def __init__(self, origins, directory, client_secret):
        clients_file = os.path.join(directory, "clients.json")
        with open(clients_file, "w") as file:
            json.dump([{"client_id": CLIENT_ID, "name": "Intranet (Apache mod_auth_openidc)",
                        "redirect_uris": [origins.redirect_uri],
                        "client_secret_sha256": hashlib.sha256(client_secret.encode()).hexdigest()},
                       {"client_id": WIKI_CLIENT_ID, "name": "Wiki (Apache mod_auth_openidc)",
                        "redirect_uris": [origins.wiki_redirect_uri],
                        "client_secret_sha256": hashlib.sha256(client_secret.encode()).hexdigest()}], file)
        self.database = os.path.join(directory, "bridge.sqlite3")
        # Only these settings: none of the caller's BRIDGE_/APPLE_ variables may change what is tested.
        env = {key: value for key, value in os.environ.items() if not key.startswith(("BRIDGE_", "APPLE_", "SIMULATOR_"))}
        env.update(BRIDGE_PORT=str(origins.bridge_port), SIMULATOR_PORT=str(origins.simulator_port),
                   BRIDGE_DATABASE="sqlite:" + self.database, BRIDGE_CLIENTS_FILE=clients_file,
                   BRIDGE_AFTER_SIGN_IN_URL=origins.app + "/welcome.html",
                   BRIDGE_RETURN_URLS=origins.shop + "/account/*")
        self.log_path = os.path.join(directory, "bridge.log")
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen([EXECUTABLE, "dev", "--resources", RESOURCES], cwd=directory, env=env,
                                            stdout=log, stderr=subprocess.STDOUT)
        wait_until_answering(origins.bridge + "/healthz", "the dev server", self.log_path, self.process)

    def member_id(self, apple_sub):
        """The member id the bridge's own database holds for this Apple user."""
        with contextlib.closing(sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, timeout=5)) as database:
            row = database.execute("SELECT id FROM users WHERE provider = 'apple' AND provider_user_id = ?",
                                   (apple_sub,)).fetchone()
        return str(row[0]) if row else None


PROTECTED_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Intranet</title></head>
<body><main><h1>Intranet</h1>
<p>Signed in as member <span id="sub"><!--#echo var="OIDC_CLAIM_sub" --></span>
(REMOTE_USER <span id="remote-user"><!--#echo var="REMOTE_USER" --></span>),
Apple user <span id="apple-sub"><!--#echo var="OIDC_CLAIM_apple_sub" --></span>.</p></main></body></html>
"""


class Apache:
    """Debian's Apache in the foreground with its own configuration in `directory`: mod_auth_openidc on /protected/
    (configured from the discovery URL), plus two plain pages on two more ports, other origins than the bridge's."""

    def __init__(self, origins, directory, client_secret):
        documents = os.path.join(directory, "htdocs")
        for folder, page, text in [("protected", "index.shtml", PROTECTED_PAGE),
                                   ("", "welcome.html", "<!doctype html><title>App</title><h1 id='welcome'>Welcome to the app</h1>"),
                                   ("account", "index.html", "<!doctype html><title>Shop</title><h1 id='account'>Your account</h1>")]:
            os.makedirs(os.path.join(documents, folder), exist_ok=True)
            with open(os.path.join(documents, folder, page), "w") as file:
                file.write(text)
        as_root = os.geteuid() == 0
        config = f"""
ServerRoot "{directory}"
ServerName 127.0.0.1
PidFile "{directory}/apache.pid"
DefaultRuntimeDir "{directory}"
Mutex file:{directory} default
ErrorLog "{directory}/error.log"
LogLevel warn
Listen 127.0.0.1:{origins.intranet_port}
Listen 127.0.0.1:{origins.app_port}
Listen 127.0.0.1:{origins.shop_port}
Listen 127.0.0.1:{origins.wiki_port}
LoadModule mpm_event_module {APACHE_MODULES}/mod_mpm_event.so
LoadModule authn_core_module {APACHE_MODULES}/mod_authn_core.so
LoadModule authz_core_module {APACHE_MODULES}/mod_authz_core.so
LoadModule authz_user_module {APACHE_MODULES}/mod_authz_user.so
LoadModule mime_module {APACHE_MODULES}/mod_mime.so
LoadModule dir_module {APACHE_MODULES}/mod_dir.so
LoadModule include_module {APACHE_MODULES}/mod_include.so
LoadModule auth_openidc_module {APACHE_MODULES}/mod_auth_openidc.so
{'User nobody' if as_root else ''}
{'Group nogroup' if as_root else ''}
TypesConfig /etc/mime.types
DocumentRoot "{documents}"
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "{documents}">
    Require all granted
</Directory>

OIDCProviderMetadataURL {origins.bridge}/.well-known/openid-configuration
OIDCClientID {CLIENT_ID}
OIDCClientSecret {client_secret}
OIDCRedirectURI {origins.redirect_uri}
OIDCCryptoPassphrase {secrets.token_urlsafe(32)}
OIDCScope "openid email"
OIDCPKCEMethod S256
OIDCRemoteUserClaim sub

<Location /protected/>
    AuthType openid-connect
    Require valid-user
    Options +Includes
    AddType text/html .shtml
    AddOutputFilter INCLUDES .shtml
    DirectoryIndex index.shtml
</Location>

# A second relying party: its own client, on its own origin.
<VirtualHost 127.0.0.1:{origins.wiki_port}>
    DocumentRoot "{documents}"
    OIDCProviderMetadataURL {origins.bridge}/.well-known/openid-configuration
    OIDCClientID {WIKI_CLIENT_ID}
    OIDCClientSecret {client_secret}
    OIDCRedirectURI {origins.wiki_redirect_uri}
    OIDCScope "openid email"
    OIDCPKCEMethod S256
    OIDCRemoteUserClaim sub
</VirtualHost>
"""
        self.config_path = os.path.join(directory, "apache2.conf")
        with open(os.open(self.config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as file:
            file.write(config)
        if as_root:
            # Apache reads its configuration as root, then serves as `nobody`, which must reach the pages only.
            os.chmod(os.path.dirname(directory), 0o711)
            os.chmod(directory, 0o711)
            for root, _, files in os.walk(documents):
                os.chmod(root, 0o755)
                for name in files:
                    os.chmod(os.path.join(root, name), 0o644)
        self.log_path = os.path.join(directory, "error.log")
        with open(self.log_path, "a") as log:
            self.process = subprocess.Popen([shutil.which("apache2") or "/usr/sbin/apache2", "-DFOREGROUND",
                                             "-f", self.config_path], cwd=directory,
                                            stdout=subprocess.DEVNULL, stderr=log)
        wait_until_answering(origins.app + "/welcome.html", "Apache", self.log_path, self.process)


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def first_redirect(url):
    """The status and Location of a browser's first request for `url` (mod_auth_openidc answers 401 to clients
    that do not accept HTML)."""
    request = urllib.request.Request(url, headers={"Accept": "text/html"})
    try:
        answer = urllib.request.build_opener(NoRedirects).open(request, timeout=10)
        return answer.status, None
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location")


class Tab:
    """The browser tab with what every sign-in here does."""

    def __init__(self, page, origins, bridge, results):
        self.page, self.origins, self.bridge, self.check = page, origins, bridge, results.check

    def expect(self, name, ok, detail=""):
        """A check of where the browser got to: on failure it says where the browser is instead."""
        return self.check(name, ok, detail if ok else self.where())

    def fresh(self):
        self.page.call("Network.clearBrowserCookies")
        self.page.events.clear()

    def at_simulator(self):
        return self.page.wait_for(f"location.origin === '{self.origins.simulator}' && location.pathname === "
                                  "'/auth/authorize' && document.readyState === 'complete'", 15)

    def choose_user_and_continue(self, index):
        """Picks the test user at `index` on the simulator's consent page and continues; their Apple sub."""
        page = self.page
        apple_sub = page.js(f"(() => {{ const radio = document.querySelectorAll('input[name=user]')[{index}];"
                            " radio.checked = true; return radio.value; })()")
        page.js("document.querySelector('button[value=continue]').click()")
        return apple_sub

    def blocked_by_policy(self):
        """What the browser said about Content-Security-Policy violations since the last fresh start."""
        messages = [event["params"]["entry"].get("text", "") for event in self.page.events
                    if event["method"] == "Log.entryAdded"]
        return [message for message in messages if "Content Security Policy" in message]

    def where(self):
        href = self.page.js("location.origin + location.pathname") or "?"  # the query may hold a code
        heading = self.page.js("document.querySelector('h1') && document.querySelector('h1').innerText") or ""
        blocked = self.blocked_by_policy()
        return f"at {href} ({heading})" + (f"; blocked: {blocked[0][:300]}" if blocked else "")

    def drop_binding_cookie(self):
        """Deletes the bridge's state-binding cookie, as a browser that drops SameSite=None cookies on Apple's
        cross-site post would not send it; the cookie is kept to be given back for the same-origin re-post."""
        cookies = self.page.call("Network.getCookies", urls=[self.origins.bridge + "/apple_redirect"])["cookies"]
        bindings = [c for c in cookies if c["name"].startswith("asb_bind_")]
        cookie = bindings[0] if len(bindings) == 1 else None
        if cookie:
            self.page.call("Network.deleteCookies", name=cookie["name"], url=self.origins.bridge + "/apple_redirect")
        return cookie

    def through_repost_page(self, cookie, user_index, label):
        """Continues at the simulator with the binding cookie gone: the bridge must answer with its re-post page,
        which (the cookie given back, as a same-origin post carries it) finishes the sign-in."""
        page = self.page
        page.call("Fetch.enable", patterns=[{"urlPattern": "*/public/js/repost.js*", "requestStage": "Request"}])
        try:
            apple_sub = self.choose_user_and_continue(user_index)
            paused = page.wait_event("Fetch.requestPaused", 15)
            shown = paused is not None and page.wait_for(
                f"location.origin === '{self.origins.bridge}' && document.getElementById('repost') !== null", 5)
            self.expect(f"{label}: without its cookie the callback answers with the re-post page", shown)
            if paused is None:
                return apple_sub
            page.call("Network.setCookie", name=cookie["name"], value=cookie["value"],
                      url=self.origins.bridge + "/apple_redirect", path=cookie["path"], secure=cookie["secure"],
                      httpOnly=cookie["httpOnly"], sameSite="None")
            page.call("Fetch.continueRequest", requestId=paused["requestId"])
        finally:
            page.call("Fetch.disable")
        return apple_sub

    def bridge_session_apple_user(self):
        """The Apple user id the bridge's own session page shows for this browser."""
        self.page.navigate(self.origins.bridge + "/session")
        return self.page.js("(() => { const terms = [...document.querySelectorAll('dt')];"
                            " const term = terms.find(t => t.textContent.trim() === 'Apple user ID');"
                            " return term ? term.nextElementSibling.textContent.trim() : null; })()")


# ---- The flows -------------------------------------------------------------------------------------------------

def apache_starts_sign_in(tab):
    origins = tab.origins
    status, location = first_redirect(origins.intranet + "/protected/")
    parsed = urllib.parse.urlparse(location or "")
    query = urllib.parse.parse_qs(parsed.query)
    tab.check("Apache, knowing only the discovery URL, sends a visitor of /protected/ to the bridge's "
              "authorization endpoint", status in (302, 303) and location is not None
              and location.startswith(origins.bridge + "/oauth/authorize?")
              and query.get("client_id") == [CLIENT_ID] and query.get("redirect_uri") == [origins.redirect_uri]
              and query.get("code_challenge_method") == ["S256"], f"{status} to {parsed.path or location}")


def openid_sign_in(tab, user_index, label, repost=False):
    """Apache's protected page, signed in through the bridge's login page; the member id it shows, or None."""
    page, origins = tab.page, tab.origins
    tab.fresh()
    page.navigate(origins.intranet + "/protected/")
    at_login = page.wait_for(f"location.origin === '{origins.bridge}' && location.pathname === '/oauth/authorize'"
                             " && document.getElementById('apple-signin') !== null", 15)
    if not tab.expect(f"{label}: Apache's protected page leads to the bridge's login page", at_login):
        return None
    page.js("document.getElementById('apple-signin').click()")
    if not tab.expect(f"{label}: ... whose Sign in with Apple leads to Apple's page", tab.at_simulator()):
        return None
    if repost:
        cookie = tab.drop_binding_cookie()
        if not tab.check(f"{label}: the bridge bound the sign-in to this browser with a cookie", cookie is not None):
            return None
        apple_sub = tab.through_repost_page(cookie, user_index, label)
    else:
        apple_sub = tab.choose_user_and_continue(user_index)
    landed = page.wait_for(f"location.href === '{origins.intranet}/protected/' && document.getElementById('sub')"
                           " !== null && document.readyState === 'complete'", 20)
    shown_sub = page.js("document.getElementById('sub').textContent.trim()") if landed else None
    shown_apple_sub = page.js("document.getElementById('apple-sub').textContent.trim()") if landed else None
    remote_user = page.js("document.getElementById('remote-user').textContent.trim()") if landed else None
    member = tab.bridge.member_id(apple_sub) if apple_sub else None
    tab.check(f"{label}: lands on Apache's protected page showing the member's sub", landed and shown_sub
              and shown_sub == member and remote_user == shown_sub and shown_apple_sub == apple_sub,
              f"sub {shown_sub!r}, the bridge's member id {member!r}, Apple user {shown_apple_sub!r}" if landed
              else tab.where())
    return shown_sub if landed else None


def second_party_single_sign_on(tab, member):
    """Right after a sign-in through the intranet: the wiki, another client, signs this browser in from its bridge
    session, with neither the login page nor Apple on the way, as the same member."""
    page, origins = tab.page, tab.origins
    page.events.clear()
    page.navigate(origins.wiki + "/protected/")
    landed = page.wait_for(f"location.href === '{origins.wiki}/protected/' && document.getElementById('sub') !== null"
                           " && document.readyState === 'complete'", 20)
    visited = [event["params"]["frame"].get("url", "") for event in page.events if event["method"] == "Page.frameNavigated"]
    shown_sub = page.js("document.getElementById('sub').textContent.trim()") if landed else None
    tab.expect("a second relying party (the wiki) signs the same browser in without Apple: lands on its page as the "
               "same member", landed and member is not None and shown_sub == member, f"sub {shown_sub!r}, expected {member!r}")
    tab.check("... and the browser saw neither the bridge's login page nor Apple's",
              not any(url.startswith((origins.simulator, origins.bridge)) for url in visited),
              ", ".join(urllib.parse.urlsplit(url).netloc + urllib.parse.urlsplit(url).path for url in visited))


def openid_cancel(tab):
    """Cancel at Apple: the bridge sends the browser to Apache's redirect URI with `error=access_denied`, by the same
    kind of redirect after the simulator's form post, and nobody gets in. (mod_auth_openidc 2.4 takes any request to
    its redirect URI that carries `iss` -- RFC 9207, sent with errors too -- and no code for a discovery response, so
    its page says "Invalid Request" rather than naming the cancel.)"""
    page, origins = tab.page, tab.origins
    tab.fresh()
    page.navigate(origins.intranet + "/protected/")
    page.wait_for(f"location.origin === '{origins.bridge}' && document.getElementById('apple-signin') !== null", 15)
    page.js("document.getElementById('apple-signin') && document.getElementById('apple-signin').click()")
    if not tab.expect("cancel at Apple: Apache's protected page leads through the login page to Apple's page",
                      tab.at_simulator()):
        return
    page.js("document.querySelector('button[value=cancel]').click()")
    arrived = page.wait_for(f"location.origin === '{origins.intranet}' && location.pathname === '/protected/redirect_uri'"
                            " && document.readyState === 'complete'", 15)
    answer = urllib.parse.parse_qs((page.js("location.search") or "").lstrip("?")) if arrived else {}
    tab.expect("cancel at Apple: Apache's redirect URI receives error=access_denied and the protected page stays shut",
               arrived and answer.get("error") == ["access_denied"] and "code" not in answer
               and page.js("document.getElementById('sub') === null"),
               "error " + ", ".join(answer.get("error", [])))


def web_sign_in(tab, label, start_path, destination, destination_check, repost=False):
    """A plain web sign-in at the bridge that must end on `destination`, on another origin than the bridge."""
    page, origins = tab.page, tab.origins
    tab.fresh()
    page.navigate(origins.bridge + start_path)
    page.js("document.getElementById('apple-signin').click()")
    if not tab.expect(f"{label}: the bridge's sign-in leads to Apple's page", tab.at_simulator()):
        return
    if repost:
        cookie = tab.drop_binding_cookie()
        if not tab.check(f"{label}: the bridge bound the sign-in to this browser with a cookie", cookie is not None):
            return
        apple_sub = tab.through_repost_page(cookie, 0, label)
    else:
        apple_sub = tab.choose_user_and_continue(0)
    landed = page.wait_for(f"location.href === '{destination}' && document.readyState === 'complete' && "
                           f"{destination_check}", 15)
    tab.expect(f"{label}: lands on {destination}", landed)
    if landed:
        shown = tab.bridge_session_apple_user()
        tab.check(f"{label}: ... signed in at the bridge as the chosen Apple user", shown == apple_sub, f"{shown!r}")


def main():
    # Stopped from outside, still stop Apache, the bridge and Chromium on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results = Results()
    work = tempfile.mkdtemp(prefix="asb-relying-party-")
    bridge = apache = browser = None
    client_secret = secrets.token_urlsafe(32)
    try:
        origins = Origins()
        for folder in ("bridge", "apache"):
            os.makedirs(os.path.join(work, folder), mode=0o700)
        bridge = Bridge(origins, os.path.join(work, "bridge"), client_secret)
        apache = Apache(origins, os.path.join(work, "apache"), client_secret)
        browser = Browser(os.path.join(work, "chromium"))
        page = browser.page
        for domain in ("Page", "Network", "Log"):
            page.call(f"{domain}.enable")
        # A cached repost.js would run before the test can hold it (Fetch does not see cache hits).
        page.call("Network.setCacheDisabled", cacheDisabled=True)
        tab = Tab(page, origins, bridge, results)
        flows = [
            (apache_starts_sign_in, ()),
            (openid_sign_in, (0, "OpenID sign-in through Apache")),
            (second_party_single_sign_on, None),
            (openid_sign_in, (0, "OpenID sign-in through Apache via the re-post page", True)),
            (openid_sign_in, (1, "OpenID sign-in through Apache as another test user")),
            (openid_cancel, ()),
            (web_sign_in, ("web sign-in, BRIDGE_AFTER_SIGN_IN_URL on another origin", "/login",
                           origins.app + "/welcome.html", "document.getElementById('welcome') !== null")),
            (web_sign_in, ("web sign-in to another origin via the re-post page", "/login",
                           origins.app + "/welcome.html", "document.getElementById('welcome') !== null", True)),
            (web_sign_in, ("web sign-in, allowed return_to on another origin",
                           "/login?return_to=" + urllib.parse.quote(origins.shop + "/account/", safe=""),
                           origins.shop + "/account/", "document.getElementById('account') !== null")),
        ]
        members = {}
        for flow, args in flows:
            began = time.time()
            try:
                if args is None:  # the single sign-on right after the first sign-in, as the member it showed
                    args = (next(iter(members.values()))[1] if members else None,)
                value = flow(tab, *args)
                if flow is openid_sign_in:
                    members[args[1]] = (args[0], value)
                print(f"     ({flow.__name__}: {time.time() - began:.1f} s)", flush=True)
            except Exception as error:
                traceback.print_exc()
                results.check(f"{flow.__name__} ran to the end", False, repr(error))
        subs = [value for _, value in members.values()]
        if len(subs) == 3 and all(subs):
            results.check("the same Apple user keeps their sub across sign-ins; another user gets another",
                          subs[0] == subs[1] and subs[2] != subs[0], ", ".join(subs))
    except Exception as error:
        traceback.print_exc()
        results.check("the relying-party test set up its servers", False, repr(error))
    finally:
        if browser:
            browser.close()
        stop(apache.process if apache else None)
        stop(bridge.process if bridge else None)
        if results.failed:
            for name, path in [("bridge", os.path.join(work, "bridge", "bridge.log")),
                               ("Apache", os.path.join(work, "apache", "error.log"))]:
                if os.path.exists(path):
                    with open(path, errors="replace") as log:
                        lines = [line for line in log.read().splitlines()
                                 if client_secret not in line][-15:]
                    print(f"---- last lines of the {name} log ----\n" + "\n".join(lines), flush=True)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{results.passed} passed, {len(results.failed)} failed")
    return 0 if not results.failed else 1


if __name__ == "__main__":
    sys.exit(main())
