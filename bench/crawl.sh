#!/usr/bin/env bash
# Crawler benchmark (issue #4): toolmark and HISTOR 0.4.2 crawl the same stand-in registry and
# fleet of stand-in MCP servers on loopback (standins/src/fleet.rs), per-host limit 2 for both.
#
#   bench/crawl.sh [SCENARIO ...]      default: wide narrow mem
#
# Scenarios (latency of every endpoint drawn uniformly from 50–500 ms, applied to every request):
#   wide    1,000 hosts × 2 endpoints = 2,000 targets, one remote per server; toolmark and HISTOR
#   narrow    100 hosts × 20 endpoints = 2,000 targets (the per-host limit binds); both
#   mem     1,000 hosts × 20 endpoints = 20,000 targets, 2,000 servers × 10 remotes; toolmark only
#   onehost     1 host × 200 endpoints (not in the default list): the per-host limit is all
#           that binds, as on the real registry's largest host (server.smithery.ai, 212 of its
#           621 dialable remotes in December 2025); toolmark and HISTOR
#   wide-day2, narrow-day2, onehost-day2, mem-day2
#           the same, but toolmark crawls twice into one data directory and the second crawl is
#           measured: a daily crawl with a full harvest (TOOLMARK_HARVEST=full), which tries each
#           remote's last working transport first and schedules by the previous durations
#           (HISTOR, which has neither, runs once)
#   wide-delta, narrow-delta, onehost-delta
#           the daily whole run (harvest + observe + record), side by side: each crawler runs
#           twice into one data directory and the second run is measured. toolmark's second run
#           is a delta day (`crawl.harvest = "delta"`, the default: an `updated_since` harvest
#           merged into the records the index keeps, then the whole latest set observed);
#           HISTOR's second run is its daily run (a full harvest, every endpoint observed). The
#           fleet's registry does not change between the runs, so the delta is one empty page
#           (a real day's delta, ~50 changed versions, is one page too)
#   wide-onecert, narrow-onecert, mem-onecert
#           the same, toolmark only, run with SSL_CERT_FILE holding one root certificate and an
#           empty SSL_CERT_DIR: a diagnostic of what loading the system's root store costs (the
#           fleet is plain http, so nothing else changes)
#
# Each crawler gets a fresh standin-fleet process with the same arguments and seed (the same
# latencies, tool sets and registry items; only the ports differ), so the fleet's own timing
# (first request in, last answer out: `activeSeconds` in fleet-*.requests.json) is that
# crawler's network phase.
#
# Environment: HISTOR_PYTHON (default: scripts/histor-venv's interpreter), OUT (default
# target/bench-crawl/<UTC time>), SEED (default 1), SKIP_HISTOR=1 to run toolmark only.
# Every run's raw output (fleet line, toolmark report, /usr/bin/time -v, HISTOR JSON) stays in
# OUT; the table is printed at the end and written to OUT/summary.md.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seed="${SEED:-1}"
out="${OUT:-$root/target/bench-crawl/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(wide narrow mem)

if [ ! -x /usr/bin/time ]; then
    echo "crawl.sh: /usr/bin/time is missing (apt-get install time)" >&2
    exit 1
fi

echo "building …" >&2
cargo build --release -p toolmark -p toolmark-standins >&2
# What was measured: the commit, and any uncommitted change the build picked up.
{
    git rev-parse HEAD 2>/dev/null || true
    git status --short 2>/dev/null || true
    rustc --version
    nproc
} >"$out/version.txt"

target_dir="${CARGO_TARGET_DIR:-$root/target}"
toolmark="$target_dir/release/toolmark"
fleet_bin="$target_dir/release/standin-fleet"

if [ "${SKIP_HISTOR:-0}" != 1 ]; then
    histor_python="${HISTOR_PYTHON:-$(scripts/histor-venv)}"
fi

fleet_pid=""
fleet_out=""
stop_fleet() {
    if [ -n "$fleet_pid" ]; then
        # The fleet's own CPU seconds (it shares the machine with the crawler it serves).
        awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$fleet_pid/stat" \
            >"${fleet_out%.requests.json}.cpu" 2>/dev/null || true
        kill -TERM "$fleet_pid" 2>/dev/null || true
        wait "$fleet_pid" 2>/dev/null || true
        fleet_pid=""
    fi
}
trap stop_fleet EXIT INT TERM

# start_fleet DIR NAME ARGS…: start standin-fleet, wait for its JSON line (DIR/fleet.json),
# set $registry; its exit line (requests answered, timing) goes to DIR/fleet-NAME.requests.json.
start_fleet() {
    local dir="$1" name="$2"
    shift 2
    fleet_out="$dir/fleet-$name.requests.json"
    "$fleet_bin" "$@" --seed "$seed" >"$dir/fleet.json" 2>"$fleet_out" &
    fleet_pid=$!
    for _ in $(seq 1 600); do
        if [ -s "$dir/fleet.json" ]; then
            break
        fi
        if ! kill -0 "$fleet_pid" 2>/dev/null; then
            echo "crawl.sh: standin-fleet exited: $(cat "$fleet_out")" >&2
            exit 1
        fi
        sleep 0.1
    done
    registry="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["registry"])' "$dir/fleet.json")"
    echo "  fleet: $(head -c 200 "$dir/fleet.json") …" >&2
}

# The machine's load just before a run (other jobs share this VM).
note_load() {
    cut -d' ' -f1-3 /proc/loadavg >"$1"
}

run_toolmark() {
    local dir="$1"
    shift
    echo "  toolmark crawl …" >&2
    note_load "$dir/toolmark.load"
    date +%s.%N >"$dir/toolmark.start"
    env "$@" /usr/bin/time -v -o "$dir/toolmark.time" \
        "$toolmark" crawl --registry "$registry" --data "$dir/toolmark-data" --allow-private \
        --report "$dir/toolmark-report.json" 2>"$dir/toolmark.err" </dev/null
    date +%s.%N >"$dir/toolmark.end"
}

run_histor() {
    local dir="$1"
    echo "  HISTOR crawl …" >&2
    note_load "$dir/histor.load"
    date +%s.%N >"$dir/histor.start"
    /usr/bin/time -v -o "$dir/histor.time" \
        "$histor_python" bench/histor_crawl.py --registry "$registry" --data "$dir/histor-data" \
        --per-host 2 --workers 12 >"$dir/histor.json" 2>"$dir/histor.err" </dev/null
    date +%s.%N >"$dir/histor.end"
}

for scenario in "${scenarios[@]}"; do
    dir="$out/$scenario"
    mkdir -p "$dir"
    echo "== $scenario" >&2
    base="${scenario%-onecert}"
    base="${base%-day2}"
    base="${base%-delta}"
    case "$base" in
        wide) fleet_args=(--hosts 1000 --per-host 2 --remotes-per-server 1); histor=1 ;;
        narrow) fleet_args=(--hosts 100 --per-host 20 --remotes-per-server 1); histor=1 ;;
        mem) fleet_args=(--hosts 1000 --per-host 20 --remotes-per-server 10); histor=0 ;;
        onehost) fleet_args=(--hosts 1 --per-host 200 --remotes-per-server 1); histor=1 ;;
        *) echo "crawl.sh: unknown scenario $scenario" >&2; exit 2 ;;
    esac
    fleet_args+=(--min-ms 50 --max-ms 500 --dump-latencies "$dir/latencies.jsonl")
    tm_env=()
    if [ "$scenario" != "${scenario%-onecert}" ]; then
        histor=0
        mkdir -p "$dir/empty-cert-dir"
        awk '/BEGIN CERTIFICATE/ {n++} n == 1 {print} /END CERTIFICATE/ && n == 1 {exit}' \
            /etc/ssl/certs/ca-certificates.crt >"$dir/one-root.pem"
        tm_env=(SSL_CERT_FILE="$dir/one-root.pem" SSL_CERT_DIR="$dir/empty-cert-dir")
    fi
    start_fleet "$dir" toolmark "${fleet_args[@]}"
    twice=0
    if [ "$scenario" != "${scenario%-day2}" ]; then
        # A daily crawl with a full harvest, as these scenarios measured before deltas.
        twice=1
        tm_env+=(TOOLMARK_HARVEST=full)
    elif [ "$scenario" != "${scenario%-delta}" ]; then
        twice=1
        tm_env+=(TOOLMARK_HARVEST=delta)
    fi
    if [ "$twice" = 1 ]; then
        # A first crawl fills the data directory; the measured one is the next day's, which
        # starts from what the first learned (transport hints, durations for longest-first).
        run_toolmark "$dir" "${tm_env[@]}"
        mv "$dir/toolmark-report.json" "$dir/toolmark-day1-report.json"
    fi
    run_toolmark "$dir" "${tm_env[@]}"
    stop_fleet
    rm -rf "$dir/toolmark-data"
    if [ "$histor" = 1 ] && [ "${SKIP_HISTOR:-0}" != 1 ]; then
        start_fleet "$dir" histor "${fleet_args[@]}"
        if [ "$scenario" != "${scenario%-delta}" ]; then
            # HISTOR's daily run is its second one over the same data.
            run_histor "$dir"
            for f in json time start end load; do mv "$dir/histor.$f" "$dir/histor-day1.$f"; done
        fi
        run_histor "$dir"
        stop_fleet
        rm -rf "$dir/histor-data"
    fi
done

python3 bench/crawl_summary.py "$out" "${scenarios[@]}" | tee "$out/summary.md"
