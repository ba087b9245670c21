"""`apple-signin-bridge dev` on free loopback ports, for the Python test runners (OpenID client, API contract,
operations check). Standard library only, so a runner without a virtual environment can use it too."""

import json
import os
import subprocess
import time
import urllib.error
import urllib.request

from ports import free_port  # noqa: F401  (the runners import it from here)

# Settings a developer's shell may carry that would point the server elsewhere or change what the tests expect.
CLEARED_SETTINGS = ["BRIDGE_PUBLIC_URL", "APPLE_ID_URL", "BRIDGE_DATABASE", "BRIDGE_SECRET_KEY", "BRIDGE_CORS_ORIGINS",
                    "BRIDGE_METRICS_TOKEN", "APPLE_REQUIRE_CODE_EXCHANGE", "APPLE_REQUIRE_NONCE"]


def start_dev_server(executable, resources, directory, clients):
    """Starts the dev server (and its Apple ID simulator) with `clients` as BRIDGE_CLIENTS_FILE, its data in
    `directory`; returns the process and the base URL once /healthz answers."""
    path = os.path.join(directory, "clients.json")
    with open(path, "w") as f:
        json.dump(clients, f)
    port, simulator_port = free_port(), free_port()
    env = dict(os.environ, BRIDGE_PORT=str(port), SIMULATOR_PORT=str(simulator_port), BRIDGE_CLIENTS_FILE=path)
    for key in CLEARED_SETTINGS:
        env.pop(key, None)
    log = open(os.path.join(directory, "server.log"), "w")
    process = subprocess.Popen([executable, "dev", "--resources", resources], cwd=directory, env=env,
                               stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    for _ in range(150):
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1):
                return process, base
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the dev server did not start; see " + log.name)
