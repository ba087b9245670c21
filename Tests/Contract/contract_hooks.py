"""schemathesis hooks of the contract test (run_contract_test.py loads them with SCHEMATHESIS_HOOKS)."""
import itertools

import schemathesis

# Each generated request comes from a client address of its own, named in X-Forwarded-For: the dev server trusts
# loopback as a proxy (BRIDGE_TRUSTED_PROXIES' default), so the sign-in rate limit, which the rate-limited
# operations share (bursts of 100), never answers in place of the logic behind it and the run does not depend on
# timing. The directed requests check the 429 itself. (198.18.0.0/15 is for benchmarks: a header, never a target.)
_addresses = (f"198.18.{n // 250 % 256}.{n % 250 + 1}" for n in itertools.count())


@schemathesis.hook
def before_call(context, case, **kwargs):
    case.headers = {**(case.headers or {}), "X-Forwarded-For": next(_addresses)}
