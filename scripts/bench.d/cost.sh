# Sourced by scripts/bench: `scripts/bench cost`, instructions per sign-in with the server under callgrind (the
# sign-ins of signin-level.sh). cost_run and the functions it calls share bench_cost's local variables, as bash's
# functions see their callers'.

bench_cost() {
    scripts/ensure-dependencies valgrind
    local tmp; tmp=$(mktemp -d) count=${BENCH_COST_SIGNINS:-2000}
    gcc -O2 -shared -fPIC -o "$tmp/session_tap.so" Benchmarks/wrk/session_tap.c -ldl
    # valgrind 3.19 (Debian 12) cannot read the DWARF 5 the Swift toolchain writes, so it runs a copy without it;
    # function names come from the symbol table, which stays.
    server_binary=$tmp/apple-signin-bridge
    objcopy --strip-debug "$bin/apple-signin-bridge" "$server_binary"
    local store lines=() first_total="" repeats=${BENCH_COST_REPEAT:-1} run_index
    postgres_data=""
    [[ "$cost_stores" == *postgres* ]] && postgres_data=$(psql -Atq "$postgres_url" -c "SHOW data_directory")
    for store in $cost_stores; do
        # The count moves by about 1 % from run to run (SQLite's group-commit batches follow the timing), so with
        # BENCH_COST_REPEAT=N each store runs N times and its ratios are summed up as a median.
        local ratios=()
        for ((run_index = 1; run_index <= repeats; run_index++)); do
            cost_run || return 1
        done
        if [ "$repeats" -gt 1 ]; then
            lines+=("$(printf '%s\n' "${ratios[@]}" | sort -g | awk -v s="$store" '{v[++n] = $1; line = line (n > 1 ? " / " : "") $1}
                END {printf "  %s over %d runs: all of the server / RS256 verify, median %.3f x (sorted: %s)", s, n,
                     (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2), line}')")
        fi
    done
    unset server_binary
    cost_report
    [ -n "${BENCH_KEEP:-}" ] || rm -rf "$tmp"
}

# One run of $store under callgrind: its figures appended to bench_cost's lines and ratios. On a failure the
# bench's folder is removed.
cost_run() {
    local tag=""; [ "$repeats" -gt 1 ] && tag="-r$run_index"
    # callgrind counts one instruction per byte for `rep stosb` and `rep movsb`, which glibc's memset and memcpy
    # use above 2 KiB: libmicrohttpd zeroing its 32 KiB connection pool before each request counted as 32,794
    # instructions, where glibc's AVX2 loop for the same memset counts about 1,800 and runs as fast (100,000 such
    # memsets: 21 ms with rep stosb, 20 ms with the loop, on this machine). So the server runs under callgrind
    # with glibc told to use its vector loops at every size: the counts then follow the work the CPU does.
    # One file per process: two instances for postgres2.
    mkdir -p "$tmp/$store$tag"
    server_wrapper=(env GLIBC_TUNABLES=glibc.cpu.x86_rep_stosb_threshold=0x7fffffffffffffff:glibc.cpu.x86_rep_movsb_threshold=0x7fffffffffffffff
                    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$tmp/$store$tag/callgrind.out.%p")
    echo "  $store, 64 connections, under callgrind: preparing $count sign-ins (a minute or two)..."
    signin_level 64 "$tmp" "$count" "$store" "$tag" || { rm -rf "$tmp"; return 1; }
    unset server_wrapper
    # The dump taken right after the sign-ins (part 1 of each process), not the one each process writes at exit.
    local dumps; dumps=$(ls "$tmp/$store$tag"/callgrind.out.*.1 2>/dev/null || true)
    [ -n "$dumps" ] || { echo "callgrind wrote no counts" >&2; rm -rf "$tmp"; return 1; }
    local n rate p50 p99 cpu writer shares cores loadgen rss counted sessions
    read -r n rate p50 p99 cpu writer shares cores loadgen rss counted sessions _ <<<"${row%%|*}"
    [ "${row#*|}" = "" ] || echo "  note: ${row#*|}"
    # Summed over the store's server processes: the program total, and the inclusive instructions of the first
    # function matching each pattern (mangled names: stable across builds).
    local total=0 rs256=0 writer=0 statements=0 connects=0 dump annotated
    cost_count_dumps
    if [ -n "${BENCH_KEEP:-}" ]; then echo "Kept: $dumps (callgrind_annotate them)"; fi
    # A pool opens its PostgreSQL connections (with a TLS handshake each over tls) when the load first needs them, which in a
    # run this short is inside the counted sign-ins: left out, as a server that has been up has them open.
    total=$((total - connects))
    [ -n "$first_total" ] || first_total="$store $total ${counted%/*}"
    lines+=("$(cost_lines)")
    ratios+=("$(awk -v t="$total" -v r="$rs256" 'BEGIN {printf "%.3f", (r > 0 ? t / r : 0)}')")
}

# Sums cost_run's counts over its callgrind files (one a server process).
cost_count_dumps() {
    for dump in $dumps; do
        annotated=$(callgrind_annotate --inclusive=yes --threshold=100 "$dump" 2>/dev/null)
        total=$((total + $(awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}' <<<"$annotated")))
        rs256=$((rs256 + $(inclusive 'RSAPublicKeyC11verifyRS256' || true) + 0))
        writer=$((writer + $(inclusive 'SQLiteGroupCommitC9runWriter' || true) + 0))
        # SQLite's statements, or on the other stores the group commit's lanes, which run the sign-ins' writes
        # (the statements' round trips, libpq (and TLS with BENCH_POSTGRES_TRANSPORT=tls), results, and the sign-in's logic between them).
        if [ "$store" = sqlite ]; then
            statements=$((statements + $(inclusive '[?][?][?]:sqlite3_step ' || true) + 0))
        else
            statements=$((statements + $(inclusive 'PostgresGroupCommitC7runLane' || true) + 0))
            connects=$((connects + $(inclusive '[?][?][?]:PQconnectdbParams ' || true) + 0))
        fi
    done
}

# inclusive PATTERN: the inclusive instructions of the first function matching PATTERN in cost_count_dumps's annotated.
inclusive() { awk -v pattern="$1" '$0 ~ pattern {gsub(",", "", $1); print $1; exit}' <<<"$annotated"; }

# cost_run's figures of one run, as the report prints them.
cost_lines() {
    awk -v s="$store" -v t="$total" -v r="$rs256" -v w="$writer" -v q="$statements" -v n="${counted%/*}" \
        -v c="$connects" -v first="$first_total" -v tag="$tag" 'BEGIN {
        split(first, f, " ")
        printf "  %s (%d sign-ins counted%s):\n", s, n, (tag == "" ? "" : ", run " substr(tag, 3))
        printf "    %-52s %10.0f\n", "all of the server" (s == "postgres2" ? " (both instances)" : ""), t / n
        if (c > 0) printf "    %-52s %10.0f  (not in the figures)\n", "  and opening the pools\047 connections", c / n
        printf "    %-52s %10.0f  (%.0f%%)\n", "  RS256 verify (OpenSSL, the reference)", r / n, 100 * r / t
        if (s == "sqlite") {
            printf "    %-52s %10.0f  (%.0f%%)\n", "  the SQLite writer thread", w / n, 100 * w / t
            printf "    %-52s %10.0f  (%.0f%%)\n", "  SQLite statements (sqlite3_step), all threads", q / n, 100 * q / t
            printf "    %-52s %10.0f  (%.0f%%)\n", "  all but RS256 verify and SQLite statements", (t - r - q) / n, 100 * (t - r - q) / t
        } else {
            printf "    %-52s %10.0f  (%.0f%%)\n", "  the sign-ins\047 writes (statements, libpq, logic)", (q - c) / n, 100 * (q - c) / t
        }
        printf "    %-52s %10.2f x%s\n", "all of the server / RS256 verify", t / r, (s == "sqlite" ? "  (issue 26 asks for 2.00 x or less)" : "")
        if (f[1] != s) printf "    %-52s %10.2f x\n", "per sign-in, against " f[1] " in this run", (t / n) / (f[2] / f[3]) }'
}

cost_report() {
    printf '\nInstructions per full web sign-in (POST /apple_redirect over HTTP, as `scripts/bench signin` sends them;\n'
    printf '64 connections), counted by callgrind in the server processes, all threads; PostgreSQL itself and nginx\n'
    printf 'are not counted. valgrind emulates a CPU without AVX-512 or SHA extensions, so OpenSSL takes slower paths\n'
    printf 'than natively and its share is larger than in a timed profile; compare builds with each other, not with seconds.\n'
    [[ "$cost_stores" == *postgres* ]] && printf 'The instances reach PostgreSQL %s.\n' "$postgres_reached"
    printf '%s\n' "${lines[@]}"
}
