"""Loopback ports for the servers the Python test runners start. Standard library only."""

import random
import socket


def ephemeral_low():
    """Where the kernel's ephemeral range starts (the ports it gives outgoing connections as their own end)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return low if low > 11000 else 32768


def free_port():
    """A loopback port nothing is bound to, below the ephemeral range. Inside it, a client polling a server that has
    not bound its port yet can connect to itself there and keep the server from binding it (see
    scripts/lib/free-port.sh, the shell scripts' twin of this, and Sources/TestSupport/FreeLoopbackPort.swift, the Swift
    tests')."""
    low = ephemeral_low()
    for _ in range(200):
        port = random.randint(10000, low - 1001)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free loopback port below {low}")
