# Sourced by scripts that start servers on loopback ports they choose themselves.
#
# free_port: a loopback port below the kernel's ephemeral range on which nothing listens, with the next one free
# too. Never inside that range: a client that polls a server before it has bound its port (a start-up's /healthz
# loop) can connect to itself there, because the kernel may give the connection that very port as its own end
# (TCP simultaneous open); the client then holds the port and the server cannot bind it. And any outgoing
# connection on the machine may be using the port as its own end at the moment the server binds.
# The one picker of the shell scripts; the Python runners' twin is Tests/Support/ports.py, the Swift tests'
# freeLoopbackPort() in Sources/TestSupport/FreeLoopbackPort.swift.
ephemeral_low() {
    local low
    low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true)
    [ "${low:-0}" -gt 11000 ] 2>/dev/null || low=32768
    echo "$low"
}
free_port() {
    local low port
    low=$(ephemeral_low)
    for _ in $(seq 1 100); do
        port=$((10000 + RANDOM % (low - 11000)))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
        (exec 3<>"/dev/tcp/127.0.0.1/$((port + 1))") 2>/dev/null && continue
        echo "$port"; return 0
    done
    echo "no free loopback port below $low" >&2
    return 1
}
