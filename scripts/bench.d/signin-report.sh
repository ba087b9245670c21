# Sourced by scripts/bench: the report of `scripts/bench signin`, from what bench_signin (signin.sh) collected in
# its local variables, which these functions see as bash's functions see their callers'.

signin_report() {
    signin_legend
    if [ -n "${BENCH_RATE:-}" ]; then signin_rate_table; fi
    # One run's p99 says little on these VMs (5 to 66 ms for one build at one rate within an hour on 2026-12-04):
    # with BENCH_REPEAT=N each store and connection count runs N times, and their p99s are summed up here.
    if [ "$repeats" -gt 1 ]; then signin_repeat_p99s; fi
    # Each store's sign-ins/s over SQLite's in the same round and at the same connection count, and their median.
    if [ "$repeats" -gt 1 ] && [[ " $stores " == *" sqlite "* ]] && [ "$(wc -w <<<"$stores")" -gt 1 ]; then
        signin_over_sqlite
    fi
    signin_table
    if [ -n "$pgbench_tps" ]; then signin_pgbench_report; fi
    signin_verify_figures
}

# What each column means.
signin_legend() {
    printf '\nPOST /apple_redirect, full web sign-ins: pre-made, each sent once by wrk -t2 over keep-alive connections\n'
    printf 'to `apple-signin-bridge dev` (release) on an empty database; a sign-in counts when its 303 set a\n'
    printf 'session cookie that then opened GET /session (200) for that user. Stores: sqlite; postgres (one instance on\n'
    printf 'a local PostgreSQL); postgres_nginx (one instance behind nginx); postgres2 (two instances on it behind\n'
    printf 'nginx; CPU and RSS are both instances together).\n'
    [[ "$stores" == *postgres* ]] && printf 'The instances and pgbench reach PostgreSQL %s.\n' "$postgres_reached"
    printf '"wrk µs/req" is the CPU the load generator itself used per sign-in (it shares the cores with the server).\n'
    printf '"writer µs" is the part of "CPU µs/sign-in" spent on the SQLite writer thread, the one step that runs one\n'
    printf 'sign-in at a time (it caps sign-ins/s at 1e6 / writer µs). "writer cpu/queue %%" is the share of the run\n'
    printf 'that thread was on a CPU / runnable but waiting for one (its schedstat): a large second figure means the\n'
    printf 'writer waits for the two cores it shares, not for the disk.\n'
    if [[ "$stores" == *postgres* ]]; then
        printf 'PostgreSQL rows, per sign-in: "DB µs" is the CPU of the PostgreSQL server itself (every process of the\n'
        printf 'throwaway server; not in "CPU µs/sign-in"); "ser. retries" and "deadlocks" are the write transactions run\n'
        printf 'again after a serialization failure (40001) or a deadlock (40P01), from each instance'"'"'s /metrics\n'
        printf '(bridge_store_write_retries_total) before and after the run; "lock waits" are the lock waits that lasted\n'
        printf '1 ms or more, counted in PostgreSQL'"'"'s log (log_lock_waits with deadlock_timeout = 1ms on the bench database:\n'
        printf 'shorter waits are not seen), and "lock ms" the time those waits took until the lock was granted.\n'
    fi
    printf '"attempt reads" are the callbacks, per sign-in, that read their login attempt from the database\n'
    printf '(bridge_login_attempt_lookups_total{source="database"}): neither remembered by the instance that took them\n'
    printf '(its last 8,192) nor opened from their sealed state. "writes/commit" is how many writes one COMMIT\n'
    printf 'carried: bridge_store_group_committed_writes_total over bridge_store_group_commits_total, during the run.\n'
    printf '"coalesced %%" is the share of those commits whose sign-ins went out as one statement per kind of write\n'
    printf '(bridge_store_group_coalesced_commits_total; PostgreSQL only, and only batches of two sign-ins or more).\n'
    printf '"sleeps/sign-in" is how often, per sign-in, a thread of the server went to sleep (its threads'"'"' voluntary\n'
    printf 'context switches, /proc/PID/task/*/status): each is a wake-up later, which costs CPU beyond the work itself.\n'
}

# BENCH_RATE: the rate offered, the rate reached and the hypervisor's steal.
signin_rate_table() {
    local entry n rate p50 p99 index=0
    printf 'Sign-ins were offered at %s a second on a fixed schedule (BENCH_RATE, an open loop%s); "sign-ins/s" is\n' \
        "$BENCH_RATE" "${rate_fraction:+: $rate_fraction × openssl speed}"
    printf 'the rate reached. "steal %%" is the share of the machine'"'"'s CPU time the hypervisor gave to other guests\n'
    printf 'during the run (/proc/stat): on a virtual machine, time the server could not run whatever it did.\n'
    [ -n "$openssl_after" ] && awk -v f="$rate_fraction" -v b="$openssl_verify" -v a="$openssl_after" 'BEGIN {
        printf "openssl speed rsa2048 before the runs %s verify/s, after them %s (%+.0f %%): %s × the latter is %.0f a second.\n",
            b, a, 100 * (a - b) / b, f, f * a }'
    printf '  %-18s %12s %12s %9s %9s %8s\n' store,connections "offered/s" "reached/s" "p50 ms" "p99 ms" "steal %"
    for entry in "${rows[@]}"; do
        read -r n rate p50 p99 _ <<<"${entry%%|*}"
        printf '  %-18s %12s %12s %9s %9s %8s\n' "$n" "$BENCH_RATE" "$rate" "$p50" "$p99" "${steals[$index]}"
        index=$((index + 1))
    done
}

# The p99s of each store and connection count over the BENCH_REPEAT runs.
signin_repeat_p99s() {
    local entry n p99
    printf 'p99 over the %s runs of each store and connection count (BENCH_REPEAT), in ms:\n' "$repeats"
    # Each row's store,connections and p99, numbered by the first run of its store,connections, sorted by that
    # number and then by p99: each group's p99s in order, the groups in the order they ran.
    for entry in "${rows[@]}"; do read -r n _ _ p99 _ <<<"${entry%%|*}"; echo "$n $p99"; done |
        awk '!($1 in order) { order[$1] = ++groups } { print order[$1], $1, $2 }' | sort -k1,1n -k3,3g |
        awk 'function show() {
                 median = count % 2 ? v[(count + 1) / 2] : (v[count / 2] + v[count / 2 + 1]) / 2
                 printf "  %-18s median %6.1f   sorted: %s\n", name, median, line }
             $2 != name { if (count) show(); name = $2; count = 0; line = "" }
             { v[++count] = $3; line = line (count > 1 ? " " : "") $3 }
             END { if (count) show() }'
}

# Each store's sign-ins/s over SQLite's, round by round, and their median.
signin_over_sqlite() {
    local entry n rate index=0
    printf 'Sign-ins/s over SQLite'"'"'s in the same round (BENCH_REPEAT rounds, each store once a round):\n'
    for entry in "${rows[@]}"; do
        read -r n rate _ <<<"${entry%%|*}"
        echo "${row_rounds[$index]} $n $rate"
        index=$((index + 1))
    done | awk '{ split($2, part, ","); key = $1 "," part[2]; rate[$2, $1] = $3
                  if (part[1] == "sqlite") sqlite[key] = $3
                  else if (!($2 in seen)) { seen[$2] = 1; order[++names] = $2 } }
                END {
                  for (i = 1; i <= names; i++) {
                      name = order[i]; split(name, part, ","); count = 0; line = ""
                      for (round = 1; (name, round) in rate; round++) {
                          base = sqlite[round "," part[2]]
                          if (base + 0 <= 0) continue
                          r = rate[name, round] / base; v[++count] = r
                          line = line (count > 1 ? " " : "") sprintf("%.2f", r)
                      }
                      if (!count) continue
                      for (a = 2; a <= count; a++)  # insertion sort (mawk has no asort)
                          for (b = a; b > 1 && v[b - 1] > v[b]; b--) { t = v[b]; v[b] = v[b - 1]; v[b - 1] = t }
                      median = count % 2 ? v[(count + 1) / 2] : (v[count / 2] + v[count / 2 + 1]) / 2
                      printf "  %-18s median %.2f ×   round by round: %s\n", name, median, line
                      delete v
                  }
                }'
}

# The table: one row a store and connection count, with its notes.
signin_table() {
    printf '  %-18s %12s %9s %9s %14s %10s %18s %12s %11s %10s %16s %16s %7s %12s %10s %10s %8s %13s %13s %11s %14s\n' store,connections \
        sign-ins/s "p50 ms" "p99 ms" "CPU µs/sign-in" "writer µs" "writer cpu/queue %" "server cores" "wrk µs/req" \
        "peak RSS" "counted/sent" "sessions ok" "DB µs" "ser. retries" "deadlocks" "lock waits" "lock ms" "attempt reads" \
        "writes/commit" "coalesced %" "sleeps/sign-in"
    local entry n rate p50 p99 cpu writer shares cores loadgen rss counted sessions database serial deadlocks waits waited \
        reads per_commit coalesced slept
    for entry in "${rows[@]}"; do
        read -r n rate p50 p99 cpu writer shares cores loadgen rss counted sessions database serial deadlocks waits waited \
            reads per_commit coalesced slept <<<"${entry%%|*}"
        printf '  %-18s %12s %9s %9s %14s %10s %18s %12s %11s %7s MiB %16s %16s %7s %12s %10s %10s %8s %13s %13s %11s %14s\n' "$n" "$rate" \
            "$p50" "$p99" "$cpu" "$writer" "$shares" "$cores" "$loadgen" "$rss" "$counted" "$sessions" "$database" \
            "$serial" "$deadlocks" "$waits" "$waited" "$reads" "$per_commit" "$coalesced" "$slept"
        [ -n "${entry#*|}" ] && printf '      note: %s\n' "${entry#*|}"
    done
    return 0
}

# pgbench's figures: PostgreSQL alone in the same run.
signin_pgbench_report() {
    printf 'PostgreSQL alone in the same run, the same server, reached the same way as by the bridge: pgbench sending one\n'
    printf 'sign-in'"'"'s statements a transaction, in the two round trips of a lone one (`signin-sql single`, prepared; no HTTP,\n'
    printf 'no RSA, no bridge), as many of them after a read of the attempt (attempt-read.sql) as the one-instance\n'
    printf 'run'"'"'s "attempt reads" say, %s clients:\n' "$pgbench_clients"
    printf '  pgbench sign-in transactions/s   %s\n' "$pgbench_tps"
    if [ -n "$pgbench_grouped" ]; then
        printf 'and the same statements %s sign-ins to a transaction, as the group commit sent them in that run (its\n' "$pgbench_batch"
        printf '"writes/commit"): one transaction, each sign-in'"'"'s session going out with the next one'"'"'s first round trip,\n'
        printf 'on %s connections like its two lanes:\n' "$grouped_lanes"
        printf '  pgbench sign-ins/s, grouped      %s\n' "$pgbench_grouped"
        [ -n "$pgbench_grouped_us" ] &&
            printf '  PostgreSQL CPU µs a sign-in there, to compare with the rows'"'"' "DB µs"   %s\n' "$pgbench_grouped_us"
    fi
    if [ -n "$pgbench_coalesced" ]; then
        printf 'and the same sign-ins as the group commit sends a batch it coalesces ("coalesced %%"): one statement per\n'
        printf 'kind of write over arrays, with the BEGIN, then the COMMIT:\n'
        printf '  pgbench sign-ins/s, coalesced    %s\n' "$pgbench_coalesced"
        printf '  PostgreSQL CPU µs a sign-in there   %s\n' "$pgbench_coalesced_us"
    fi
    return 0
}

# One-core RS256 verifies in the same run, and the rows' CPU per sign-in in them.
signin_verify_figures() {
    printf 'Single-core RS256 verify in the same run (openssl speed divides by the CPU time it got, so on a busy\n'
    printf 'machine compare it with the per-CPU-second figures; wall-clock rates fall with the load):\n'
    printf '  openssl speed -seconds 3 rsa2048, verify/s   %s\n' "${openssl_verify:-unavailable}"
    sed -n 's/^\(full path\|verifyRS256 only\)[^:]*:/  jose-bench \1:/p' <<<"$jose" | sed 's/  */ /g; s/^ /  /'
    # The timed counterpart of `scripts/bench cost`'s instruction ratio: what the rows' CPU per sign-in is worth in
    # one-core RS256 verifications. It also says how busy a fixed rate keeps the machine: at f × openssl speed the
    # server alone keeps f × that many cores busy (wrk's own share comes on top).
    if [ -n "$openssl_verify" ]; then
        printf 'The server'"'"'s CPU per sign-in as one-core RS256 verifications (openssl speed above); at a fixed rate of\n'
        printf 'f × openssl speed the server alone keeps f × this many cores busy:\n'
        for entry in "${rows[@]}"; do
            read -r n _ _ _ cpu _ <<<"${entry%%|*}"
            awk -v n="$n" -v c="$cpu" -v v="$openssl_verify" -v f="$rate_fraction" 'BEGIN {
                if (c + 0 <= 0) exit
                verifies = c * v / 1e6
                printf "  %-18s %6.1f ×", n, verifies
                if (f != "") printf "   (at %s × openssl speed: %.2f cores)", f, f * verifies
                printf "\n" }'
        done
    fi
    return 0
}
