# Sourced by scripts/bench: what the benchmarks read off the machine and the processes they measure (/proc, the
# servers' /metrics, the local PostgreSQL's processes), and small helpers, none of which starts a measured process.

wait_for() { for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "server on $1 did not start" >&2; return 1; }
rps() { awk '/Requests\/sec/ {print $2}'; }
# median NUMBER…: the median of the numbers.
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
# cpu_ticks_into VARIABLE PID: utime + stime (the fields after "(comm) ") into VARIABLE, with no process started,
# so that loops on the measured machine can call it; cpu_ticks PID prints the same.
cpu_ticks_into() {
    local stat fields; read -r stat <"/proc/$2/stat" || return 1
    read -ra fields <<<"${stat##*) }"; printf -v "$1" '%d' $((fields[11] + fields[12]))
}
cpu_ticks() { local ticks; cpu_ticks_into ticks "$1" && echo "$ticks"; }
# One-core RS256 verifies a second, as `openssl speed` measures them in 3 s; empty if it gives none.
openssl_verifies() { openssl speed -seconds 3 rsa2048 2>/dev/null | awk '/^rsa 2048 bits/ {print $NF}'; }
# The machine's CPU time so far and the part of it the hypervisor gave to other guests ("steal"), in ticks.
machine_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $9; exit}' /proc/stat; }
writer_ticks() {  # CPU of the server's SQLite writer thread (the one part of a sign-in that runs one at a time); 0 if none
    local task
    for task in /proc/"$1"/task/*; do
        if [ "$(cat "$task/comm" 2>/dev/null)" = sqlite-writer ]; then cpu_ticks "$1/task/${task##*/}"; return; fi
    done
    echo 0
}
writer_schedstat() {  # the writer thread's nanoseconds on a CPU and runnable but waiting for one; "0 0" if none
    local task
    for task in /proc/"$1"/task/*; do
        if [ "$(cat "$task/comm" 2>/dev/null)" = sqlite-writer ]; then awk '{print $1, $2}' "$task/schedstat"; return; fi
    done
    echo "0 0"
}
# sleeps PID...: times the processes' threads went to sleep so far (voluntary context switches, every thread's /proc
# status): each is a wake-up later, and on these VMs that, not the instructions, is what a second instance adds.
sleeps() {
    local pid files=()
    for pid in "$@"; do files+=(/proc/"$pid"/task/*/status); done
    awk '/^voluntary_ctxt_switches/ {n += $2} END {print n + 0}' "${files[@]}" 2>/dev/null
}
wait_file() {  # wait_file PATH PID...: until PATH exists, as long as every PID lives
    local path=$1 pid; shift
    while [ ! -e "$path" ]; do
        for pid in "$@"; do kill -0 "$pid" 2>/dev/null || return 1; done
        sleep 0.1
    done
}
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p" | head -n 1; }  # field NAME "a=1 NAME=2" -> 2
# store_counters PORT...: "serialization deadlocks reads" summed over the instances' /metrics, one scrape each:
# PostgreSQL write retries (none on SQLite), and callbacks that read their login attempt from the database.
store_counters() {
    local port
    for port in "$@"; do curl -fs "http://127.0.0.1:$port/metrics" || true; done | awk '
        /^bridge_store_write_retries_total\{cause="serialization_failure"\}/ {s += $2}
        /^bridge_store_write_retries_total\{cause="deadlock"\}/ {d += $2}
        /^bridge_login_attempt_lookups_total\{source="database"\}/ {n += $2}
        /^bridge_store_group_commits_total / {c += $2}
        /^bridge_store_group_committed_writes_total / {w += $2}
        /^bridge_store_group_coalesced_commits_total / {k += $2}
        END {print s + 0, d + 0, n + 0, c + 0, w + 0, k + 0}'
}
postgres_ticks() {  # CPU of the local PostgreSQL server: the postmaster and every process it started
    local postmaster pid ticks=0
    postmaster=$(head -n 1 "$postgres_data/postmaster.pid" 2>/dev/null) || { echo 0; return; }
    for pid in $postmaster $(pgrep -P "$postmaster"); do ticks=$((ticks + $(cpu_ticks "$pid" 2>/dev/null || echo 0))); done
    echo "$ticks"
}
# The same, also counting the processes that have ended (the postmaster's reaped children): a pgbench run's backends.
postgres_ticks_with_ended() {
    local postmaster stat fields
    postmaster=$(head -n 1 "$postgres_data/postmaster.pid" 2>/dev/null) || { echo 0; return; }
    read -r stat <"/proc/$postmaster/stat" || { echo 0; return; }
    read -ra fields <<<"${stat##*) }"
    echo $(($(postgres_ticks) + fields[13] + fields[14]))
}
