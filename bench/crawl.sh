#!/usr/bin/env bash
# Crawler benchmark (issue #4): toolmark and HISTOR 0.4.2 crawl the same stand-in registry and
# fleet of stand-in MCP servers on loopback (standins/src/fleet.rs), per-host limit 2 for both.
#
#   bench/crawl.sh [SCENARIO ...]      default: wide narrow mem
#   bench/crawl.sh --surface [SCENARIO ...]      default: wide narrow
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
# --surface (issue #29): the surface beyond tools/list, on against off. Every scenario's fleet
# serves `--surface beside-tools` (each endpoint's own tool set, and prompts, two resources
# over two pages, a template, a card at the host's /.well-known/mcp/server-card.json and cache
# hints); toolmark crawls it with TOOLMARK_CRAWL_SURFACE=false and TOOLMARK_CRAWL_SECOND_LOOK=false
# (`tools`, the tools-only crawl) and with its defaults (`surface`: the surface and the second
# look, at a remote's first observation and then one crawl day in 7 each), each on its own fresh fleet with the same
# arguments and seed, REPEAT times (default 1) in turn: tools, surface, tools, surface, …
# HISTOR is not run (it reads tools only). The fleet's exit line counts the requests by kind
# and each host's peak of requests in flight (`peakInFlight`), against the per-host limit
# (PER_HOST, default 2 as in `crawl.per_host`'s default, passed to both crawls). A session's
# `DELETE` is sent after the observation gives its place back, so a session-era host may see
# up to 2 × PER_HOST requests at once; the `-stateless` scenarios (wide-stateless, …) serve
# `--surface beside-tools-stateless` instead (2026-07-28 stateless requests, no session and
# so no `DELETE`): there every request is inside an observation and the peak is the limit.
# What the index recorded of each surface kind is kept in NAME.kinds.json. The `-delta`
# scenarios (wide-delta, …) measure the daily run: each mode crawls twice into one data
# directory (one fleet) and the second run, a delta day, is measured; the fleet's counts after
# the first crawl are the first line of its requests file (SIGUSR1).
#
# Each crawler gets a fresh standin-fleet process with the same arguments and seed (the same
# latencies, tool sets and registry items; only the ports differ), so the fleet's own timing
# (first request in, last answer out: `activeSeconds` in fleet-*.requests.json) is that
# crawler's network phase.
#
# Environment: HISTOR_PYTHON (default: scripts/histor-venv's interpreter), OUT (default
# target/bench-crawl/<UTC time>), SEED (default 1), SKIP_HISTOR=1 to run toolmark only;
# with --surface, REPEAT (default 1), PER_HOST (default 2) and SECOND_LOOK (default true;
# false: the surface crawl makes no second look, to measure the surface alone).
# Every run's raw output (fleet line, toolmark report, /usr/bin/time -v, HISTOR JSON) stays in
# OUT; the table is printed at the end and written to OUT/summary.md.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seed="${SEED:-1}"
out="${OUT:-$root/target/bench-crawl/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
surface=0
if [ "${1:-}" = --surface ]; then
    surface=1
    shift
fi
repeat="${REPEAT:-1}"
per_host="${PER_HOST:-2}"
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
    if [ "$surface" = 1 ]; then
        scenarios=(wide narrow)
    else
        scenarios=(wide narrow mem)
    fi
fi

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

if [ "${SKIP_HISTOR:-0}" != 1 ] && [ "$surface" = 0 ]; then
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

# The fleet's counts so far as one more line in its requests file (SIGUSR1; it serves on): a
# delta scenario's first crawl, so that the second one's requests are the difference.
fleet_counts_now() {
    local before
    before="$(grep -c '^{' "$fleet_out" || true)"
    kill -USR1 "$fleet_pid"
    for _ in $(seq 1 100); do
        [ "$(grep -c '^{' "$fleet_out" || true)" -gt "$before" ] && return 0
        sleep 0.1
    done
    echo "crawl.sh: standin-fleet printed no counts on SIGUSR1" >&2
    exit 1
}

# The machine's load just before a run (other jobs share this VM).
note_load() {
    cut -d' ' -f1-3 /proc/loadavg >"$1"
}

# run_toolmark DIR NAME [VAR=VALUE …]: one `toolmark crawl` of $registry into DIR/NAME-data,
# its report, /usr/bin/time -v, stderr, load and start/end times in DIR/NAME*.
run_toolmark() {
    local dir="$1" name="$2"
    shift 2
    echo "  toolmark crawl ($name) …" >&2
    note_load "$dir/$name.load"
    date +%s.%N >"$dir/$name.start"
    env "$@" /usr/bin/time -v -o "$dir/$name.time" \
        "$toolmark" crawl --registry "$registry" --data "$dir/$name-data" --allow-private \
        --report "$dir/$name-report.json" 2>"$dir/$name.err" </dev/null
    date +%s.%N >"$dir/$name.end"
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
    base="${scenario%-stateless}"
    base="${base%-onecert}"
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
    if [ "$surface" = 1 ]; then
        case "$scenario" in
            wide | narrow | mem | onehost | *-delta) served=beside-tools ;;
            *-stateless) served=beside-tools-stateless ;;
            *) echo "crawl.sh: --surface runs wide, narrow, mem, onehost, each also -stateless or -delta" >&2; exit 2 ;;
        esac
        fleet_args+=(--surface "$served" --per-host-limit "$per_host")
        for k in $(seq 1 "$repeat"); do
            for mode in tools surface; do
                name="$mode-$k"
                start_fleet "$dir" "$name" "${fleet_args[@]}"
                # `tools`: tools only (no surface, no second look); `surface`: toolmark's
                # defaults (the surface and the second look, each at a remote's first
                # observation and then one crawl day in 7, rotating by URL).
                read_surface=true
                [ "$mode" = tools ] && read_surface=false
                # SECOND_LOOK=false: the surface alone (the second look off in both crawls).
                second_look=$read_surface
                [ "${SECOND_LOOK:-true}" = false ] && second_look=false
                crawl_env=(TOOLMARK_CRAWL_SURFACE="$read_surface" TOOLMARK_CRAWL_SECOND_LOOK="$second_look"
                    TOOLMARK_CRAWL_PER_HOST="$per_host")
                if [ "$scenario" != "${scenario%-delta}" ]; then
                    # The daily run: a first crawl in the same mode fills the data directory,
                    # the measured one is the next day's delta.
                    crawl_env+=(TOOLMARK_HARVEST=delta)
                    run_toolmark "$dir" "$name" "${crawl_env[@]}"
                    for f in time start end load err; do mv "$dir/$name.$f" "$dir/$name-day1.$f"; done
                    mv "$dir/$name-report.json" "$dir/$name-day1-report.json"
                    fleet_counts_now
                fi
                run_toolmark "$dir" "$name" "${crawl_env[@]}"
                stop_fleet
                # What the index recorded of each surface kind: read (a digest) or its status.
                python3 -c 'import json, sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT kind, status, count(*) FROM observation_kinds GROUP BY kind, status")
print(json.dumps({kind + " " + (status or "read"): n for kind, status, n in rows}))' \
                    "$dir/$name-data/index.sqlite" >"$dir/$name.kinds.json"
                rm -rf "$dir/$name-data"
            done
        done
        continue
    fi
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
        run_toolmark "$dir" toolmark "${tm_env[@]}"
        mv "$dir/toolmark-report.json" "$dir/toolmark-day1-report.json"
    fi
    run_toolmark "$dir" toolmark "${tm_env[@]}"
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

if [ "$surface" = 1 ]; then
    python3 bench/crawl_summary.py --surface "$out" "${scenarios[@]}" | tee "$out/summary.md"
else
    python3 bench/crawl_summary.py "$out" "${scenarios[@]}" | tee "$out/summary.md"
fi
