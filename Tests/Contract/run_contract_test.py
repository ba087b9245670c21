"""Contract test: every answer of `apple-signin-bridge dev` against docs/openapi.yaml.

schemathesis (pinned in requirements.txt, configured in schemathesis.toml) generates requests for every documented
operation from the schema (its examples, boundary and negative values, then random ones) and checks each answer:
no 5xx, the status, media type, headers and body as documented. Its report (NDJSON) is read back into one line per
operation and check. Then directed requests make the answers that generated ones reach only by chance or never
(the rate limit's 429, a body over the limit's 413, another method's 405, an unknown path's 404, heads and paths
that are refused before any route: an encoded NUL, a folded header, two Authorization headers) and check them the
same way. Loopback only, bounded in requests and time. Closing line: N passed, N failed.
"""
import collections
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import jsonschema_rs
import requests
from requests.structures import CaseInsensitiveDict
import schemathesis
import yaml
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (content_type_conformance, response_headers_conformance,
                                               response_schema_conformance, status_code_conformance)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Support"))
from dev_server import start_dev_server  # noqa: E402

EXECUTABLE, ROOT = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(ROOT, "docs", "openapi.yaml")
CONFIG = os.path.join(HERE, "schemathesis.toml")
SCHEMATHESIS = os.path.join(os.path.dirname(sys.executable), "schemathesis")
# The whole schemathesis run stops here at the latest (it takes about 10 s on an idle 2-core machine).
RUN_TIMEOUT = 75
# The checks the run reports (schemathesis.toml turns the others off, or off for some operations).
REPORTED_CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance",
                   "response_headers_conformance", "response_schema_conformance", "negative_data_rejection",
                   "positive_data_acceptance", "missing_required_header", "unsupported_method",
                   "allow_header_conformance", "ignored_auth"]
DIRECTED_CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
                   response_headers_conformance, response_schema_conformance]
# The client the schema's examples name (GET /oauth/authorize, POST /oauth/token, POST /oauth/revoke).
EXAMPLE_CLIENT = {"client_id": "example-app", "name": "Example app",
                  "redirect_uris": ["https://app.example.com/callback"]}
EXAMPLE_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
PASSED, FAILED = [], []


def check(name, ok, detail=""):
    (PASSED if ok else FAILED).append(name)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else f": {detail}"), flush=True)


def brief(message):
    """A failure's message in one line: its first two lines that say something."""
    return " ".join([line.strip() for line in message.splitlines() if line.strip()][:2])


def start_server(directory):
    return start_dev_server(EXECUTABLE, ROOT, directory, [EXAMPLE_CLIENT])


# ---- schemathesis over every documented operation ------------------------------------------------------------

def run_schemathesis(base, directory):
    """Runs schemathesis; returns its NDJSON events, its exit code and the path of its log."""
    report, log_path = os.path.join(directory, "schemathesis.ndjson"), os.path.join(directory, "schemathesis.log")
    command = [SCHEMATHESIS, "--config-file", CONFIG, "--no-color", "run", SPEC, "--url", base,
               "--report", "ndjson", "--report-ndjson-path", report]
    with open(log_path, "w") as log:
        try:
            env = dict(os.environ, SCHEMATHESIS_HOOKS="contract_hooks",
                       PYTHONPATH=os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")])))
            code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT,
                                  cwd=directory, env=env).returncode
        except subprocess.TimeoutExpired:
            code = None
    events = []
    if os.path.exists(report):
        with open(report) as f:
            events = [json.loads(line) for line in f if line.strip()]
    return events, code, log_path


def report_schemathesis(spec, events, code, log_path):
    """One line per operation and check: how many answers it judged, and the distinct failures."""
    judged = collections.Counter()
    failures = collections.defaultdict(dict)
    operations = []
    errors = []
    for event in events:
        (kind, data), = event.items()
        if kind == "ScenarioFinished":
            recorder = data["recorder"]
            label = recorder.get("label")
            if label and label not in operations:
                operations.append(label)
            if data.get("status") == "error":
                errors.append(f"{label}: a scenario ended in an error")
            interactions = recorder.get("interactions", {})
            for case_id, results in recorder.get("checks", {}).items():
                status = interactions.get(case_id, {}).get("response", {}).get("status_code")
                for result in results:
                    key = (label, result["name"])
                    judged[key] += 1
                    if result["status"] == "failure":
                        failure = result["failure_info"]["failure"]
                        title = f"{failure['code']} {failure['title']}: {brief(failure['message'])}"
                        failures[key].setdefault(title, status)
        elif "Error" in kind:
            errors.append(f"{kind}: {json.dumps(data)[:300]}")
    for label in sorted(operations, key=lambda op: (op.split(" ", 1)[1], op)):
        for name in REPORTED_CHECKS:
            key = (label, name)
            if not judged[key]:
                continue
            found = failures.get(key)
            detail = "; ".join(f"{title} (status {status})" for title, status in found.items()) if found else ""
            check(f"schemathesis {label} {name} ({judged[key]} answers)", not found, detail)
    documented = {f"{method.upper()} {path}" for path, item in spec["paths"].items() for method in item
                  if method in ("get", "put", "post", "delete", "patch", "head", "options")}
    untested = sorted(documented - set(operations))
    if untested:
        errors.append("not tested: " + ", ".join(untested))
    finished = any("EngineFinished" in event for event in events)
    check("schemathesis ran every operation to the end", finished and code is not None and not errors,
          ("timed out after %d s" % RUN_TIMEOUT if code is None else "; ".join(errors) or f"exit code {code}")
          + f"; see {log_path}")


# ---- directed requests: answers generated requests do not reach ----------------------------------------------

def validate(schema, path, method, response):
    """The checks schemathesis runs, on one answer to a documented operation; returns the failures' titles."""
    case = schema[path][method].Case()
    try:
        case.validate_response(response, checks=DIRECTED_CHECKS)
    except FailureGroup as group:  # one exception per failed check
        return "; ".join(sorted(f"{failure.title}: {brief(failure.message)}" for failure in group.exceptions))
    return ""


def post(base, path, **kwargs):
    return requests.post(base + path, allow_redirects=False, timeout=10, **kwargs)


def rate_limited(base, schema):
    """The sign-in bucket shared by these operations: each is sent requests until it answers 429 (at most 250)."""
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    authorization = {"client_id": EXAMPLE_CLIENT["client_id"], "redirect_uri": EXAMPLE_CLIENT["redirect_uris"][0],
                     "response_type": "code", "scope": "openid", "code_challenge": EXAMPLE_CHALLENGE,
                     "code_challenge_method": "S256"}
    senders = [
        ("/api/auth/nonce", "POST", lambda: post(base, "/api/auth/nonce")),
        ("/api/auth/apple", "POST", lambda: post(base, "/api/auth/apple", json={"idToken": "x"})),
        ("/api/auth/refresh", "POST", lambda: post(base, "/api/auth/refresh", json={"refreshToken": "x"})),
        ("/oauth/token", "POST", lambda: post(base, "/oauth/token", headers=form,
                                              data="grant_type=refresh_token&refresh_token=x&client_id=example-app")),
        ("/oauth/authorize", "GET", lambda: requests.get(base + "/oauth/authorize", params=authorization,
                                                         allow_redirects=False, timeout=10)),
    ]
    for path, method, send in senders:
        response = None
        for _ in range(250):
            response = send()
            if response.status_code == 429:
                break
        if response.status_code != 429:
            check(f"directed {method} {path} 429 as documented", False,
                  f"no 429 after 250 requests (the last answered {response.status_code})")
            continue
        failures = validate(schema, path, method, response)
        check(f"directed {method} {path} 429 as documented", not failures, failures + f" body {response.text[:160]!r}")


def too_large(base, schema, spec):
    """A body one byte over 65,536 to every operation that takes one (or a POST without one): 413 as documented."""
    body = b"a" * 65537
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method not in ("post", "put", "patch", "delete"):
                continue
            media = next(iter(operation.get("requestBody", {}).get("content", {"application/json": None})))
            response = requests.request(method.upper(), base + path, data=body, headers={"Content-Type": media},
                                        allow_redirects=False, timeout=10)
            failures = validate(schema, path, method.upper(), response)
            if response.status_code != 413:
                failures = f"answered {response.status_code}, not 413" + (f"; {failures}" if failures else "")
            check(f"directed {method.upper()} {path} 413 as documented", not failures,
                  failures + f" body {response.text[:160]!r}")


def group_error(spec, path):
    """The error schema of the group a path belongs to; None for those answering plain text (operations)."""
    if path.startswith("/api/") or path.startswith("/apple/"):
        return "Error"
    if path.startswith("/oauth/") or path == "/.well-known/openid-configuration":
        return "OAuthError"
    return None


def check_refusal(spec, name, path, response, expected_status, allow=None):
    """A refusal no operation documents (404, 405): the group's error schema as JSON, no-store, and Allow."""
    problems = []
    if response.status_code != expected_status:
        problems.append(f"status {response.status_code}")
    schema_name = group_error(spec, path)
    if schema_name:
        if response.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            problems.append(f"Content-Type {response.headers.get('Content-Type')!r}, not application/json")
        elif response.headers.get("Cache-Control") != "no-store":
            problems.append(f"Cache-Control {response.headers.get('Cache-Control')!r}, not no-store")
        else:
            document = {"$ref": f"#/components/schemas/{schema_name}", "components": spec["components"]}
            errors = [e.message for e in jsonschema_rs.Draft4Validator(document).iter_errors(response.json())]
            if errors:
                problems.append(f"not {schema_name}: " + "; ".join(errors))
    elif not response.headers.get("Content-Type", "").startswith("text/plain"):
        problems.append(f"Content-Type {response.headers.get('Content-Type')!r}, not text/plain")
    if allow is not None:
        advertised = {m.strip() for m in response.headers.get("Allow", "").split(",") if m.strip()}
        if advertised != allow:
            problems.append(f"Allow {response.headers.get('Allow')!r}, not {', '.join(sorted(allow))}")
    detail = "; ".join(problems) + (f"; body {response.text[:160]!r}" if problems else "")
    check(name, not problems, detail)


def other_methods(base, spec):
    """Each documented path with a method it does not take: 405, the methods it takes in Allow."""
    for path, item in spec["paths"].items():
        if path in ("/oauth/authorize", "/oauth/logout"):
            continue  # pages for people: their refusals are HTML by design (see their descriptions)
        methods = {m.upper() for m in item if m in ("get", "post", "put", "patch", "delete")}
        allow = methods | ({"HEAD"} if "GET" in methods else set())
        other = next(m for m in ("PUT", "PATCH", "GET", "POST") if m not in methods)
        response = requests.request(other, base + path, allow_redirects=False, timeout=10)
        check_refusal(spec, f"directed {other} {path} 405 as documented", path, response, 405, allow)


def unknown_paths(base, spec):
    for path in ["/api/no-such-path", "/apple/no-such-path", "/oauth/no-such-path"]:
        response = requests.get(base + path, allow_redirects=False, timeout=10)
        check_refusal(spec, f"directed GET {path} 404 as documented", path, response, 404)


class RawResponse:
    """Enough of `requests.Response` for `check_refusal`, read off a socket: for requests `requests` cannot send."""

    def __init__(self, data):
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status_code = int(lines[0].split(" ")[1]) if lines and lines[0].startswith("HTTP/1.1 ") else 0
        self.headers = CaseInsensitiveDict()
        for line in lines[1:]:
            name, _, value = line.partition(":")
            self.headers[name.strip()] = value.strip()
        self.text = body.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.text)


def raw_request(base, head):
    """Sends `head` (the request line and header lines, without the Host line and the blank line) as is; returns what
    the server wrote before closing (Connection: close is sent unless the head itself is what closes it)."""
    host, port = base.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(head.encode("latin-1") + f"Host: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := connection.recv(65536):
            data += chunk
    return RawResponse(data)


def hardened_heads(base, spec):
    """Heads a front end and this server could read differently, and paths Swift's String comparisons misread:
    refused or answered in the group's shape (issue 56)."""
    for path in ["/api/me%00/x.js", "/oauth/userinfo%00.css"]:
        response = requests.get(base + path, allow_redirects=False, timeout=10)
        check_refusal(spec, f"directed GET {path} (encoded NUL) 400 as documented", path, response, 400)
    for path in ["/api/%CC%B1x", "/oauth/%CC%B1x"]:
        response = requests.get(base + path, allow_redirects=False, timeout=10)
        check_refusal(spec, f"directed GET {path} (a combining mark after the prefix) 404 as documented", path, response, 404)
    twice = raw_request(base, "GET /api/me HTTP/1.1\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n")
    check_refusal(spec, "directed GET /api/me with two Authorization headers 400 as documented", "/api/me", twice, 400)
    folded = raw_request(base, "POST /api/auth/nonce HTTP/1.1\r\nContent-Length: 0\r\n 5\r\n")
    check_refusal(spec, "directed POST /api/auth/nonce with a folded header 400 as documented", "/api/auth/nonce", folded, 400)
    check("directed folded header closes the connection", folded.headers.get("Connection", "").lower() == "close",
          f"Connection {folded.headers.get('Connection')!r}")


def main():
    started = time.monotonic()
    with open(SPEC) as f:
        spec = yaml.safe_load(f)
    directory = tempfile.mkdtemp(prefix="asb-contract-")
    process, base = start_server(directory)
    try:
        events, code, log_path = run_schemathesis(base, directory)
        report_schemathesis(spec, events, code, log_path)
        schema = schemathesis.openapi.from_path(SPEC)
        unknown_paths(base, spec)
        hardened_heads(base, spec)
        other_methods(base, spec)
        too_large(base, schema, spec)
        rate_limited(base, schema)
    finally:
        process.terminate()
        process.wait(timeout=10)
    if FAILED:
        print(f"contract test: {time.monotonic() - started:.1f} s; schemathesis and server logs kept in {directory}")
    else:
        shutil.rmtree(directory, ignore_errors=True)
        print(f"contract test: {time.monotonic() - started:.1f} s")
    print(f"{len(PASSED)} passed, {len(FAILED)} failed")
    sys.exit(1 if FAILED else 0)


main()
