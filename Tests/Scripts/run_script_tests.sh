#!/usr/bin/env bash
# Tests of the helpers in scripts/lib that the test command and scripts/bench share, and of their Python twin in
# Tests/Support, and of how the scripts build (scripts/lib/build-product.sh); prints "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/free-port.sh
passed=0 failed=0
check() {  # check NAME COMMAND...: passes when COMMAND succeeds
    if "${@:2}"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $1" >&2; fi
}

# A port a client may poll before its server binds it must lie below the kernel's ephemeral range, where no
# connection of the machine gets it as its own end (see scripts/lib/free-port.sh). 300 draws: a picker that drew
# from 20000-39999, as scripts/bench's did, lands inside the range (32768 and up) a third of the time.
ports_below_ephemeral_range() {
    local low port i
    low=$(ephemeral_low)
    for i in $(seq 1 300); do
        port=$(free_port) || return 1
        if [ "$port" -lt 10000 ] || [ $((port + 1)) -ge "$low" ]; then
            echo "free_port gave $port; the ephemeral range starts at $low" >&2
            return 1
        fi
    done
}
check "free_port stays below the ephemeral range" ports_below_ephemeral_range

# The Python runners' twin (Tests/Support/ports.py; before it, they bound port 0 and took what the kernel gave:
# always inside the range).
python_ports_below_ephemeral_range() {
    python3 - <<'PY'
import sys
sys.path.insert(0, "Tests/Support")
from ports import ephemeral_low, free_port
low = ephemeral_low()
bad = [port for port in (free_port() for _ in range(300)) if not 10000 <= port < low]
if bad:
    sys.exit(f"free_port gave {bad[0]}; the ephemeral range starts at {low}")
PY
}
check "the Python runners' free_port stays below the ephemeral range" python_ports_below_ephemeral_range

# Nothing listens on the port it gives, nor on the next one.
ports_not_listened_on() {
    local port listener
    python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(5)' \
        >"$tmp/listening" &
    listener=$!
    while [ ! -s "$tmp/listening" ]; do sleep 0.05; done
    for _ in $(seq 1 50); do
        port=$(free_port) || return 1
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || (exec 3<>"/dev/tcp/127.0.0.1/$((port + 1))") 2>/dev/null; then
            echo "something listens on $port or $((port + 1))" >&2; kill $listener; return 1
        fi
    done
    # The probe itself works: it sees the listener above.
    (exec 3<>"/dev/tcp/127.0.0.1/$(cat "$tmp/listening")") 2>/dev/null || { echo "the probe missed a listener" >&2; kill $listener; return 1; }
    kill $listener; wait $listener 2>/dev/null
    return 0
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check "free_port gives a port nothing listens on" ports_not_listened_on

# build_product (scripts/lib/build-product.sh), against a stand-in `swift` on PATH: a failed build returns non-zero with
# the compiler's messages shown and the progress lines left out, and stops a script that builds with it (scripts/run,
# before it runs anything); a build that works prints nothing. Before it, the scripts ended their build line with
# `|| true` and went on to run the binary an earlier build had left.
stand_in_swift() {
    mkdir -p "$tmp/bin"
    cat >"$tmp/bin/swift" <<'EOF'
#!/usr/bin/env bash
if [[ " $* " == *" --show-bin-path "* ]]; then dirname "$0"; exit 0; fi
echo "[1/3] Compiling Bridge Stand.swift"
echo "Building for debugging..."
if [ "${STAND_IN_BUILD:-}" = fail ]; then echo "Sources/Bridge/Stand.swift:1:1: error: cannot find 'x' in scope" >&2; exit 1; fi
echo "Build of product 'apple-signin-bridge' complete! (0.1s)"
EOF
    # What an earlier build left, which the old scripts went on to run.
    printf '#!/usr/bin/env bash\necho "the binary of an earlier build ran"\n' >"$tmp/bin/apple-signin-bridge"
    chmod +x "$tmp/bin/swift" "$tmp/bin/apple-signin-bridge"
}
build_product_passes_failures_on() {
    local out status=0
    stand_in_swift
    out=$(source scripts/lib/build-product.sh; STAND_IN_BUILD=fail PATH="$tmp/bin:$PATH" build_product --product x 2>&1) || status=$?
    [ "$status" -ne 0 ] || { echo "a failed build returned 0" >&2; return 1; }
    grep -q "error: cannot find 'x' in scope" <<<"$out" || { echo "the compiler's error was not shown: $out" >&2; return 1; }
    if grep -q "Compiling\|Building for" <<<"$out"; then echo "progress lines were shown: $out" >&2; return 1; fi
    out=$(source scripts/lib/build-product.sh; PATH="$tmp/bin:$PATH" build_product --product x 2>&1) \
        || { echo "a build that works failed: $out" >&2; return 1; }
    [ -z "$out" ] || { echo "a build that works printed: $out" >&2; return 1; }
}
check "build_product returns a failed build's status with its errors and without the noise" build_product_passes_failures_on
a_failed_build_stops_the_script() {
    local out status=0
    stand_in_swift
    out=$(STAND_IN_BUILD=fail PATH="$tmp/bin:$PATH" scripts/run 2>&1) || status=$?
    [ "$status" -ne 0 ] || { echo "scripts/run went on after a failed build: $out" >&2; return 1; }
    grep -q "error: cannot find 'x' in scope" <<<"$out" || { echo "scripts/run did not show the build's error: $out" >&2; return 1; }
    if grep -q "earlier build ran" <<<"$out"; then echo "scripts/run ran an earlier build's binary: $out" >&2; return 1; fi
}
check "a failed build stops a script that builds (scripts/run)" a_failed_build_stops_the_script

echo "script helpers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
