#!/usr/bin/env bash
# Tests of the helpers in scripts/lib that the test command and scripts/bench share, and of their Python twin in
# Tests/Support; prints "N passed, N failed".
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

echo "script helpers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
