"""The operations check (scripts/operations-check): what an operator's Prometheus and Grafana will read.

Starts `apple-signin-bridge dev` (Tests/Support/dev_server.py), signs in once through the Apple ID simulator and
makes a few other requests, then checks:
- /metrics passes `promtool check metrics` with no warning at all, and shows no path or query a client chose;
- every metric the code records (`increment("bridge_…")`, `observe("bridge_…")`) is described, and every metric
  /metrics lists is described in docs/operations.md;
- docs/operations/alerts.yml passes `promtool check rules`, and its unit tests (Tests/Operations/alerts.test.yml)
  pass `promtool test rules`;
- docs/operations/grafana-dashboard.json imports cleanly (a ${DS_PROMETHEUS} input every panel uses, unique ids)
  and every query in it parses as PromQL;
- every metric the dashboard and the alert rules name is one /metrics lists, so a rename cannot silently empty a
  panel or an alert.

Usage: run_operations_check.py EXECUTABLE ROOT. Standard library only. Closing line: "N passed, N failed".
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

EXECUTABLE, ROOT = sys.argv[1], os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(ROOT, "Tests", "Support"))
from dev_server import start_dev_server  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from deployment_signin import Forms, NoRedirect  # noqa: E402  (the deployment check's browser pieces)

DASHBOARD = os.path.join(ROOT, "docs", "operations", "grafana-dashboard.json")
ALERTS = os.path.join(ROOT, "docs", "operations", "alerts.yml")
ALERT_TESTS = os.path.join(ROOT, "Tests", "Operations", "alerts.test.yml")
OPERATIONS_DOC = os.path.join(ROOT, "docs", "operations.md")
# Written into requests below; none may reach /metrics (labels carry routes, never the path or query a client chose).
PROBE = "probe-7f3a9c"

PASSED, FAILED = [], []


def check(name, ok, detail=""):
    (PASSED if ok else FAILED).append(name)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else f": {detail}"), flush=True)
    return ok


def promtool(*args, stdin=None):
    """promtool's exit status and its whole output (it writes warnings to stderr or stdout, by version)."""
    run = subprocess.run(["promtool", *args], input=stdin, capture_output=True, text=True, timeout=60)
    return run.returncode, (run.stdout + run.stderr).strip()


class Browser:
    """Just enough of a browser for one web sign-in on loopback: it keeps cookies by name and sends them back, the
    `Secure` ones too (as browsers do on 127.0.0.1, unlike urllib's cookie jar)."""

    def __init__(self):
        self.cookies = {}
        self.opener = urllib.request.build_opener(NoRedirect())

    def fetch(self, url, form=None, headers=None):
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            with self.opener.open(urllib.request.Request(url, data=data, headers=headers), timeout=15) as response:
                status, answer_headers, body = response.status, response.headers, response.read().decode()
        except urllib.error.HTTPError as error:
            status, answer_headers, body = error.code, error.headers, error.read().decode()
        for cookie in answer_headers.get_all("Set-Cookie") or []:
            name, _, value = cookie.split(";", 1)[0].partition("=")
            self.cookies[name.strip()] = value.strip()
        return status, answer_headers, body


def sign_in(base):
    """A web sign-in through the simulator, as deployment_signin.py makes it; True when it ends on /session."""
    browser = Browser()
    _, _, page = browser.fetch(base + "/login")
    login = Forms()
    login.feed(page)
    href = login.links.get("apple-signin", {}).get("href")
    if not href:
        return False
    _, _, consent_page = browser.fetch(href)
    consent = Forms()
    consent.feed(consent_page)
    if not consent.forms:
        return False
    action, fields = consent.forms[0]
    fields = [(k, v) for k, v in fields if k not in ("user", "email_choice", "action")]
    fields += [("user", "001234.simulated.ada"), ("email_choice", "share"), ("action", "continue")]
    _, _, auto_post = browser.fetch(urllib.parse.urljoin(href, action or "/auth/authorize"), fields)
    posted = Forms()
    posted.feed(auto_post)
    if not posted.forms:
        return False
    action, fields = posted.forms[0]
    origin = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(href))
    status, headers, _ = browser.fetch(action, fields, {"Origin": origin})
    return status == 303 and headers.get("Location") == "/session"


def metric_families(exposition):
    """{name: type} from the `# TYPE` lines."""
    return dict(re.findall(r"^# TYPE (\S+) (\S+)$", exposition, re.M))


def referenced_metrics(expressions):
    """The metric names the PromQL expressions use (recording rules' `a:b` names and `up` aside)."""
    names = set()
    for expr in expressions:
        names.update(re.findall(r"\b(bridge_[a-z0-9_]+)\b", expr))
    return names


def listed(name, families):
    """Whether /metrics lists `name`, a histogram's `_bucket`, `_sum` and `_count` series included."""
    if name in families:
        return True
    base, _, suffix = name.rpartition("_")
    return suffix in ("bucket", "sum", "count") and families.get(base) == "histogram"


def dashboard_expressions(dashboard):
    panels = list(dashboard.get("panels", []))
    for panel in list(panels):
        panels += panel.get("panels", [])  # panels inside collapsed rows
    return panels, [t["expr"] for p in panels for t in p.get("targets", []) if t.get("expr")]


def alert_expressions(path):
    """The `expr:` of every rule, one-line or block (`|`); enough YAML for this one file's layout."""
    expressions, lines = [], open(path).read().split("\n")
    for index, line in enumerate(lines):
        match = re.match(r"^(\s*)expr:\s*(.*)$", line)
        if not match:
            continue
        if match.group(2) not in ("|", ">", "|-", ">-"):
            expressions.append(match.group(2))
            continue
        block, indent = [], len(match.group(1))
        for following in lines[index + 1:]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            block.append(following.strip())
        expressions.append(" ".join(block))
    return expressions


def recorded_in_sources():
    """Names the Swift code records directly; each must be described (MetricFamily.all)."""
    names = set()
    for folder, _, files in os.walk(os.path.join(ROOT, "Sources")):
        for file in files:
            if file.endswith(".swift"):
                text = open(os.path.join(folder, file)).read()
                names.update(re.findall(r'(?:increment|observe)\(\s*"(bridge_[a-z0-9_]+)"', text))
    return names


def check_dashboard(families):
    try:
        dashboard = json.load(open(DASHBOARD))
    except (OSError, ValueError) as error:
        check("the Grafana dashboard is JSON", False, str(error))
        return []
    check("the Grafana dashboard is JSON", True)
    inputs = [i for i in dashboard.get("__inputs", []) if i.get("pluginId") == "prometheus"]
    check("the dashboard asks for its Prometheus data source as the ${DS_PROMETHEUS} input",
          [i.get("name") for i in inputs] == ["DS_PROMETHEUS"] and dashboard.get("id") is None)
    check("the dashboard's schemaVersion is Grafana 10/11's (39)", dashboard.get("schemaVersion") == 39)
    panels, expressions = dashboard_expressions(dashboard)
    ids = [p.get("id") for p in panels]
    check("every panel has its own id", len(ids) == len(set(ids)) and None not in ids)
    foreign = [p.get("title") for p in panels if p.get("type") != "row"
               and (p.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}"
                    or any(t.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}" for t in p.get("targets", [])))]
    check("every panel and query reads ${DS_PROMETHEUS}", not foreign, ", ".join(map(str, foreign)))
    variables = [v for v in dashboard.get("templating", {}).get("list", []) if v.get("type") == "query"]
    expressions_with_variables = expressions + [v["definition"] for v in variables]
    # Grafana's variables replaced by what they stand for, each query becomes a recording rule promtool parses.
    concrete = [e.replace("$__rate_interval", "5m").replace("$job", "apple-signin-bridge").replace("$instance", ".*")
                .replace("label_values(", "count by (job, instance) (").replace(", job)", ")").replace(", instance)", ")")
                for e in expressions_with_variables]
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as rules:
        rules.write("groups:\n  - name: dashboard\n    rules:\n")
        for index, expr in enumerate(concrete):
            rules.write(f"      - record: dashboard:query_{index}\n        expr: {json.dumps(expr)}\n")
    status, output = promtool("check", "rules", rules.name)
    os.unlink(rules.name)
    check(f"all {len(concrete)} dashboard queries parse as PromQL", status == 0, output[-2000:])
    missing = sorted(n for n in referenced_metrics(expressions_with_variables) if not listed(n, families))
    check("every metric the dashboard names is one /metrics lists", not missing, ", ".join(missing))
    return expressions


def main():
    started = time.monotonic()
    if not shutil.which("promtool"):
        check("promtool is installed (scripts/ensure-dependencies --operations-check)", False)
        return
    directory = tempfile.mkdtemp(prefix="operations-check-")
    process, base = start_dev_server(EXECUTABLE, ROOT, directory, [])
    try:
        check("a web sign-in through the simulator ends on /session", sign_in(base))
        for path in ["/healthz", f"/no-such-page/{PROBE}", f"/login?return_to=/{PROBE}", f"/public/{PROBE}.css"]:
            try:
                urllib.request.urlopen(base + path, timeout=5).close()
            except urllib.error.HTTPError:
                pass
        time.sleep(0.2)  # a request is counted once its connection is done with it
        with urllib.request.urlopen(base + "/metrics", timeout=5) as response:
            exposition = response.read().decode()
            content_type = response.headers.get("Content-Type", "")
    finally:
        process.terminate()
        process.wait(timeout=10)

    check("/metrics is Prometheus text 0.0.4", content_type.startswith("text/plain; version=0.0.4"), content_type)
    status, output = promtool("check", "metrics", stdin=exposition)
    check("promtool check metrics: no problem and no warning", status == 0 and not output, output)
    families = metric_families(exposition)
    check("the sign-in shows as bridge_sign_ins_total{flow=\"web\"} 1",
          re.search(r'^bridge_sign_ins_total\{flow="web"\} 1$', exposition, re.M) is not None)
    check("requests are timed by route", 'bridge_http_request_duration_seconds_count{route="/login"}' in exposition)
    check("no path or query a client chose appears in /metrics", PROBE not in exposition)
    undescribed = re.findall(r"^# HELP (\S+) Not described", exposition, re.M)
    unrecorded = sorted(n for n in recorded_in_sources() if n not in families)
    check("every metric the code records is described (MetricFamily.all)", not undescribed and not unrecorded,
          ", ".join(undescribed + unrecorded))
    documented = open(OPERATIONS_DOC).read()
    undocumented = sorted(n for n in families if f"`{n}" not in documented)
    check("every metric /metrics lists is described in docs/operations.md", not undocumented, ", ".join(undocumented))

    status, output = promtool("check", "rules", ALERTS)
    check("promtool check rules docs/operations/alerts.yml", status == 0 and "SUCCESS" in output, output)
    status, output = promtool("test", "rules", ALERT_TESTS)
    check("promtool test rules Tests/Operations/alerts.test.yml", status == 0, output[-3000:])
    alerts = alert_expressions(ALERTS)
    missing = sorted(n for n in referenced_metrics(alerts) if not listed(n, families))
    check(f"every metric the {len(alerts)} alert rules name is one /metrics lists", alerts and not missing,
          ", ".join(missing))

    check_dashboard(families)
    if FAILED:
        print(f"operations check: {time.monotonic() - started:.1f} s; server log kept in {directory}")
    else:
        shutil.rmtree(directory, ignore_errors=True)
        print(f"operations check: {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # a crash of the check itself is a failure, never a silent pass
        check("the operations check ran to the end", False, repr(error))
    print(f"{len(PASSED)} passed, {len(FAILED)} failed")
    sys.exit(1 if FAILED or not PASSED else 0)
