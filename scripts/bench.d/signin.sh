# Sourced by scripts/bench: `scripts/bench signin`, full web sign-ins over HTTP on each store (signin-level.sh),
# PostgreSQL alone under pgbench (pgbench.sh), and the report (signin-report.sh).
# The functions below share bench_signin's local variables, as bash's functions see their callers'.

bench_signin() {
    local tmp; tmp=$(mktemp -d)
    gcc -O2 -shared -fPIC -o "$tmp/session_tap.so" Benchmarks/wrk/session_tap.c -ldl
    local count=${BENCH_SIGNINS:-100000} levels=(${BENCH_CONNECTIONS:-64 256}) rows=() steals=() level
    local openssl_verify="" rate_fraction=""
    signin_offered_rate || return 1
    echo "Load before: $(uptime | sed 's/.*load/load/')"
    postgres_data=""
    [[ "$stores" == *postgres* ]] && postgres_data=$(psql -Atq "$postgres_url" -c "SHOW data_directory")
    local store pgbench_url="" pgbench_reads=0 pgbench_batch=1 repeats=${BENCH_REPEAT:-1} row_rounds=()
    signin_rounds || { rm -rf "$tmp"; return 1; }
    # PostgreSQL alone: pgbench sends the sign-in's statements as the bridge sends a lone one (`signin-sql single`,
    # prepared, in the same two pipelines) to the database the one-instance run used, with as many clients as its
    # first level had connections; as many of its transactions as that run's callbacks read their login attempt
    # first read one (Benchmarks/postgres/attempt-read.sql). Then grouped as that run's group commit grouped them.
    local pgbench_tps="" pgbench_scripts=() pgbench_grouped="" pgbench_grouped_us="" grouped_lanes=2
    local pgbench_coalesced="" pgbench_coalesced_us=""
    # As many clients as the first level has connections, within the throwaway server's max_connections (200; 256
    # clients made pgbench fail and the run print no table).
    local pgbench_clients=$((levels[0] > 128 ? 128 : levels[0]))
    postgres_alone
    echo "Load after:  $(uptime | sed 's/.*load/load/')"
    # The machine's speed drifts on these VMs (up to 2 × within an hour): measured again after the runs, a fixed rate
    # that the machine outran or fell behind during them shows.
    local openssl_after=""
    [ -n "$rate_fraction" ] && openssl_after=$(openssl_verifies)
    local jose
    [ -n "$openssl_verify" ] || openssl_verify=$(openssl_verifies)
    jose=$("$bin/jose-bench" 20000 --no-openssl)
    if [ -n "${BENCH_KEEP:-}" ]; then echo "Kept: $tmp (requests, sessions, wrk and server output)"; else rm -rf "$tmp"; fi
    signin_report
}

# BENCH_RATE=FRACTIONx: that fraction of the single-core `openssl speed rsa2048` verifies a second, measured now.
signin_offered_rate() {
    if [[ "${BENCH_RATE:-}" == *x ]]; then
        rate_fraction=${BENCH_RATE%x}
        openssl_verify=$(openssl_verifies)
        [ -n "$openssl_verify" ] || { echo "openssl speed gave no rsa2048 verify figure for BENCH_RATE=$BENCH_RATE" >&2; return 1; }
        BENCH_RATE=$(awk -v f="$rate_fraction" -v v="$openssl_verify" 'BEGIN {printf "%.0f", f * v}')
        echo "Offering $BENCH_RATE sign-ins a second: $rate_fraction × $openssl_verify openssl speed rsa2048 verifies/s"
    fi
}

# With BENCH_REPEAT=N the runs go in rounds, each store once a round: the machine's speed drifts over minutes,
# and stores compared within one round see the same drift.
signin_rounds() {
    local repeat level
    for ((repeat = 1; repeat <= repeats; repeat++)); do
        for store in $stores; do
            for level in "${levels[@]}"; do
                local tag=""; [ "$repeats" -gt 1 ] && tag="-r$repeat"
                echo "  $store, $level connections${tag:+ (round $repeat)}: preparing $count sign-ins..."
                signin_level "$level" "$tmp" "$count" "$store" "$tag" || return 1
                rows+=("$row")
                steals+=("$level_steal")
                row_rounds+=("$repeat")
                if [ "$store" = postgres ] && [ -z "$pgbench_url" ]; then
                    pgbench_url=$level_database pgbench_reads=$level_attempt_reads pgbench_batch=$level_writes_per_commit
                fi
            done
        done
    done
}

# PostgreSQL alone (see bench_signin), after a run on postgres: the lone sign-in's statements with pgbench, then grouped and coalesced as
# the one-instance run's group commit sent them.
postgres_alone() {
    if [ -n "$pgbench_url" ]; then
        # The sign-in's statements as the bridge sends them, printed from the store's declarations.
        local signin_sql=$tmp/signin.sql
        "$bin/signin-sql" single >"$signin_sql"
        psql -q "$pgbench_url" -c "INSERT INTO login_attempts (state, nonce, binding_hash, created_at, expires_at)
            SELECT 'pgbench-st' || g, 'n', 'b', 1, 2000000000 FROM generate_series(1, 200000) g" >/dev/null
        local reading; reading=$(awk -v r="$pgbench_reads" 'BEGIN {r = int(100 * r + 0.5); print (r > 100 ? 100 : r)}')
        { grep '^\\set' "$signin_sql"; cat Benchmarks/postgres/attempt-read.sql
          grep -v '^\\set' "$signin_sql"; } >"$tmp/signin-reading.sql"
        [ "$reading" -lt 100 ] && pgbench_scripts+=(-f "$signin_sql@$((100 - reading))")
        [ "$reading" -gt 0 ] && pgbench_scripts+=(-f "$tmp/signin-reading.sql@$reading")
        echo "  PostgreSQL alone: pgbench with the sign-in's statements ($reading % reading the attempt first), $pgbench_clients clients, ${BENCH_PGBENCH_SECONDS:-15} s..."
        pgbench_tps=$(pgbench -n -M prepared -c "$pgbench_clients" -j 2 -T "${BENCH_PGBENCH_SECONDS:-15}" \
            "${pgbench_scripts[@]}" "$pgbench_url" 2>&1 | awk '/^tps/ {printf "%.0f", $3}')
        # The same statements grouped as the bridge's group commit sent them in that run: its writes per COMMIT in
        # one transaction, on as many connections as its lanes.
        if [ "$pgbench_batch" -ge 2 ]; then
            grouped_script "$pgbench_batch" "$signin_sql" >"$tmp/signin-grouped.sql"
            echo "  PostgreSQL alone: pgbench with $pgbench_batch sign-ins a transaction, $grouped_lanes clients, ${BENCH_PGBENCH_SECONDS:-15} s..."
            read -r pgbench_grouped pgbench_grouped_us <<<"$(grouped_pgbench "$tmp/signin-grouped.sql" "$pgbench_batch")"
            # And as the group commit sends a batch of sign-ins it can coalesce: one statement per kind of write.
            coalesced_script "$pgbench_batch" >"$tmp/signin-coalesced.sql"
            echo "  PostgreSQL alone: pgbench with $pgbench_batch sign-ins a transaction, coalesced, $grouped_lanes clients, ${BENCH_PGBENCH_SECONDS:-15} s..."
            read -r pgbench_coalesced pgbench_coalesced_us <<<"$(grouped_pgbench "$tmp/signin-coalesced.sql" "$pgbench_batch")"
        fi
    fi
}
