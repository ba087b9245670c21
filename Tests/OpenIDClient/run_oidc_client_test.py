"""A third-party OpenID Connect client (Authlib, pinned in requirements.txt) against `apple-signin-bridge dev`.

The client is configured with the discovery URL, a client ID and a redirect URI only. The Apple ID simulator's
consent page is driven with plain HTTP form posts, as a person's browser would. Authlib validates the ID token by
its own rules (signature from the published JWKS, iss, aud, exp, iat, nonce, at_hash). Closing line: N passed, N failed.
"""
import hashlib
import os
import secrets
import shutil
import sys
import tempfile
import urllib.parse
import warnings

warnings.filterwarnings("ignore", message="authlib.jose module is deprecated")  # still Authlib's own validator
os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # the dev server is plain http on loopback
import requests  # noqa: E402
from authlib.integrations.requests_client import OAuth2Session  # noqa: E402
from authlib.jose import JsonWebKey, jwt  # noqa: E402
from authlib.oidc.core import CodeIDToken  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Support"))
from dev_server import free_port, start_dev_server  # noqa: E402
from html_forms import Form, SignInLink  # noqa: E402

EXECUTABLE, RESOURCES = sys.argv[1], sys.argv[2]
PUBLIC_ID, CONFIDENTIAL_ID, SECRET = "authlib-public", "authlib-confidential", "authlib-secret-" + secrets.token_hex(8)
PASSED, FAILED = [], []


def check(name, ok, detail=""):
    (PASSED if ok else FAILED).append(name)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not detail else f": {detail}"), flush=True)


def start_server(directory):
    clients = [
        {"client_id": PUBLIC_ID, "name": "Authlib public", "redirect_uris": ["http://127.0.0.1/callback"]},
        {"client_id": CONFIDENTIAL_ID, "name": "Authlib confidential",
         "redirect_uris": ["https://rp.example.com/callback"],
         "client_secret_sha256": hashlib.sha256(SECRET.encode()).hexdigest()},
    ]
    return start_dev_server(EXECUTABLE, RESOURCES, directory, clients)


def browser_sign_in(authorization_url):
    """Follows the authorization URL like a browser: the bridge's login page, its Sign in with Apple link to
    Apple's consent page, Continue, the form_post back to the bridge with the binding cookie. Returns the bridge's
    final redirect Location (to the client)."""
    start = requests.get(authorization_url, allow_redirects=False)
    assert start.status_code == 200, f"authorize answered {start.status_code}: {start.text[:200]}"
    # Secure cookies over loopback http: a browser keeps them, requests' jar does not, so carry them by hand.
    cookies = {c.split("=", 1)[0]: c.split("=", 1)[1].split(";", 1)[0]
               for c in start.raw.headers.getlist("Set-Cookie")}
    link = SignInLink(start.text).href or ""
    assert link, "the login page has no Sign in with Apple link"
    apple = urllib.parse.urlsplit(link)
    apple_base = f"{apple.scheme}://{apple.netloc}"
    consent = Form(requests.get(link).text)
    fields = dict(consent.fields, user="001234.simulated.ada", email_choice="share", action="continue")
    auto_post = Form(requests.post(apple_base + consent.action, data=fields).text)
    answer = requests.post(auto_post.action, data=auto_post.fields, cookies=cookies, allow_redirects=False)
    assert answer.status_code == 303, f"callback answered {answer.status_code}: {answer.text[:200]}"
    return answer.headers["Location"]


def validated_id_token(id_token, metadata, client_id, nonce, access_token):
    keys = JsonWebKey.import_key_set(requests.get(metadata["jwks_uri"]).json())
    claims = jwt.decode(id_token, keys, claims_cls=CodeIDToken,
                        claims_options={"iss": {"essential": True, "value": metadata["issuer"]}},
                        claims_params={"nonce": nonce, "client_id": client_id, "access_token": access_token})
    claims.validate(leeway=5)
    return claims


def public_client_flow(base, metadata):
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"  # any loopback port (RFC 8252)
    client = OAuth2Session(PUBLIC_ID, scope="openid email name offline_access", redirect_uri=redirect_uri,
                           code_challenge_method="S256", token_endpoint_auth_method="none")
    verifier, nonce = secrets.token_urlsafe(48), secrets.token_urlsafe(16)
    url, state = client.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
    location = browser_sign_in(url)
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
    check("the code comes back to the loopback redirect URI with state and iss",
          location.startswith(redirect_uri + "?") and query.get("state") == state and query.get("iss") == metadata["issuer"],
          location.split("?")[0])
    token = client.fetch_token(metadata["token_endpoint"], authorization_response=location, code_verifier=verifier)
    check("the token endpoint answers access, refresh and ID tokens",
          all(token.get(k) for k in ["access_token", "refresh_token", "id_token"]) and token.get("token_type") == "Bearer")
    claims = validated_id_token(token["id_token"], metadata, PUBLIC_ID, nonce, token["access_token"])
    check("Authlib validates the ID token (JWKS signature, iss, aud, exp, iat, nonce, at_hash)",
          claims["aud"] == PUBLIC_ID and claims["email"] == "ada@example.com", str(dict(claims)))
    userinfo = client.get(metadata["userinfo_endpoint"]).json()
    check("userinfo names the same subject", userinfo.get("sub") == claims["sub"], str(userinfo))
    first_refresh = token["refresh_token"]
    refreshed = client.refresh_token(metadata["token_endpoint"], refresh_token=first_refresh)
    check("refresh rotates the refresh token", refreshed.get("refresh_token") not in (None, first_refresh))
    replay = requests.post(metadata["token_endpoint"], data={"grant_type": "refresh_token", "client_id": PUBLIC_ID,
                                                             "refresh_token": first_refresh})
    check("a rotated refresh token presented again is invalid_grant",
          replay.status_code == 400 and replay.json().get("error") == "invalid_grant", replay.text)


def confidential_client_flow(metadata, method):
    client = OAuth2Session(CONFIDENTIAL_ID, SECRET, scope="openid email", redirect_uri="https://rp.example.com/callback",
                           token_endpoint_auth_method=method)
    nonce = secrets.token_urlsafe(16)
    url, _ = client.create_authorization_url(metadata["authorization_endpoint"], nonce=nonce)
    location = browser_sign_in(url)
    token = client.fetch_token(metadata["token_endpoint"], authorization_response=location)
    claims = validated_id_token(token["id_token"], metadata, CONFIDENTIAL_ID, nonce, token["access_token"])
    check(f"a confidential client with {method} completes the flow", claims["aud"] == CONFIDENTIAL_ID)


def main():
    directory = tempfile.mkdtemp(prefix="asb-oidc-client-")
    process, base = start_server(directory)
    try:
        metadata = requests.get(base + "/.well-known/openid-configuration").json()
        check("discovery names this server as issuer", metadata.get("issuer") == base, str(metadata.get("issuer")))
        for name, flow in [("public client with PKCE", lambda: public_client_flow(base, metadata)),
                           ("client_secret_basic", lambda: confidential_client_flow(metadata, "client_secret_basic")),
                           ("client_secret_post", lambda: confidential_client_flow(metadata, "client_secret_post"))]:
            try:
                flow()
            except Exception as error:  # a flow that breaks is one failure, and the others still run
                check(name + " runs to the end", False, f"{type(error).__name__}: {error}")
    finally:
        process.terminate()
        process.wait(timeout=10)
    if FAILED:
        print(f"kept for a look: {directory}")  # the server's database and log
    else:
        shutil.rmtree(directory, ignore_errors=True)
    print(f"{len(PASSED)} passed, {len(FAILED)} failed")
    sys.exit(1 if FAILED else 0)


main()
