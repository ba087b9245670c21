# Sourced by scripts/bench: PostgreSQL alone under pgbench, with the sign-in's statements as the bridge sends them
# (`signin-sql single`), grouped as its group commit sends them, and coalesced (`signin-sql coalesced N`): both printed
# from the store's declarations (Sources/Storage/SignInTables.swift).

# grouped_script N SIGNIN_SQL: the sign-in of SIGNIN_SQL (`signin-sql single`) N times in one transaction, as
# PostgresGroupCommit sends them: the first's BEGIN and first round trip, then each session with the next sign-in's
# first round trip, then the last session with the COMMIT. Each sign-in draws its own variables (a becomes a_1 … a_N).
grouped_script() {
    local n=$1 i source=$2 first second
    first=$(awk '/^\\startpipeline/ {p++; next} /^\\endpipeline/ {next} p == 1 && !/^BEGIN/' "$source")
    second=$(awk '/^\\startpipeline/ {p++; next} /^\\endpipeline/ {next} p == 2 && !/^COMMIT/' "$source")
    for ((i = 1; i <= n; i++)); do grep '^\\set' "$source" | numbered_variables_and_uses $i; done
    printf '\\startpipeline\nBEGIN ISOLATION LEVEL READ COMMITTED;\n'
    numbered_variables_and_uses 1 <<<"$first"
    for ((i = 2; i <= n; i++)); do
        printf '\\endpipeline\n\\startpipeline\n'
        numbered_variables_and_uses $((i - 1)) <<<"$second"
        numbered_variables_and_uses $i <<<"$first"
    done
    printf '\\endpipeline\n\\startpipeline\n'
    numbered_variables_and_uses "$n" <<<"$second"
    printf 'COMMIT;\n\\endpipeline\n'
}
# numbered_variables_and_uses N: pgbench's variables a, t and u set and used as a_N, t_N and u_N.
numbered_variables_and_uses() { sed -E -e "s/:([atu])\b/:\1_$1/g" -e "s/^\\\\set ([atu]) /\\\\set \1_$1 /"; }

# coalesced_script N: the same N sign-ins as PostgresCoalescedSignIns sends a batch of them (its statements, with
# ARRAY[...] of pgbench's variables where the bridge binds arrays): the BEGIN, the lock timeout and one statement per
# kind of write in one round trip, the COMMIT in a second. Printed from the store's declarations by signin-sql.
coalesced_script() { "$bin/signin-sql" coalesced "$1"; }

# grouped_pgbench SCRIPT N: pgbench running SCRIPT (N sign-ins a transaction) on as many connections as the group
# commit's lanes; prints "sign-ins/s PostgreSQL-CPU-µs-a-sign-in".
grouped_pgbench() {
    local script=$1 n=$2 out before after
    before=$(postgres_ticks_with_ended)
    out=$(pgbench -n -M prepared -c "$grouped_lanes" -j 2 -T "${BENCH_PGBENCH_SECONDS:-15}" -f "$script" "$pgbench_url" 2>&1)
    sleep 0.5  # until the postmaster has reaped pgbench's backends, whose CPU it then counts
    after=$(postgres_ticks_with_ended)
    grep -m1 -E '^(ERROR|pgbench: error)' <<<"$out" >&2 || true
    # PostgreSQL's own CPU a sign-in in that run, as the rows' "DB µs" count it for the bridge's runs.
    awk -v n="$n" -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" '
        /^tps/ {rate = n * $3}
        /actually processed/ {split($NF, done, "/"); if (done[1] > 0) us = t * 1e6 / hz / (done[1] * n)}
        END {if (rate > 0 && us > 0) printf "%.0f %.0f", rate, us}' <<<"$out"
}
