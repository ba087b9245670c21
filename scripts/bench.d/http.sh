# Sourced by scripts/bench: `scripts/bench http`, GET /healthz requests/s beside a plain-C libmicrohttpd server.

bench_http() {
    local tmp; tmp=$(mktemp -d)
    gcc -O2 -o "$tmp/mhd_healthz" Benchmarks/reference/mhd_healthz.c $(pkg-config --cflags --libs libmicrohttpd)
    "$tmp/mhd_healthz" 18090 8 & local ref=$!
    BRIDGE_PORT=18091 BRIDGE_DATABASE="sqlite:$tmp/bench.sqlite3" BRIDGE_SECRET_KEY=$(openssl rand -base64 32) \
        APPLE_SERVICES_ID=com.example.web APPLE_ID_URL=https://127.0.0.1:9 "$bin/apple-signin-bridge" serve 2>/dev/null & local ours=$!
    wait_for 18090; wait_for 18091
    wrk -t2 -c64 -d2s http://127.0.0.1:18090/healthz >/dev/null  # warm-up
    wrk -t2 -c64 -d2s http://127.0.0.1:18091/healthz >/dev/null
    local rounds=${BENCH_ROUNDS:-5} each ratios=() as=() bs=() pinned_ratios=() pas=() pbs=()
    each=$(awk -v d="$duration" -v r="$rounds" 'BEGIN {s = d / r; printf "%d", (s < 1 ? 1 : s)}')
    http_rounds
    http_pinned_rounds
    kill $ref $ours; wait $ref $ours 2>/dev/null || true
    rm -rf "$tmp"
    http_report
}

# The two servers take turns, round after round: on a shared 2-core machine one long run each swings by
# +-10 % from run to run, more than the difference being measured. The figures are the medians of the rounds,
# the ratio the median of the rounds' own ratios. (Fills bench_http's as, bs and ratios.)
http_rounds() {
    local round a b
    for round in $(seq 1 "$rounds"); do
        a=$(wrk -t2 -c64 -d"${each}s" http://127.0.0.1:18090/healthz | rps)
        b=$(wrk -t2 -c64 -d"${each}s" http://127.0.0.1:18091/healthz | rps)
        as+=("$a"); bs+=("$b"); ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.1f", 100*b/a}')")
    done
}

# The same with each server alone on CPU 0 and wrk alone on CPU 1: then the server's own CPU per request is
# what limits it, and the gap between the two servers shows undiluted by the load generator's share. (Fills
# bench_http's pas, pbs and pinned_ratios; nothing on one core or without taskset.)
http_pinned_rounds() {
    local round a b
    if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then
        taskset -a -p -c 0 $ref >/dev/null; taskset -a -p -c 0 $ours >/dev/null
        for round in $(seq 1 "$rounds"); do
            a=$(taskset -c 1 wrk -t1 -c64 -d"${each}s" http://127.0.0.1:18090/healthz | rps)
            b=$(taskset -c 1 wrk -t1 -c64 -d"${each}s" http://127.0.0.1:18091/healthz | rps)
            pas+=("$a"); pbs+=("$b"); pinned_ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.1f", 100*b/a}')")
        done
    fi
}

http_report() {
    local a b
    a=$(median "${as[@]}"); b=$(median "${bs[@]}")
    printf 'GET /healthz, wrk -t2 -c64 on loopback, %s rounds of %ss each, servers in turns (medians):\n' "$rounds" "$each"
    printf '  plain C libmicrohttpd (reference)   %12s req/s\n' "$a"
    printf '  apple-signin-bridge serve           %12s req/s   (%s%% of reference; rounds: %s)\n' "$b" \
        "$(median "${ratios[@]}")" "${ratios[*]}"
    [ ${#pinned_ratios[@]} -gt 0 ] || return 0
    printf 'The same, each server alone on CPU 0 and wrk -t1 alone on CPU 1 (taskset; the server is the limit):\n'
    printf '  plain C libmicrohttpd (reference)   %12s req/s\n' "$(median "${pas[@]}")"
    printf '  apple-signin-bridge serve           %12s req/s   (%s%% of reference; rounds: %s)\n' "$(median "${pbs[@]}")" \
        "$(median "${pinned_ratios[@]}")" "${pinned_ratios[*]}"
}
