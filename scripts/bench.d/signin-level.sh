# Sourced by scripts/bench: one level of `scripts/bench signin` (and of `cost`, under callgrind).

# One level: a fresh server on an empty database, fresh sign-ins, one wrk run, then every session checked.
# signin_level CONNECTIONS TMP COUNT [STORE [TAG]]. STORE: sqlite, postgres (one instance), postgres_nginx (one
# instance behind nginx) or postgres2 (two instances behind nginx). TAG ends the names of the run's directory, database and profile (BENCH_REPEAT's "-rN").
# Sets the global `row` to "store,connections sign-ins/s p50 p99 cpu-µs cores rss checked worked notes", and
# `level_database` to the database URL it used.
# Its steps (level_*) share its local variables, as bash's functions see their callers'.
signin_level() {
    # repeat_tag: "-rN" for the Nth of BENCH_REPEAT runs, so that each run has its own files and database.
    local connections=$1 tmp=$2 count=$3 store=${4:-sqlite} repeat_tag=${5:-} port prefix gen server wrk_pid
    local run="$tmp/$store-c$connections$repeat_tag"; mkdir -p "$run"
    local database="sqlite:$run/bridge.sqlite3" second="" balancer="" target port2 secret
    level_create_database
    level_database=$database
    level_start || return 1
    level_await_ready || return 1
    local ticks_before rss_note="" writer_before machine_before sched_before sleeps_before
    local log_before=0 database_before=0 counters_before
    level_counters_before
    local wrk_ticks=0
    level_run_wrk
    local ticks_after rss_kib result writer_after sched_after sleeps_after
    local serial deadlocked reads retries commits grouped coalesced lock_waits="- -" database_ticks=""
    level_counters_after
    local verdict
    level_verify || return 1
    level_row
}

# A PostgreSQL store's run gets a database of its own.
level_create_database() {
    if [[ "$store" == postgres* ]]; then
        local name="bench_${store}_c${connections}${repeat_tag//-/_}_$$"
        psql -q "$postgres_url" -c "CREATE DATABASE $name" >/dev/null
        # Every lock wait that lasts 1 ms is logged ("still waiting for …", then "acquired … after N ms"): the
        # bench counts them. (The deadlock check then also runs after 1 ms of waiting instead of 1 s.)
        psql -q "$postgres_url" -c "ALTER DATABASE $name SET log_lock_waits = on" \
            -c "ALTER DATABASE $name SET deadlock_timeout = '1ms'" \
            -c "ALTER DATABASE $name SET synchronous_commit = ${BENCH_POSTGRES_SYNCHRONOUS_COMMIT:-on}" >/dev/null
        database="${postgres_url%/*}/$name"
    fi
}

# The sign-ins' preparation (signin-bench prepare, with the simulator), the instance or two, and nginx in front of
# them for postgres2 and postgres_nginx.
level_start() {
    port=$(free_port); prefix="bench.$RANDOM$RANDOM."
    "$bin/signin-bench" prepare --bridge "$port" --count "$count" --files 2 --out "$run" --prefix "$prefix" &
    gen=$!
    wait_file "$run/simulator-port" $gen || { echo "signin-bench prepare failed" >&2; return 1; }
    secret=$(openssl rand -base64 32)
    level_start_instance "$port" "$run/server.log"
    server=$!
    target=$port
    if [ "$store" = postgres2 ] || [ "$store" = postgres_nginx ]; then
        local upstreams="server 127.0.0.1:$port;"
        if [ "$store" = postgres2 ]; then
            # A second instance on the same database, and nginx spreading the sign-ins over both (round robin).
            port2=$(free_port)
            wait_for "$port"  # the first has migrated the database
            level_start_instance "$port2" "$run/server2.log"
            second=$!
            wait_for "$port2"
            upstreams="$upstreams server 127.0.0.1:$port2;"
        fi
        target=$(free_port)
        level_start_balancer "$upstreams"
    fi
    return 0  # (an instance that did not come up is seen by level_await_ready)
}

# level_start_instance PORT LOG: one instance in the background.
# `dev` only because APPLE_ID_URL is plain http on loopback (the stand-in for Apple); everything else is
# configured as in production. Each client address comes through X-Forwarded-For from loopback (a trusted
# proxy), so the per-client limit on GET /login (600 a minute) applies per simulated browser.
level_start_instance() {
    BRIDGE_PORT=$1 BRIDGE_PUBLIC_URL="http://127.0.0.1:$port" BRIDGE_DATABASE="$database" \
        BRIDGE_SECRET_KEY=$secret APPLE_SERVICES_ID=dev.applesigninbridge.web \
        APPLE_BUNDLE_IDS=dev.applesigninbridge.app APPLE_ID_URL="http://127.0.0.1:$(cat "$run/simulator-port")" \
        ${server_wrapper[@]+"${server_wrapper[@]}"} "${server_binary:-$bin/apple-signin-bridge}" dev --resources "$PWD" >"$2" 2>&1 &
}

# level_start_balancer UPSTREAMS: nginx on $target in front of the instances.
level_start_balancer() {
    mkdir -p "$run/nginx"
    # Each worker holds a client's connection and one to an instance for every sign-in in flight, and keeps up
    # to 256 idle ones to the instances: with nginx's default of 512 connections a worker, one that accepted
    # most of wrk's 256 ran short and closed idle client connections as wrk sent on them ("worker_connections
    # are not enough, reusing connections", a warning), and those sign-ins were lost.
    printf '%s\n' "worker_processes 2; worker_rlimit_nofile 10000; events { worker_connections 4096; } http { access_log off; upstream bridge { $1" \
        "keepalive 256; } server { listen 127.0.0.1:$target; location / {" \
        "proxy_pass http://bridge; proxy_http_version 1.1; proxy_set_header Connection \"\"; } } }" \
        >"$run/nginx/nginx.conf"
    nginx -p "$run/nginx" -c "$run/nginx/nginx.conf" -g "daemon off; pid $run/nginx/pid; error_log $run/nginx/error.log warn;" &
    balancer=$!
    wait_for "$target"
}

# Until the sign-ins are prepared; an instance that stopped at start-up fails the run at once.
level_await_ready() {
    if ! wait_file "$run/ready" $gen $server $second $balancer; then
        local logs=("$run/server.log" "$run/server2.log") states=() instance index
        for instance in $server $second; do
            kill -0 "$instance" 2>/dev/null && states+=("was still running") || states+=("had stopped")
        done
        kill $server $second $balancer $gen 2>/dev/null; wait $server $second $balancer $gen 2>/dev/null
        # The run's directory goes with the bench's, so what the instances said is shown here.
        echo "preparing sign-ins failed." >&2
        for index in "${!states[@]}"; do
            echo "Instance $((index + 1)) ${states[$index]}; the end of its log:" >&2
            tail -n 30 "${logs[$index]}" >&2
        done
        return 1
    fi
}

# What the run is measured against: the instances' CPU and counters, the machine's, PostgreSQL's.
level_counters_before() {
    ticks_before=$(cpu_ticks $server)
    machine_before=$(machine_ticks)
    writer_before=$(writer_ticks $server)
    sched_before=$(writer_schedstat $server)
    sleeps_before=$(sleeps $server $second)
    [ -n "$second" ] && ticks_before=$((ticks_before + $(cpu_ticks $second)))
    counters_before=$(store_counters $port ${second:+$port2})
    if [[ "$store" == postgres* ]]; then
        log_before=$(stat -c %s "${BRIDGE_TEST_POSTGRES_LOG:-/dev/null}")
        database_before=$(postgres_ticks)
    fi
    # Peak RSS of the sign-in run itself, not of the preparation: reset the high-water mark (Linux >= 4.0).
    echo 5 2>/dev/null >"/proc/$server/clear_refs" || rss_note="peak RSS includes preparation"
    [ -n "$second" ] && { echo 5 2>/dev/null >"/proc/$second/clear_refs" || true; }
    # Under callgrind only the sign-ins themselves are counted: not the start-up, nor the preparation's /login requests.
    if [ -n "${server_wrapper+set}" ]; then
        for instance in $server $second; do
            callgrind_control --zero "$instance" >/dev/null 2>&1; callgrind_control --instr=on "$instance" >/dev/null 2>&1
        done
    fi
    return 0
}

# wrk sends the prepared sign-ins (Benchmarks/wrk/signin.lua) until both files are done; sets wrk_ticks.
level_run_wrk() {
    SIGNIN_BENCH_DIR=$run SIGNIN_BENCH_RATE="${BENCH_RATE:-}" SIGNIN_BENCH_THREADS=2 \
        SESSION_TAP_FILE="$run/sessions" LD_PRELOAD="$tmp/session_tap.so" \
        wrk -t2 -c"$connections" -d"${BENCH_MAX_SECONDS:-300}s" --timeout 10s -s Benchmarks/wrk/signin.lua \
        "http://127.0.0.1:$target/" >"$run/wrk.out" 2>&1 &
    wrk_pid=$!
    local profiler=""
    if [ -n "${BENCH_PERF:-}" ]; then  # a CPU profile of the server (both instances) during the run, for `perf report`
        local scope=(-p "$server${second:+,$second}")
        [ -n "${BENCH_PERF_MACHINE:-}" ] && scope=(-a)
        perf record -e cpu-clock -F 1999 ${BENCH_PERF_GRAPH:--g} "${scope[@]}" -o "$BENCH_PERF.$store-c$connections$repeat_tag" >/dev/null 2>&1 &
        profiler=$!
    fi
    # Watching wrk forks nothing (no awk, no sleep): that loop ran 40 processes a second, about 3 % of the two
    # cores, on the machine it measures.
    local pause
    mkfifo "$run/pause"; exec {pause}<>"$run/pause"
    while kill -0 $wrk_pid 2>/dev/null; do
        cpu_ticks_into wrk_ticks $wrk_pid 2>/dev/null || true  # the load generator's own CPU
        if [ -e "$run/done.1" ] && [ -e "$run/done.2" ]; then kill -INT $wrk_pid; break; fi
        read -rt 0.05 -u $pause || true  # no one writes to it: a 50 ms pause
    done
    exec {pause}<&-
    wait $wrk_pid || true
    if [ -n "$profiler" ]; then kill -INT $profiler; wait $profiler 2>/dev/null || true; fi
    if [ -n "${server_wrapper+set}" ]; then
        for instance in $server $second; do
            callgrind_control --dump=signins "$instance" >/dev/null 2>&1; callgrind_control --instr=off "$instance" >/dev/null 2>&1
        done
    fi
    return 0
}

# The same figures after the run, and PostgreSQL's lock waits of 1 ms or more (its log) and CPU.
level_counters_after() {
    ticks_after=$(cpu_ticks $server)
    level_steal=$(awk -v b="$machine_before" -v a="$(machine_ticks)" \
        'BEGIN {split(b, x, " "); split(a, y, " "); printf "%.1f", (y[1] > x[1] ? 100 * (y[2] - x[2]) / (y[1] - x[1]) : 0)}')
    writer_after=$(writer_ticks $server)
    sched_after=$(writer_schedstat $server)
    sleeps_after=$(sleeps $server $second)
    [ -n "$second" ] && ticks_after=$((ticks_after + $(cpu_ticks $second)))
    # The run's write retries and attempt reads (each instance's /metrics before and after it).
    read -r serial deadlocked reads commits grouped coalesced <<<"$(awk -v b="$counters_before" -v a="$(store_counters $port ${second:+$port2})" \
        'BEGIN {split(b, x, " "); split(a, y, " "); print y[1] - x[1], y[2] - x[2], y[3] - x[3], y[4] - x[4], y[5] - x[5], y[6] - x[6]}')"
    retries="$serial $deadlocked"
    # PostgreSQL's side: lock waits of 1 ms or more (its log), its CPU.
    if [[ "$store" == postgres* ]]; then
        database_ticks=$(($(postgres_ticks) - database_before))
        if [ -n "${BRIDGE_TEST_POSTGRES_LOG:-}" ]; then
            lock_waits=$(tail -c +$((log_before + 1)) "$BRIDGE_TEST_POSTGRES_LOG" | awk '
                / still waiting for / {n++}
                / acquired .* after [0-9.]+ ms/ {for (i = 1; i < NF; i++) if ($(i + 1) == "ms" && $(i - 1) == "after") ms += $i}
                END {print n + 0, ms + 0}')
            [ -n "${BENCH_KEEP:-}" ] && tail -c +$((log_before + 1)) "$BRIDGE_TEST_POSTGRES_LOG" >"$run/postgres.log"
        fi
    fi
    rss_kib=$(awk '/VmHWM/ {print $2}' "/proc/$server/status")
    [ -n "$second" ] && rss_kib=$((rss_kib + $(awk '/VmHWM/ {print $2}' "/proc/$second/status")))
    return 0
}

# wrk's result, every session checked (signin-bench verify), the processes stopped; fails when wrk gave no result.
level_verify() {
    result=$(grep '^SIGNIN ' "$run/wrk.out" || true)
    if [ -z "$result" ]; then
        kill $server $second $balancer $gen; wait $server $second $balancer $gen 2>/dev/null
        echo "wrk gave no result:" >&2; cat "$run/wrk.out" >&2; return 1
    fi
    local sample=()
    [ "${BENCH_VERIFY:-all}" != all ] && sample=(--sample "$BENCH_VERIFY")
    verdict=$("$bin/signin-bench" verify --bridge "$port" --count "$count" --prefix "$prefix" "${sample[@]}" "$run/sessions")
    kill -TERM $server $second $balancer $gen; wait $server $second $balancer $gen 2>/dev/null || true
    # Vacuumed now, not by an autovacuum worker while a later run is measured. (Not before the run: analyzed while
    # the users and sessions tables were empty, the statements' plans scanned them whole, 550 µs a sign-in.)
    [[ "$store" == postgres* ]] && psql -q "$database" -c "VACUUM ANALYZE" >/dev/null
    return 0
}

# The row: what the run reached and cost, and notes on anything that went wrong (see signin_level).
level_row() {
    local redirected seconds cookies checked worked notes=""
    redirected=$(field redirected "$result"); seconds=$(field seconds "$result")
    cookies=$(wc -l <"$run/sessions"); checked=$(field checked "$verdict"); worked=$(field worked "$verdict")
    level_notes
    # Sign-ins that count: 303s whose session then worked (scaled by the sample's success rate when sampling).
    local working
    working=$(awk -v r="$redirected" -v c="$checked" -v w="$worked" 'BEGIN {print (c > 0 ? r * w / c : 0)}')
    local hz; hz=$(getconf CLK_TCK)
    row=$(awk -v n="$store,$connections" -v ok="$working" -v s="$seconds" -v t=$((ticks_after - ticks_before)) -v hz="$hz" \
        -v rss="$rss_kib" -v p50="$(field p50_ms "$result")" -v p99="$(field p99_ms "$result")" -v sent="$count" \
        -v checked="$checked" -v worked="$worked" -v w="$wrk_ticks" -v wt=$((writer_after - writer_before)) \
        -v sb="$sched_before" -v sa="$sched_after" -v retries="$retries" -v waits="$lock_waits" -v db="$database_ticks" \
        -v reads="$reads" -v commits="$commits" -v grouped="$grouped" -v coalesced="$coalesced" -v slept=$((sleeps_after - sleeps_before)) 'BEGIN {
            split(sb, b, " "); split(sa, a, " "); run = (a[1] - b[1]) / 1e9; queued = (a[2] - b[2]) / 1e9
            split(retries, r, " "); split(waits, l, " ")
            printf "%s %.0f %.1f %.1f %.0f %s %s %.2f %.0f %.1f %d/%d %d/%d", n, ok / s, p50, p99,
                (ok > 0 ? 1e6 * t / hz / ok : 0), (wt > 0 && ok > 0 ? sprintf("%.0f", 1e6 * wt / hz / ok) : "-"),
                (run > 0 && s > 0 ? sprintf("%.0f/%.0f", 100 * run / s, 100 * queued / s) : "-"),
                t / hz / s, (ok > 0 ? 1e6 * w / hz / ok : 0), rss / 1024, ok, sent, worked, checked
            # PostgreSQL only: its CPU, serialization retries, deadlocks, lock waits (>= 1 ms) and their ms, per sign-in.
            if (db == "" || ok == 0) printf " - - - - -"
            else printf " %.0f %.4f %.4f %.4f %.4f", 1e6 * db / hz / ok, r[1] / ok, r[2] / ok, l[1] / ok, l[2] / ok
            # Callbacks that read their login attempt from the database, per sign-in.
            printf " %.2f", (ok > 0 ? reads / ok : 0)
            # Writes one COMMIT carried (group commit), over the run.
            printf " %s", (commits > 0 ? sprintf("%.1f", grouped / commits) : "-")
            # Commits whose sign-ins went out as one statement per kind of write (PostgreSQL), in percent.
            printf " %s", (db != "" && commits > 0 ? sprintf("%.0f", 100 * coalesced / commits) : "-")
            # Times a server thread went to sleep, per sign-in.
            printf " %.2f", (ok > 0 ? slept / ok : 0) }')
    level_attempt_reads=$(awk -v r="$reads" -v ok="$working" 'BEGIN {printf "%.2f", (ok > 0 ? r / ok : 0)}')
    level_writes_per_commit=$(awk -v c="$commits" -v w="$grouped" 'BEGIN {printf "%.0f", (c > 0 ? w / c : 1)}')
    row+="|${notes# }"
}

# Sets level_row's notes: sign-ins not answered or answered otherwise, sessions that did not work, nginx's warnings.
level_notes() {
    [ "$(field complete "$result")" = 1 ] || notes+=" not every sign-in was answered;"
    [ "$(field other "$result")" = none ] || notes+=" other answers: $(field other "$result");"
    [ "$(field socket_errors "$result")" = 0 ] || notes+=" socket errors: $(field socket_errors "$result");"
    [ "$cookies" = "$redirected" ] || notes+=" $redirected redirects but $cookies session cookies;"
    grep -q '^first problem' <<<"$verdict" && notes+=" ${verdict#*first problem: };"
    [ -n "$rss_note" ] && notes+=" $rss_note;"
    # nginx logs at `warn` and above only: any line is one.
    [ -n "$balancer" ] && [ -s "$run/nginx/error.log" ] &&
        notes+=" nginx: $(head -n 1 "$run/nginx/error.log" | cut -d' ' -f3- | cut -c1-120);"
    return 0
}
