"""Forward auth in a real browser through real proxies: an application behind Debian's nginx (`auth_request`) and
behind Debian's Caddy (`forward_auth`), each asking the bridge's GET /auth/verify, as docs/forward-auth.md's
recipes configure them.

For each set-up headless Chromium opens a page of a small application (a Python server that shows the
X-Auth-Request-* headers it received), is sent to the bridge's login page, signs in through the Apple ID simulator
and lands back on that page, whose upstream received X-Auth-Request-User = the member id the bridge's database
holds. A page that requires the group `staff` stays shut until the person signs in through a link from
`apple-signin-bridge invite --group staff`; after signing out at the bridge the application is closed to that
browser again. The set-ups (docs/forward-auth.md):

- sibling hosts: the bridge on bridge.example.test, the application on app.example.test, the session cookie scoped
  to example.test with BRIDGE_COOKIE_DOMAIN (nginx, and Caddy);
- one host: the bridge's own paths routed to it from app.example.test, the session cookie host-only (`__Host-`).

Chromium's --host-resolver-rules maps *.example.test to 127.0.0.1; the proxies terminate TLS with a throwaway
self-signed certificate. Usage: run_forward_auth_test.py EXECUTABLE RESOURCES_DIR
Prints one line per check and closes with "N passed, N failed"; exits 1 if anything failed."""
import base64
import contextlib
import html
import http.server
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
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
DOMAIN = "example.test"
BRIDGE_HOST, APP_HOST = "bridge." + DOMAIN, "app." + DOMAIN
SERVICES_ID = "dev.applesigninbridge.web"


def wait_until(condition, what, log_path, process, seconds=15):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process is not None and process.poll() is not None:
            break
        if condition():
            return
        time.sleep(0.1)
    tail = ""
    if log_path and os.path.exists(log_path):
        with open(log_path, errors="replace") as log:
            tail = log.read()[-2000:]
    raise RuntimeError(f"{what} did not come up:\n{tail}")


def answers(url):
    try:
        urllib.request.urlopen(url, timeout=1)
        return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def listening(port):
    import socket
    with contextlib.closing(socket.socket()) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def make_certificate(directory):
    """A throwaway self-signed certificate for the test's host names."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=" + DOMAIN,
                    "-addext", f"subjectAltName=DNS:{DOMAIN},DNS:*.{DOMAIN}", "-keyout", key, "-out", cert],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(key, 0o644)  # read by the proxy's worker processes too; a throwaway test key
    return cert, key


class Upstream:
    """The protected application: every page shows the forward-auth headers its proxy passed on, and each request
    is remembered."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the standard library's name)
            seen = {name: self.headers.get(name) for name in
                    ("X-Auth-Request-User", "X-Auth-Request-Email", "X-Auth-Request-Groups")}
            self.server.requests.append((self.path, seen))
            body = ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>App</title></head><body>"
                    f"<h1 id='app'>App page {html.escape(self.path)}</h1>"
                    f"<p>Member <span id='user'>{html.escape(seen['X-Auth-Request-User'] or '')}</span>, "
                    f"groups <span id='groups'>{html.escape(seen['X-Auth-Request-Groups'] or '')}</span></p>"
                    "</body></html>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    def __init__(self):
        self.port = free_port()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), self.Handler)
        self.server.requests = []
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def requests(self):
        return self.server.requests

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Bridge:
    """`apple-signin-bridge dev` behind the proxy at `public_url`, with its Apple ID simulator."""

    def __init__(self, directory, public_url, app_origin, cookie_domain):
        self.port, self.simulator_port = free_port(), free_port()
        self.database = os.path.join(directory, "bridge.sqlite3")
        # Only these settings: none of the caller's BRIDGE_/APPLE_ variables may change what is tested.
        self.env = {key: value for key, value in os.environ.items()
                    if not key.startswith(("BRIDGE_", "APPLE_", "SIMULATOR_"))}
        self.env.update(BRIDGE_PUBLIC_URL=public_url, BRIDGE_DATABASE="sqlite:" + self.database,
                        BRIDGE_SECRET_KEY=base64.b64encode(os.urandom(32)).decode(),
                        APPLE_SERVICES_ID=SERVICES_ID, BRIDGE_RETURN_URLS=app_origin + "/*")
        if cookie_domain:
            self.env["BRIDGE_COOKIE_DOMAIN"] = cookie_domain
        env = dict(self.env, BRIDGE_PORT=str(self.port), SIMULATOR_PORT=str(self.simulator_port))
        self.log_path = os.path.join(directory, "bridge.log")
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen([EXECUTABLE, "dev", "--resources", RESOURCES], cwd=directory, env=env,
                                            stdout=log, stderr=subprocess.STDOUT)
        wait_until(lambda: answers(f"http://127.0.0.1:{self.port}/healthz"), "the dev server", self.log_path, self.process)

    def invite(self, group):
        """The link `apple-signin-bridge invite` prints, as an operator runs it."""
        done = subprocess.run([EXECUTABLE, "invite", "--group", group, "--expires", "1h"], env=self.env,
                              capture_output=True, text=True, timeout=30)
        return done.stdout.strip() if done.returncode == 0 else None

    def member_id(self, apple_sub):
        with contextlib.closing(sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, timeout=5)) as database:
            row = database.execute("SELECT id FROM users WHERE provider = 'apple' AND provider_user_id = ?",
                                   (apple_sub,)).fetchone()
        return str(row[0]) if row else None


# ---- The proxies, as docs/forward-auth.md's recipes write them ---------------------------------------------------

NGINX_VERIFY = """
        location = /_bridge_verify {{
            internal;
            proxy_pass http://127.0.0.1:{bridge_port}/auth/verify{query};
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header Host {bridge_host};
        }}"""

NGINX_PROTECTED = """
        location {location} {{
            auth_request {verify};
            auth_request_set $auth_user $upstream_http_x_auth_request_user;
            auth_request_set $auth_email $upstream_http_x_auth_request_email;
            auth_request_set $auth_groups $upstream_http_x_auth_request_groups;
            proxy_set_header X-Auth-Request-User $auth_user;
            proxy_set_header X-Auth-Request-Email $auth_email;
            proxy_set_header X-Auth-Request-Groups $auth_groups;
            error_page 401 = @sign_in;
            proxy_pass http://127.0.0.1:{upstream_port};
        }}"""


def nginx_config(directory, setup, ports, cert, key):
    bridge_origin = f"https://{setup.bridge_host}:{ports['proxy']}"
    to_bridge = f"""
            proxy_pass http://127.0.0.1:{ports['bridge']};
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto https;"""
    app = "".join([
        NGINX_VERIFY.format(bridge_port=ports["bridge"], query="", bridge_host=setup.bridge_host).replace(
            "/_bridge_verify", "/_bridge_verify", 1),
        NGINX_VERIFY.format(bridge_port=ports["bridge"], query="?group=staff", bridge_host=setup.bridge_host).replace(
            "/_bridge_verify", "/_bridge_verify_staff", 1),
        NGINX_PROTECTED.format(location="/", verify="/_bridge_verify", upstream_port=ports["upstream"]),
        NGINX_PROTECTED.format(location="/staff/", verify="/_bridge_verify_staff", upstream_port=ports["upstream"]),
        f"""
        location @sign_in {{
            return 302 {bridge_origin}/login?return_to=$scheme://$http_host$request_uri;
        }}""",
    ])
    if setup.same_host:
        # The bridge's own paths on the application's host (docs/forward-auth.md, "One host").
        app += f"""
        location ~ ^/(login|apple_redirect|session|logout|account/delete|invite|public/) {{{to_bridge}
        }}"""
        servers = f"""
    server {{
        listen 127.0.0.1:{ports['proxy']} ssl;
        server_name {APP_HOST};{app}
    }}"""
    else:
        servers = f"""
    server {{
        listen 127.0.0.1:{ports['proxy']} ssl;
        server_name {BRIDGE_HOST};
        location / {{{to_bridge}
        }}
    }}
    server {{
        listen 127.0.0.1:{ports['proxy']} ssl;
        server_name {APP_HOST};{app}
    }}"""
    as_root = os.geteuid() == 0
    return f"""
{'user nobody nogroup;' if as_root else ''}
worker_processes 1;
daemon off;
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {directory}/client_body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    ssl_certificate {cert};
    ssl_certificate_key {key};
{servers}
}}
"""


def caddy_config(directory, setup, ports, cert, key):
    bridge_origin = f"https://{setup.bridge_host}:{ports['proxy']}"

    def protected(matcher, query):
        return f"""
    route {matcher} {{
        # Whatever the browser sent under these names is not the bridge's answer.
        request_header -X-Auth-Request-User
        request_header -X-Auth-Request-Email
        request_header -X-Auth-Request-Groups
        forward_auth 127.0.0.1:{ports['bridge']} {{
            uri /auth/verify{query}
            header_up Host {setup.bridge_host}
            copy_headers X-Auth-Request-User X-Auth-Request-Email X-Auth-Request-Groups
            @signed_out status 401
            handle_response @signed_out {{
                redir {bridge_origin}/login?return_to={{scheme}}://{{hostport}}{{http.request.orig_uri}} 302
            }}
        }}
        reverse_proxy 127.0.0.1:{ports['upstream']}
    }}"""

    app = protected("/staff/*", "?group=staff") + protected("*", "")
    bridge = f"""
    reverse_proxy 127.0.0.1:{ports['bridge']}"""
    if setup.same_host:
        sites = f"""
https://{APP_HOST}:{ports['proxy']} {{
    bind 127.0.0.1
    tls {cert} {key}
    @bridge path /login /apple_redirect /session /logout /account/delete /invite /public/*
    handle @bridge {{{bridge}
    }}
    handle {{{app}
    }}
}}"""
    else:
        sites = f"""
https://{BRIDGE_HOST}:{ports['proxy']} {{
    bind 127.0.0.1
    tls {cert} {key}{bridge}
}}
https://{APP_HOST}:{ports['proxy']} {{
    bind 127.0.0.1
    tls {cert} {key}{app}
}}"""
    return f"""{{
    admin off
    auto_https disable_redirects
    storage file_system {directory}/storage
    skip_install_trust
    log {{
        output file {directory}/caddy.log
        level WARN
    }}
}}
{sites}
"""


class Proxy:
    def __init__(self, kind, directory, setup, ports, cert, key):
        self.log_path = os.path.join(directory, "error.log")
        open(self.log_path, "a").close()
        if kind == "nginx":
            if os.geteuid() == 0:
                os.chmod(directory, 0o755)  # the workers, as nobody, write their temporary files here
            config = os.path.join(directory, "nginx.conf")
            with open(config, "w") as file:
                file.write(nginx_config(directory, setup, ports, cert, key))
            command = [shutil.which("nginx") or "/usr/sbin/nginx", "-c", config, "-p", directory]
        else:
            config = os.path.join(directory, "Caddyfile")
            with open(config, "w") as file:
                file.write(caddy_config(directory, setup, ports, cert, key))
            command = [shutil.which("caddy") or "/usr/bin/caddy", "run", "--adapter", "caddyfile", "--config", config]
        env = dict(os.environ, HOME=directory, XDG_DATA_HOME=directory, XDG_CONFIG_HOME=directory)
        with open(self.log_path, "a") as log:
            self.process = subprocess.Popen(command, cwd=directory, env=env, stdout=log, stderr=subprocess.STDOUT)
        wait_until(lambda: listening(ports["proxy"]), kind, self.log_path, self.process)


class Setup:
    def __init__(self, proxy, same_host):
        self.proxy, self.same_host = proxy, same_host
        self.bridge_host = APP_HOST if same_host else BRIDGE_HOST
        self.label = f"{proxy}, " + ("bridge on the application's host" if same_host
                                      else "bridge on a sibling host (BRIDGE_COOKIE_DOMAIN)")


# ---- The browser's way through one set-up --------------------------------------------------------------------------

def run_setup(setup, work, results, cert, key):
    check = results.check
    directory = os.path.join(work, setup.proxy + ("-one-host" if setup.same_host else "-siblings"))
    os.makedirs(os.path.join(directory, "bridge"), mode=0o700)
    os.makedirs(os.path.join(directory, "proxy"), mode=0o700)
    upstream = Upstream()
    ports = {"proxy": free_port(), "upstream": upstream.port}
    app_origin = f"https://{APP_HOST}:{ports['proxy']}"
    bridge_origin = f"https://{setup.bridge_host}:{ports['proxy']}"
    bridge = proxy = browser = None
    label = setup.label
    try:
        bridge = Bridge(os.path.join(directory, "bridge"), bridge_origin, app_origin,
                        None if setup.same_host else DOMAIN)
        ports["bridge"] = bridge.port
        proxy = Proxy(setup.proxy, os.path.join(directory, "proxy"), setup, ports, cert, key)
        browser = Browser(os.path.join(directory, "chromium"),
                          extra_args=[f"--host-resolver-rules=MAP *.{DOMAIN} 127.0.0.1", "--ignore-certificate-errors"])
        page = browser.page
        for domain in ("Page", "Network"):
            page.call(f"{domain}.enable")
        page.call("Network.setCacheDisabled", cacheDisabled=True)
        simulator = f"http://127.0.0.1:{bridge.simulator_port}"

        def where():
            return page.js("location.origin + location.pathname") or "?"

        def at(origin, path):
            return page.wait_for(f"location.origin === '{origin}' && location.pathname === '{path}'"
                                 " && document.readyState === 'complete'", 15)

        def sign_in_at_apple(index=0):
            """From the bridge's login page through the simulator's consent page; the chosen Apple user."""
            page.js("document.getElementById('apple-signin').click()")
            if not page.wait_for(f"location.origin === '{simulator}' && document.readyState === 'complete'"
                                 " && document.querySelector('button[value=continue]') !== null", 15):
                return None
            apple_sub = page.js(f"(() => {{ const radio = document.querySelectorAll('input[name=user]')[{index}];"
                                " radio.checked = true; return radio.value; })()")
            page.js("document.querySelector('button[value=continue]').click()")
            return apple_sub

        def app_page_shows(path):
            """Whether the browser shows the application's page `path`, and the member and groups it shows."""
            shown = page.wait_for(f"location.href === '{app_origin}{path}' && document.getElementById('app') !== null", 15)
            if not shown:
                return False, None, None
            return True, page.js("document.getElementById('user').textContent"), page.js(
                "document.getElementById('groups').textContent")

        # 1. Signed out: the application sends the browser to the bridge's login page, and its upstream sees nothing.
        page.navigate(app_origin + "/")
        sent = at(bridge_origin, "/login")
        return_to = urllib.parse.parse_qs((page.js("location.search") or "").lstrip("?")).get("return_to")
        check(f"{label}: a signed-out visit of the application is sent to the bridge's login page, to return",
              sent and return_to == [app_origin + "/"] and not upstream.requests, where())

        # 2. Signing in lands back on that page, whose upstream received the member id.
        apple_sub = sign_in_at_apple(0) if sent else None
        shown, user, groups = app_page_shows("/")
        member = bridge.member_id(apple_sub) if apple_sub else None
        received = [seen for path, seen in upstream.requests if path == "/"]
        check(f"{label}: after signing in through the simulator the browser lands back on the application's page, "
              "whose upstream received X-Auth-Request-User = the member id",
              shown and member is not None and user == member and received
              and received[-1]["X-Auth-Request-User"] == member and not received[-1]["X-Auth-Request-Groups"],
              f"shown {user!r}, member {member!r}, upstream saw {received[-1] if received else None}" if shown else where())
        check(f"{label}: ... and X-Auth-Request-Email, the email the simulator shared",
              bool(received) and (received[-1]["X-Auth-Request-Email"] or "").endswith("@example.com"),
              repr(received[-1]["X-Auth-Request-Email"]) if received else "")

        # The browser's own X-Auth-Request-* headers never reach the application as the bridge's answer.
        page.call("Network.setExtraHTTPHeaders", headers={"X-Auth-Request-User": "999", "X-Auth-Request-Groups": "staff",
                                                          "X-Auth-Request-Email": "someone@else.example"})
        page.navigate(app_origin + "/")
        shown, _, _ = app_page_shows("/")
        page.call("Network.setExtraHTTPHeaders", headers={})
        received = [seen for path, seen in upstream.requests if path == "/"]
        check(f"{label}: headers the browser sends under those names are replaced by the bridge's answer",
              shown and received and received[-1]["X-Auth-Request-User"] == member
              and not received[-1]["X-Auth-Request-Groups"]
              and received[-1]["X-Auth-Request-Email"] != "someone@else.example",
              f"upstream saw {received[-1] if received else None}")

        # 3. A page that requires the group `staff`: shut to a member outside it.
        page.navigate(app_origin + "/staff/")
        time.sleep(0.3)
        staff_requests = [path for path, _ in upstream.requests if path.startswith("/staff/")]
        check(f"{label}: a page requiring the group staff stays shut to a member outside it (403)",
              page.js("document.getElementById('app') === null") and not staff_requests,
              f"{where()}, upstream saw {staff_requests}, page says {page.js('document.body.innerText')[:100]!r}")

        # 4. An invitation: the same person signs in through the link and is in the group.
        link = bridge.invite("staff")
        check(f"{label}: apple-signin-bridge invite --group staff prints a link on the bridge",
              link is not None and link.startswith(bridge_origin + "/invite?token="), repr(link))
        if link:
            page.navigate(link + "&return_to=" + urllib.parse.quote(app_origin + "/staff/", safe=""))
            on_login = at(bridge_origin, "/login")
            invited_sub = sign_in_at_apple(0) if on_login else None
            shown, user, groups = app_page_shows("/staff/")
            check(f"{label}: signed in through the invitation, the member is in staff and the staff page opens",
                  on_login and invited_sub == apple_sub and shown and user == member and groups == "staff",
                  f"member {user!r}, groups {groups!r}" if shown else where())

        # 5. Signing out at the bridge closes the application to this browser.
        page.navigate(bridge_origin + "/session")
        signed_out = False
        if page.js("document.querySelector('form[action=\"/logout\"] button, form[action=\"/logout\"] [type=submit]') !== null"):
            page.js("(document.querySelector('form[action=\"/logout\"] button') || "
                    "document.querySelector('form[action=\"/logout\"] [type=submit]')).click()")
            signed_out = page.wait_for("location.pathname === '/login' && location.search.includes('signed_out=1')", 15)
        check(f"{label}: signing out at the bridge", signed_out, where())
        before = [path for path, _ in upstream.requests if path == "/"]
        page.navigate(app_origin + "/")
        closed = at(bridge_origin, "/login")
        check(f"{label}: after signing out the application's page is closed to that browser (sent to the login page)",
              closed and [path for path, _ in upstream.requests if path == "/"] == before, where())
    except Exception as error:
        traceback.print_exc()
        check(f"{label}: ran to the end", False, repr(error))
    finally:
        if browser:
            browser.close()
        stop(proxy.process if proxy else None)
        stop(bridge.process if bridge else None)
        upstream.close()
        if results.failed:
            for name, path in [("bridge", bridge.log_path if bridge else None),
                               (setup.proxy, proxy.log_path if proxy else None)]:
                if path and os.path.exists(path):
                    with open(path, errors="replace") as log:
                        lines = log.read().splitlines()[-15:]
                    print(f"---- last lines of the {name} log ({label}) ----\n" + "\n".join(lines), flush=True)


def main():
    # Stopped from outside, still stop the proxies, the bridge and Chromium on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results = Results()
    work = tempfile.mkdtemp(prefix="asb-forward-auth-")
    try:
        if os.geteuid() == 0:
            os.chmod(work, 0o755)  # nginx's workers (nobody) read the certificate here
        cert, key = make_certificate(work)
        for setup in [Setup("nginx", same_host=False), Setup("caddy", same_host=False), Setup("nginx", same_host=True),
                      Setup("caddy", same_host=True)]:
            began = time.time()
            run_setup(setup, work, results, cert, key)
            print(f"     ({setup.label}: {time.time() - began:.1f} s)", flush=True)
    except Exception as error:
        traceback.print_exc()
        results.check("the forward-auth test set up its servers", False, repr(error))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{results.passed} passed, {len(results.failed)} failed")
    return 0 if not results.failed else 1


if __name__ == "__main__":
    sys.exit(main())
