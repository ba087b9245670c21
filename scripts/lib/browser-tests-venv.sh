# Sourced by scripts/browser-tests and scripts/relying-party-test: the Python tooling of the browser tests, pinned in
# Tests/Browser/requirements*.txt, set up in .build/browser-tests-venv when the pins changed. Sets $venv.
venv=.build/browser-tests-venv
stamp=$(cat Tests/Browser/requirements.txt Tests/Browser/requirements-axe.txt | sha256sum | cut -c1-16)
if [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$stamp" ]; then
    echo "Setting up $venv (pinned websocket-client and axe-core)..."
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/Browser/requirements.txt
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r Tests/Browser/requirements-axe.txt
    echo "$stamp" > "$venv/.requirements"
fi
