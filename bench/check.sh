#!/usr/bin/env bash
# /check under wrk (issue #5): toolmark's POST /api/v1/check against HISTOR 0.4.2's, both serving
# observations of the same stand-in fleet, and nginx serving a static file as large as toolmark's
# answer, one after the other in one invocation.
#
#   bench/check.sh
#
# 1. standin-fleet (--hosts 50 --per-host 4 --min-ms 1 --max-ms 5 --seed 1: 200 endpoints) is
#    crawled once by `toolmark crawl` and once by HISTOR (bench/histor_crawl.py), each into its
#    own data directory; then the fleet is stopped.
# 2. Bodies (bench/check_bodies.py prepare): "digest", the endpoint serving the memory server's
#    tool set with its MTL/1 digest as toolmark observed it (what WARDEN `--histor` sends);
#    "tools", the same endpoint with the full `tools` array read from it; "distinct", every
#    observed endpoint in turn with its digest and a "nonce" member neither server reads, so
#    that no two requests are alike and no answer can come from a cache of earlier answers
#    (toolmark keeps each answer for the second it names; with one body, nearly every request
#    of the other two is such a hit).
# 3. Servers, all on loopback:
#      toolmark serve --data D --listen 127.0.0.1:P --check-rate 0      (rate limit off)
#      python -m histor serve   (HISTOR's production command: one uvicorn process, h11, asyncio)
#          HISTOR_CHECK_RATE_PER_MIN=1000000000, scheduler, crawls and scans off, no registry
#      nginx -c OUT/nginx/nginx.conf   (worker_processes auto, GET of a static file whose size is
#          toolmark's answer for the same body)
#    Both /check servers must answer "match":"same" (and toolmark's answer must verify and carry
#    a tlog-proof bundle) before anything is timed (bench/check_bodies.py verify).
# 4. For each round and body: toolmark, HISTOR, nginx, each a 5 s warm-up and then
#      wrk -t2 -c64 -d20s --latency -s bench/check_post.lua URL
#    Then each server once more with one connection (wrk -t1 -c1 -d10s --latency): the latency
#    of a lone request. The answers are checked again after the last round; toolmark's /metrics
#    must show no rate-limited check.
#
# Environment: OUT (default target/bench-check/<UTC time>), ROUNDS (2), DURATION (20s), WARMUP
# (5s), CONNECTIONS (64), THREADS (2), BODIES ("digest tools distinct"), HISTOR_PYTHON (default:
# scripts/histor-venv's interpreter), SKIP_BUILD=1 to use the binaries in target/release,
# TOOLMARK_BIN=PATH to measure another toolmark binary (an earlier commit's, for a before/after),
# QUIET_MAX (600: seconds to wait for an idle machine before each body's three runs; 0: don't).
# SINGLE=0 skips the one-connection pass.
# Raw output (wrk, answers, server logs, CPU seconds, load) stays in OUT; the tables are printed
# at the end and written to OUT/summary.md.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/target/bench-check/$(date -u +%Y%m%dT%H%M%SZ)}"
rounds="${ROUNDS:-2}"
duration="${DURATION:-20s}"
warmup="${WARMUP:-5s}"
connections="${CONNECTIONS:-64}"
threads="${THREADS:-2}"
read -r -a bodies <<<"${BODIES:-digest tools distinct}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

for tool in wrk nginx curl /usr/bin/time; do
    if ! command -v "$tool" >/dev/null; then
        echo "check.sh: $tool is missing (apt-get install -y wrk nginx-light curl time)" >&2
        exit 1
    fi
done

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    echo "building …" >&2
    cargo build --release -p toolmark -p toolmark-standins >&2
fi
# Private copies: target/release is shared, and another build may replace it during the run.
mkdir -p "$out/bin"
# TOOLMARK_BIN: another toolmark binary to measure (e.g. an earlier commit's build), with the
# same fleet, bodies and peers.
cp "${TOOLMARK_BIN:-$root/target/release/toolmark}" "$out/bin/toolmark"
cp "$root/target/release/standin-fleet" "$out/bin/"
toolmark="$out/bin/toolmark"
fleet_bin="$out/bin/standin-fleet"
histor_python="${HISTOR_PYTHON:-$(scripts/histor-venv)}"
lua="$root/bench/check_post.lua"

# Every process this script starts, killed by PID on exit.
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    pids=()
}
trap cleanup EXIT INT TERM

free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# wait_http URL PID NAME: until URL answers (any status) or the process dies.
wait_http() {
    local url="$1" pid="$2" name="$3"
    for _ in $(seq 1 300); do
        if curl -s -o /dev/null "$url"; then
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "check.sh: $name exited before answering $url" >&2
            exit 1
        fi
        sleep 0.1
    done
    echo "check.sh: $name did not answer $url in 30 s" >&2
    exit 1
}

# Machine, versions, what was measured.
{
    echo "date: $(date -u)"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || true)"
    echo "git status --short:"
    git status --short 2>/dev/null || true
    echo "nproc: $(nproc)"
    echo "lscpu:"
    lscpu | head -20
    echo "free -g:"
    free -g
    echo "kernel: $(uname -r)"
    echo "wrk: $(wrk -v 2>&1 | head -1)"
    echo "nginx: $(nginx -v 2>&1) ($(dpkg-query -W -f '${Package} ${Version}' nginx-light nginx-core nginx 2>/dev/null | head -1))"
    echo "histor: $("$histor_python" -c 'from importlib.metadata import version as v; import sys; print("aimarket-histor", v("aimarket-histor"), "uvicorn", v("uvicorn"), "fastapi", v("fastapi"), "starlette", v("starlette"), "h11", v("h11"), "python", sys.version.split()[0])')"
    echo "uvloop/httptools in HISTOR's venv: $("$histor_python" -c 'import importlib.util as u; print([m for m in ("uvloop", "httptools") if u.find_spec(m)] or "none")')"
    echo "rustc: $(rustc --version)"
    echo "binaries (copied from target/release):"
    (cd "$root/target/release" && stat -c '  %n %y' toolmark standin-fleet && sha256sum toolmark standin-fleet | sed 's/^/  /')
    echo "wrk command: wrk -t$threads -c$connections -d$duration --latency -s bench/check_post.lua URL (warm-up -d$warmup)"
} >"$out/machine.txt"
cat "$out/machine.txt" >&2

# 1. Fleet and the two crawls.
echo "== fleet and crawls" >&2
"$fleet_bin" --hosts 50 --per-host 4 --min-ms 1 --max-ms 5 --seed 1 \
    >"$out/fleet.json" 2>"$out/fleet.requests.json" &
fleet_pid=$!
pids+=("$fleet_pid")
for _ in $(seq 1 300); do
    [ -s "$out/fleet.json" ] && break
    kill -0 "$fleet_pid" 2>/dev/null || { echo "check.sh: standin-fleet exited" >&2; exit 1; }
    sleep 0.1
done
registry="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["registry"])' "$out/fleet.json")"
rm -rf "$out/toolmark-data" "$out/histor-data"
"$toolmark" crawl --registry "$registry" --data "$out/toolmark-data" --allow-private \
    --report "$out/toolmark-report.json" 2>"$out/toolmark-crawl.err" </dev/null
"$histor_python" bench/histor_crawl.py --registry "$registry" --data "$out/histor-data" \
    >"$out/histor-crawl.json" 2>"$out/histor-crawl.err" </dev/null
echo "  toolmark: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"])' "$out/toolmark-report.json")" >&2
echo "  HISTOR: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["observations"])' "$out/histor-crawl.json")" >&2

# 2. Bodies, read from the fleet while it still runs.
"$histor_python" bench/check_bodies.py prepare --report "$out/toolmark-report.json" \
    --corpus-set toolset/tests/fixtures/corpus/mcp-proxy-snapshots/server-memory.json --out "$out" >&2
kill -TERM "$fleet_pid"
wait "$fleet_pid" 2>/dev/null || true

# 3. Servers.
read -r tm_port hi_port ng_port <<<"$(free_ports 3)"
tm_url="http://127.0.0.1:$tm_port"
hi_url="http://127.0.0.1:$hi_port"
ng_url="http://127.0.0.1:$ng_port"

"$toolmark" serve --data "$out/toolmark-data" --listen "127.0.0.1:$tm_port" --check-rate 0 \
    >"$out/toolmark-serve.log" 2>&1 </dev/null &
tm_pid=$!
pids+=("$tm_pid")

# HISTOR exactly as its image runs it (`python -m histor serve`), with a clean environment: no
# crawl on start or on schedule, no remote polling or declaration refresh, a registry URL nothing
# listens on, no fresh WARDEN scans (the observed sets' scans are cached by the crawl), no
# classifier; the /check limit raised so that it never refuses.
env -i PATH="$PATH" HOME="${HOME:-/root}" LANG=C.UTF-8 \
    HISTOR_PROFILE=dev \
    HISTOR_HOST=127.0.0.1 HISTOR_PORT="$hi_port" HISTOR_PUBLIC_BASE="$hi_url" \
    HISTOR_DATA_DIR="$out/histor-data" \
    HISTOR_CRAWL_ON_START=0 HISTOR_CRAWL_INTERVAL_S=0 HISTOR_REMOTE_INTERVAL_S=0 \
    HISTOR_DECLARATION_REFRESH_S=0 HISTOR_REGISTRY_URL=http://127.0.0.1:9 \
    HISTOR_CHECK_RATE_PER_MIN=1000000000 HISTOR_CHECK_SCAN_RATE_PER_HOUR=0 \
    "$histor_python" -m histor serve >"$out/histor-serve.log" 2>&1 </dev/null &
hi_pid=$!
pids+=("$hi_pid")

wait_http "$tm_url/health" "$tm_pid" "toolmark serve"
wait_http "$hi_url/health" "$hi_pid" "histor serve"

# Verify, and size nginx's files from toolmark's answers.
mkdir -p "$out/nginx/www" "$out/nginx/tmp"
for body in "${bodies[@]}"; do
    "$histor_python" bench/check_bodies.py verify --toolmark "$tm_url" --histor "$hi_url" \
        --body "$out/body-$body.json" --out "$out" --name "before-$body" >&2
    if [ "$body" = distinct ]; then
        "$histor_python" bench/check_bodies.py verify --toolmark "$tm_url" --histor "$hi_url" \
            --body "$out/body-distinct-last.json" --out "$out" --name "before-distinct-last" >&2
    fi
    size="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["toolmark"]["bytes"])' "$out/before-$body.sizes.json")"
    head -c "$size" /dev/zero | tr '\0' 'x' >"$out/nginx/www/check-$body.json"
done

# body_env BODY: the environment bench/check_post.lua reads for that body.
body_env() {
    case "$1" in
        distinct) echo "DISTINCT=$out/bodies-distinct.tsv" ;;
        *) echo "BODY=$out/body-$1.json" ;;
    esac
}
chmod -R a+rX "$out/nginx/www"

cat >"$out/nginx/nginx.conf" <<EOF
# bench/check.sh: a static file of the size of toolmark's /check answer, on loopback.
worker_processes auto;
pid $out/nginx/nginx.pid;
error_log $out/nginx/error.log warn;
events {
    worker_connections 1024;
}
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    default_type application/json;
    client_body_temp_path $out/nginx/tmp/body;
    proxy_temp_path $out/nginx/tmp/proxy;
    fastcgi_temp_path $out/nginx/tmp/fastcgi;
    uwsgi_temp_path $out/nginx/tmp/uwsgi;
    scgi_temp_path $out/nginx/tmp/scgi;
    server {
        listen 127.0.0.1:$ng_port;
        location = /check-digest.json { root $out/nginx/www; default_type application/json; }
        location = /check-tools.json { root $out/nginx/www; default_type application/json; }
        location = /check-distinct.json { root $out/nginx/www; default_type application/json; }
    }
}
EOF
nginx -t -c "$out/nginx/nginx.conf" -p "$out/nginx" -g 'daemon off;' 2>"$out/nginx/test.log" \
    || { cat "$out/nginx/test.log" >&2; exit 1; }
nginx -c "$out/nginx/nginx.conf" -p "$out/nginx" -g 'daemon off;' </dev/null \
    >"$out/nginx/stdout.log" 2>&1 &
ng_pid=$!
pids+=("$ng_pid")
wait_http "$ng_url/check-digest.json" "$ng_pid" nginx

for body in "${bodies[@]}"; do
    curl -s -D "$out/nginx-$body.headers" -o "$out/nginx-$body.answer" "$ng_url/check-$body.json"
    [ "$body" = distinct ] && continue
    curl -s -D "$out/toolmark-$body.headers" -o /dev/null -H 'Content-Type: application/json' \
        --data-binary "@$out/body-$body.json" "$tm_url/api/v1/check"
    curl -s -D "$out/histor-$body.headers" -o /dev/null -H 'Content-Type: application/json' \
        --data-binary "@$out/body-$body.json" "$hi_url/api/v1/check"
done

# CPU seconds (user + system) of a process and its children (nginx workers).
cpu_of() {
    local pid="$1" hz total=0 p
    hz="$(getconf CLK_TCK)"
    for p in "$pid" $(pgrep -P "$pid" || true); do
        total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    python3 -c "import sys; print(int(sys.argv[1]) / int(sys.argv[2]))" "$total" "$hz"
}

# CPU seconds the whole machine has been busy (user, nice, system, irq, softirq, steal: every
# column of /proc/stat's cpu line but idle and iowait).
busy_cpu() {
    awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" {print ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit}' /proc/stat
}

# run NAME URL PID ENV: warm-up, then the measured wrk run (ENV: what body_env printed, or
# "NONE=" for GETs).
run() {
    local name="$1" url="$2" pid="$3" bodyenv="$4" base
    base="$out/$name"
    echo "  $name …" >&2
    env "$bodyenv" wrk -t"$threads" -c"$connections" -d"$warmup" --latency -s "$lua" "$url" \
        >"$base.warmup" 2>&1
    cut -d' ' -f1-3 /proc/loadavg >"$base.load"
    local before after busy_before busy_after
    before="$(cpu_of "$pid")"
    busy_before="$(busy_cpu)"
    env "$bodyenv" /usr/bin/time -f '%U %S' -o "$base.wrkcpu" \
        wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$lua" "$url" >"$base.wrk" 2>&1
    busy_after="$(busy_cpu)"
    after="$(cpu_of "$pid")"
    # Threads and resident memory of the server (main process) just after the run.
    echo "threads $(ls "/proc/$pid/task" | wc -l) $(grep -E '^(VmRSS|VmHWM)' "/proc/$pid/status" | tr -s ' \t' ' ' | tr '\n' ' ')" \
        >"$base.proc"
    python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$before" "$after" >"$base.cpu"
    python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$busy_before" "$busy_after" \
        >"$base.busy"
}

# wait_quiet: before each triple of runs, wait (at most QUIET_MAX seconds, default 600) for a
# 10-second window in which the machine was busy less than 10% of one CPU: other jobs share this
# VM, unseen from here, and its two vCPUs are all the benchmark has. QUIET_MAX=0 skips the wait.
# Each run's CPU accounting (server, wrk, rest of the machine) shows what happened anyway.
wait_quiet() {
    local max="${QUIET_MAX:-600}" waited=0 a b hz
    hz="$(getconf CLK_TCK)"
    while [ "$waited" -lt "$max" ]; do
        a="$(busy_cpu)"
        sleep 10
        b="$(busy_cpu)"
        waited=$((waited + 10))
        if python3 -c "import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) < 1.0 else 1)" "$a" "$b"; then
            echo "  quiet after ${waited} s" >&2
            return 0
        fi
    done
    [ "$max" -eq 0 ] || echo "  still busy after ${max} s; running anyway" >&2
}

# 4. The measured runs.
for r in $(seq 1 "$rounds"); do
    echo "== round $r" >&2
    for body in "${bodies[@]}"; do
        wait_quiet
        run "r$r-$body-toolmark" "$tm_url/api/v1/check" "$tm_pid" "$(body_env "$body")"
        run "r$r-$body-histor" "$hi_url/api/v1/check" "$hi_pid" "$(body_env "$body")"
        run "r$r-$body-nginx" "$ng_url/check-$body.json" "$ng_pid" "NONE="
    done
done

# One connection, one request at a time: the latency of a lone request (not a goal, for reading
# the loaded figures). SINGLE=0 skips it.
if [ "${SINGLE:-1}" = 1 ]; then
    echo "== one connection" >&2
    for body in "${bodies[@]}"; do
        wait_quiet
        for server in toolmark histor nginx; do
            case "$server" in
                toolmark) url="$tm_url/api/v1/check" pid="$tm_pid" bodyenv="$(body_env "$body")" ;;
                histor) url="$hi_url/api/v1/check" pid="$hi_pid" bodyenv="$(body_env "$body")" ;;
                nginx) url="$ng_url/check-$body.json" pid="$ng_pid" bodyenv="NONE=" ;;
            esac
            base="$out/c1-$body-$server"
            echo "  c1-$body-$server …" >&2
            before="$(cpu_of "$pid")"
            busy_before="$(busy_cpu)"
            env "$bodyenv" /usr/bin/time -f '%U %S' -o "$base.wrkcpu" \
                wrk -t1 -c1 -d10s --latency -s "$lua" "$url" >"$base.wrk" 2>&1
            busy_after="$(busy_cpu)"
            after="$(cpu_of "$pid")"
            python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$before" "$after" >"$base.cpu"
            python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$busy_before" "$busy_after" \
                >"$base.busy"
        done
    done
fi

# The answers once more, and toolmark's own count of refused checks.
for body in "${bodies[@]}"; do
    "$histor_python" bench/check_bodies.py verify --toolmark "$tm_url" --histor "$hi_url" \
        --body "$out/body-$body.json" --out "$out" --name "after-$body" >&2
done
curl -s "$tm_url/metrics" >"$out/toolmark-metrics.txt"
ps -o pid,nlwp,rss,cmd -p "$tm_pid" -p "$hi_pid" -p "$ng_pid" $(pgrep -P "$ng_pid" | sed 's/^/-p /') \
    >"$out/processes.txt" 2>&1 || true

cleanup
python3 bench/check_summary.py "$out" | tee "$out/summary.md"
