"""Webhooks end to end, checked by the reference implementation (`standardwebhooks` from PyPI, pinned in
requirements.txt): `apple-signin-bridge simulator` alone, `apple-signin-bridge dev` against it with
BRIDGE_WEBHOOK_URL pointing at a receiver here that verifies every delivery with `standardwebhooks.Webhook`.
A refused delivery is tried again under the same webhook-id; `notify` → bridge → webhook runs end to end; an event
committed while the receiver was down reaches it after the bridge was killed with SIGKILL and started again; the
`webhooks` commands print what they did. Closing line: "N passed, N failed".

Usage: run_webhook_test.py EXECUTABLE RESOURCES"""

import base64
import http.server
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from standardwebhooks import Webhook, WebhookVerificationError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Support"))
from checks import Results, stop  # noqa: E402
from html_forms import Form, SignInLink  # noqa: E402
from ports import free_port  # noqa: E402

EXECUTABLE, RESOURCES = sys.argv[1], sys.argv[2]
SECRET = "whsec_" + base64.b64encode(os.urandom(32)).decode()
ADA = "001234.simulated.ada"
results = Results()


class Receiver:
    """The operator's backend: verifies each delivery with the reference library, refuses the first `refusing`
    valid ones with 503, keeps the rest."""

    def __init__(self, port):
        self.port, self.lock = port, threading.Lock()
        self.delivered, self.refused, self.invalid, self.refusing = [], [], [], 0
        self.server = None

    def start(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {name: value for name, value in self.headers.items()}
                try:
                    payload = Webhook(SECRET).verify(body, headers)
                except WebhookVerificationError as error:
                    with receiver.lock:
                        receiver.invalid.append(str(error))
                    self.send_response(400)
                    self.end_headers()
                    return
                entry = {"id": headers.get("webhook-id") or headers.get("Webhook-Id"), "body": body, "payload": payload}
                with receiver.lock:
                    refuse = receiver.refusing > 0
                    if refuse:
                        receiver.refusing -= 1
                        receiver.refused.append(entry)
                    else:
                        receiver.delivered.append(entry)
                self.send_response(503 if refuse else 204)
                self.end_headers()

            def log_message(self, *args):
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.server = None

    def wait_for(self, event_type, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                found = [d for d in self.delivered if d["payload"].get("type") == event_type]
            if found:
                return found[0]
            time.sleep(0.05)
        return None


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


def request(url, data=None, cookies=None):
    """(status, headers, text) of a GET, or a form POST when `data` is given; redirects are not followed."""
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    req = urllib.request.Request(url, data=body)
    if cookies:
        req.add_header("Cookie", "; ".join(f"{k}={v}" for k, v in cookies.items()))
    try:
        with urllib.request.build_opener(NoRedirect).open(req, timeout=10) as answer:
            return answer.status, answer.headers, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def web_sign_in(base, user):
    """The login page, the simulator's consent page, Continue, the form_post back with the binding cookie."""
    status, headers, text = request(base + "/login")
    cookies = {c.split("=", 1)[0]: c.split("=", 1)[1].split(";", 1)[0] for c in headers.get_all("Set-Cookie") or []}
    link = SignInLink(text).href
    apple = urllib.parse.urlsplit(link)
    consent = Form(request(link)[2])
    fields = dict(consent.fields, user=user, email_choice="share", action="continue")
    auto_post = Form(request(f"{apple.scheme}://{apple.netloc}{consent.action}", fields)[2])
    return request(auto_post.action, auto_post.fields, cookies)[0]


def wait_until_up(url, process, log):
    for _ in range(200):
        if process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(url, timeout=1):
                return True
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not come up; see {log}")


def main():
    started = time.time()
    directory = tempfile.mkdtemp(prefix="webhook-test-")
    receiver = Receiver(free_port())
    receiver.start()
    port, simulator_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BRIDGE_", "APPLE_", "SIMULATOR_"))}
    database = "sqlite:" + os.path.join(directory, "bridge.sqlite3")
    secret_key = base64.b64encode(os.urandom(32)).decode()
    webhook = {"BRIDGE_WEBHOOK_URL": f"http://127.0.0.1:{receiver.port}/hooks/apple-signin", "BRIDGE_WEBHOOK_SECRET": SECRET}
    bridge_env = dict(env, BRIDGE_PORT=str(port), APPLE_ID_URL=f"http://127.0.0.1:{simulator_port}",
                      BRIDGE_DATABASE=database, BRIDGE_SECRET_KEY=secret_key, **webhook)
    # The operator's commands run as in production: an https public URL, the same database and secrets.
    command_env = dict(env, BRIDGE_PUBLIC_URL="https://login.example.com", BRIDGE_DATABASE=database,
                       BRIDGE_SECRET_KEY=secret_key, APPLE_SERVICES_ID="dev.applesigninbridge.web", **webhook)
    processes = []

    def start(arguments, environment, name):
        log = open(os.path.join(directory, name + ".log"), "a")
        process = subprocess.Popen([EXECUTABLE] + arguments, cwd=directory, env=environment, stdout=log, stderr=subprocess.STDOUT)
        processes.append(process)
        return process, log.name

    def run(arguments, environment):
        done = subprocess.run([EXECUTABLE] + arguments, cwd=directory, env=environment, capture_output=True, text=True, timeout=30)
        return done.returncode, (done.stdout + done.stderr).strip()

    try:
        simulator, simulator_log = start(["simulator"], dict(env, SIMULATOR_PORT=str(simulator_port)), "simulator")
        wait_until_up(f"http://127.0.0.1:{simulator_port}/", simulator, simulator_log)
        bridge, bridge_log = start(["dev", "--resources", RESOURCES], bridge_env, "bridge")
        wait_until_up(base + "/healthz", bridge, bridge_log)

        # 1. A first sign-in: member.created, refused once by the receiver, then delivered under the same id.
        receiver.refusing = 1
        results.check("a web sign-in through the standalone simulator", web_sign_in(base, ADA) == 303)
        created = receiver.wait_for("member.created")
        results.check("member.created arrives, verified by standardwebhooks", created is not None)
        if created:
            results.check("its data: the member's id and the flow", created["payload"]["data"] == {"memberId": 1, "flow": "web"},
                          json.dumps(created["payload"]))
            results.check("the refused delivery was tried again under the same webhook-id",
                          [r["id"] for r in receiver.refused] == [created["id"]] and receiver.refused[0]["body"] == created["body"])

        # 2. notify → bridge → webhook, with the simulator's keys.
        code, output = run(["notify", "--to", base + "/apple/notifications", "--event", "email-disabled", "--sub", ADA],
                           dict(env, SIMULATOR_PORT=str(simulator_port)))
        results.check("notify posts a notification signed by the simulator and prints the bridge's answer",
                      code == 0 and '"applied"' in output, output)
        disabled = receiver.wait_for("apple.email_disabled")
        results.check("apple.email_disabled reaches the receiver", disabled is not None and disabled["payload"]["data"] == {"memberId": 1})

        # 3. The receiver is down when an event commits; the bridge is killed (SIGKILL) and started again.
        receiver.stop()
        postponed_before = open(bridge_log).read().count("webhook_postponed")
        code, output = run(["notify", "--to", base + "/apple/notifications", "--event", "consent-revoked", "--sub", ADA],
                           dict(env, SIMULATOR_PORT=str(simulator_port)))
        results.check("consent-revoked applied while the receiver is down", code == 0 and '"applied"' in output, output)
        deadline = time.time() + 10
        while time.time() < deadline and open(bridge_log).read().count("webhook_postponed") == postponed_before:
            time.sleep(0.05)
        results.check("its attempt fails and is postponed", open(bridge_log).read().count("webhook_postponed") > postponed_before)
        bridge.send_signal(signal.SIGKILL)
        bridge.wait()
        code, output = run(["webhooks", "list"], command_env)
        results.check("webhooks list shows the waiting event and its last error",
                      code == 0 and "apple.consent_revoked" in output and "attempts 1" in output and "last error:" in output
                      and "1 pending, 0 failed" in output, output)
        receiver.start()
        bridge, bridge_log = start(["dev", "--resources", RESOURCES], bridge_env, "bridge")
        wait_until_up(base + "/healthz", bridge, bridge_log)
        revoked = receiver.wait_for("apple.consent_revoked", timeout=20)
        results.check("the event committed before the SIGKILL is delivered after the restart",
                      revoked is not None and revoked["payload"]["data"] == {"memberId": 1})

        # 4. Apple's account-delete: member.deleted, requested by Apple.
        code, output = run(["notify", "--to", base + "/apple/notifications", "--event", "account-delete", "--sub", ADA],
                           dict(env, SIMULATOR_PORT=str(simulator_port)))
        deleted = receiver.wait_for("member.deleted")
        results.check("account-delete sends member.deleted, requested by Apple",
                      code == 0 and deleted is not None
                      and deleted["payload"]["data"] == {"memberId": 1, "requestedBy": "apple", "appleRevocation": "none"},
                      output)

        # 5. The commands.
        code, output = run(["webhooks", "test"], command_env)
        ping = receiver.wait_for("ping")
        results.check("webhooks test sends a signed ping and prints the answer",
                      code == 0 and "accepted" in output and ping is not None and ping["payload"]["data"] == {}, output)
        code, output = run(["webhooks", "list", "--failed"], command_env)
        results.check("webhooks list --failed: nothing failed", code == 0 and output.endswith("0 pending, 0 failed"), output)
        code, output = run(["webhooks", "retry"], command_env)
        results.check("webhooks retry prints what it did", code == 0 and output.startswith("webhooks retry: 0 failed events queued again"), output)
        code, output = run(["notify", "--to", base + "/apple/notifications", "--event", "account-exploded", "--sub", ADA], env)
        results.check("notify refuses an unknown event with one line", code == 2 and "--event" in output, output)

        results.check("every delivery verified (none refused by standardwebhooks)", receiver.invalid == [], str(receiver.invalid))
        ids = [d["id"] for d in receiver.delivered]
        results.check("each event delivered once", len(ids) == len(set(ids)), str(ids))
        bodies = b"".join(d["body"] for d in receiver.delivered)
        results.check("no secret in a body", SECRET.encode() not in bodies and secret_key.encode() not in bodies)
    finally:
        for process in processes:
            stop(process)
        if receiver.server:
            receiver.stop()
    print(f"{results.passed} passed, {len(results.failed)} failed ({time.time() - started:.1f} s)")
    sys.exit(1 if results.failed else 0)


main()
