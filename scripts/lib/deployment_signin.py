"""A web sign-in through the TLS proxy of scripts/deployment-check, as a browser makes it.

Usage: deployment_signin.py BASE_URL CA_FILE [USER]
USER: the stand-in's test person to sign in as (ada, grace, alan; ada when not given), whose name /session shows.
Prints one line per check ("ok: …" or "FAILED: …") and exits 0 only when every check passed.
Standard library only: urllib with a cookie jar, the proxy's certificate as the only trusted one.
"""
import http.cookiejar
import json
import html.parser
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request


class Forms(html.parser.HTMLParser):
    """Every form's action and fields, and every link's attributes."""

    def __init__(self):
        super().__init__()
        self.forms, self.links = [], {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append((attrs.get("action", ""), []))
        elif tag in ("input", "textarea") and self.forms and attrs.get("name"):
            if attrs.get("type") != "radio" or "checked" in attrs:
                self.forms[-1][1].append((attrs["name"], attrs.get("value", "")))
        elif tag == "a" and attrs.get("id"):
            self.links[attrs["id"]] = attrs


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def main(base, ca_file, person="ada"):
    context = ssl.create_default_context(cafile=ca_file)
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context),
                                         urllib.request.HTTPCookieProcessor(jar), NoRedirect())
    results = []

    def check(name, condition):
        results.append(bool(condition))
        print(("ok: " if condition else "FAILED: ") + name)
        return condition

    def fetch(url, data=None, headers=None):
        request = urllib.request.Request(url, data=data, headers=headers or {})
        try:
            with opener.open(request, timeout=15) as response:
                return response.status, response.headers, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read().decode()

    status, headers, page = fetch(base + "/login")
    check("GET /login through the proxy over https answers 200", status == 200)
    check("one HSTS header, the proxy's", headers.get_all("Strict-Transport-Security") == ["max-age=63072000; includeSubDomains"])
    login = Forms()
    login.feed(page)
    link = login.links.get("apple-signin", {})
    if not check("the login page carries the Sign in with Apple link", link.get("href")):
        return results
    status, _, consent_page = fetch(link["href"])
    consent = Forms()
    consent.feed(consent_page)
    if not check("the stand-in for Apple shows its consent page", status == 200 and consent.forms):
        return results
    action, fields = consent.forms[0]
    fields = [(k, v) for k, v in fields if k not in ("user", "email_choice", "action")]
    fields += [("user", "001234.simulated." + person), ("email_choice", "share"), ("action", "continue")]
    authorize = urllib.parse.urljoin(link["href"], action or "/auth/authorize")
    status, _, auto_post = fetch(authorize, urllib.parse.urlencode(fields).encode(),
                                 {"Content-Type": "application/x-www-form-urlencoded"})
    posted = Forms()
    posted.feed(auto_post)
    if not check("consent answers with the form_post to the public redirect URI",
                 posted.forms and posted.forms[0][0] == base + "/apple_redirect"):
        return results
    action, fields = posted.forms[0]
    status, headers, _ = fetch(action, urllib.parse.urlencode(fields).encode(),
                               {"Content-Type": "application/x-www-form-urlencoded",
                                "Origin": "https://appleid.apple.com"})
    check("the form_post through the proxy signs in (303 to /session)",
          status == 303 and headers.get("Location") == "/session")
    check("the session cookie is a __Host- cookie", any(c.name.startswith("__Host-") for c in jar))
    # nginx spreads requests over both instances: every one of these must find the session.
    pages = [fetch(base + "/session") for _ in range(6)]
    check("/session works on every request, whichever instance answers",
          all(s == 200 and person.capitalize() in body for s, _, body in pages))
    status, _, body = fetch(base + "/.well-known/openid-configuration")
    discovery = json.loads(body) if status == 200 else {}
    check("the OpenID provider's discovery document is proxied, and names the proxy's token endpoint",
          discovery.get("token_endpoint", "").endswith("/oauth/token"))
    status, _, body = fetch(base + discovery.get("jwks_uri", "/oauth/jwks")[len(discovery.get("issuer", "")):])
    check("its signing keys are proxied", status == 200 and '"keys"' in body)
    status, headers, _ = fetch(base + "/metrics")
    check("/metrics is not proxied (404, with HSTS)", status == 404 and headers.get("Strict-Transport-Security"))
    return results


if __name__ == "__main__":
    outcomes = main(sys.argv[1].rstrip("/"), sys.argv[2], *sys.argv[3:4])
    sys.exit(0 if outcomes and all(outcomes) else 1)
