#!/usr/bin/env bash
# The cluster's daily crawl at the registry's real size (issue #27, "Registry at real size").
#
#   bench/cluster_crawl.sh [WORKERS ...]        default: 1 2
#
# bench/registry_60k.py writes a 60,000-entry registry shaped like the December 2025 snapshots;
# `standin-fleet --items` serves it through the registry stand-in and serves every remote in it
# with a stand-in MCP server over TLS on loopback (one address per host name; the crawl reaches
# them through `crawl.resolve` pins and trusts the fleet's throwaway CA through SSL_CERT_FILE).
# Latency of every endpoint drawn uniformly from 50–500 ms, applied to every request, as in
# bench/crawl.sh. Packages are listed (the harvest pages them) but not swept: the sandbox sweep
# is not part of this bench.
#
# For each WORKERS count, a fresh database of the PostgreSQL (TOOLMARK_TEST_POSTGRES, else
# scripts/postgres) and a fresh key prefix of the bucket (TOOLMARK_TEST_S3*, else
# scripts/seaweedfs), a fresh fleet, one sequencer and WORKERS workers; then
# `toolmark scheduler --enqueue-now` enqueues one run (a full harvest at the registry's rate,
# 1 request/s, bursts of 5), and the run is timed from the scheduler's start until every job
# of the run is finished (done, failed or abandoned) and every hand-off is taken by the
# sequencer (the queue's counts, polled each second). Every role runs under /usr/bin/time -v:
# its CPU (user + sys) and peak RSS. The politeness bound (see docs/benchmarks.md) comes from
# the fleet's line (`bounds`) and the harvest's page count.
#
# Environment: OUT (default /work/bench/crawlbench/<UTC time>, large: the registry is 33 MB),
# SEED (default 1), ENTRIES (default 60000). Raw output stays in OUT; the table goes to
# OUT/summary.md and stdout.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seed="${SEED:-1}"
entries="${ENTRIES:-60000}"
out="${OUT:-/work/bench/crawlbench/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 2)

for tool in /usr/bin/time /usr/lib/postgresql/15/bin/psql; do
    [ -x "$tool" ] || { echo "cluster_crawl.sh: $tool is missing" >&2; exit 1; }
done
psql=/usr/lib/postgresql/15/bin/psql

pg="${TOOLMARK_TEST_POSTGRES:-$(scripts/postgres)}"
if [ -z "${TOOLMARK_TEST_S3:-}" ]; then
    eval "$(scripts/seaweedfs env)"
fi
export AWS_ENDPOINT_URL="$TOOLMARK_TEST_S3" AWS_ACCESS_KEY_ID="$TOOLMARK_TEST_S3_ACCESS_KEY_ID" \
    AWS_SECRET_ACCESS_KEY="$TOOLMARK_TEST_S3_SECRET_ACCESS_KEY" AWS_ALLOW_HTTP=true AWS_REGION=us-east-1
unset TOOLMARK_STORAGE_HEAD TOOLMARK_STORAGE_OBJECTS TOOLMARK_CONFIG TOOLMARK_DATA

if [ ! -s "$out/registry/items.json" ]; then
    python3 bench/registry_60k.py "$out/registry" --entries "$entries" --seed "$seed"
fi

if [ -z "${SKIP_BUILD:-}" ]; then
    echo "building …" >&2
    cargo build --release -p toolmark -p toolmark-standins >&2
fi
{
    git rev-parse HEAD 2>/dev/null || true
    git status --short 2>/dev/null || true
    rustc --version
    nproc
} >"$out/version.txt"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
toolmark="$target_dir/release/toolmark"
fleet_bin="$target_dir/release/standin-fleet"

# Processes started here: the fleet, and each role's /usr/bin/time (SIGTERM goes to the role
# under it, so that time writes its report when the role exits).
pids=()
stop_all() {
    for p in "${pids[@]}"; do
        children="$(ps -o pid= --ppid "$p" 2>/dev/null || true)"
        if [ -n "$children" ]; then
            kill -TERM $children 2>/dev/null || true
        else
            kill -TERM "$p" 2>/dev/null || true
        fi
    done
    for p in "${pids[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    pids=()
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# sql DBURL QUERY: one value.
sql() { "$psql" "$1" -XAtqc "$2"; }

for n in "${counts[@]}"; do
    dir="$out/workers-$n"
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "== $n worker(s)" >&2
    db="crawlbench_$(date -u +%Y%m%d%H%M%S)_$n"
    sql "$pg" "CREATE DATABASE $db" >/dev/null
    dburl="${pg%/*}/$db"
    objects="s3://$TOOLMARK_TEST_S3_BUCKET/crawlbench/$db"

    # The fleet: the registry and its remotes. Its CPU is read from /proc before it stops.
    "$fleet_bin" --items "$out/registry/items.json" --pins-out "$dir/crawl.toml" \
        --ca-out "$dir/ca.pem" --seed "$seed" --min-ms 50 --max-ms 500 \
        --cluster-concurrency 256 --cluster-concurrency 512 \
        >"$dir/fleet.json" 2>"$dir/fleet.requests.json" &
    fleet=$!
    pids+=("$fleet")
    for _ in $(seq 1 1200); do
        [ -s "$dir/fleet.json" ] && break
        kill -0 "$fleet" 2>/dev/null || { echo "standin-fleet exited: $(cat "$dir/fleet.requests.json")" >&2; exit 1; }
        sleep 0.1
    done
    registry="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["registry"])' "$dir/fleet.json")"
    mkdir -p "$dir/empty-cert-dir"

    # role NAME DATA [ENV …] -- ARGS: a role under /usr/bin/time -v, over this run's stores.
    role() {
        local name="$1" data="$2"
        shift 2
        local envs=()
        while [ "$1" != -- ]; do envs+=("$1"); shift; done
        shift
        exec env "${envs[@]}" /usr/bin/time -v -o "$dir/$name.time" \
            "$toolmark" "$@" --config "$dir/crawl.toml" --data "$dir/$data" \
            --head "$dburl" --objects "$objects" --registry "$registry" --listen 127.0.0.1:0 \
            2>"$dir/$name.err" </dev/null
    }
    role sequencer sequencer RUST_LOG=info -- sequencer &
    pids+=($!)
    for _ in $(seq 1 600); do
        grep -q "sequencer: log" "$dir/sequencer.err" 2>/dev/null && break
        sleep 0.1
    done
    for w in $(seq 1 "$n"); do
        role "worker-$w" "worker-$w" RUST_LOG=info SSL_CERT_FILE="$dir/ca.pem" \
            SSL_CERT_DIR="$dir/empty-cert-dir" -- worker &
        pids+=($!)
    done
    sleep 2
    cut -d' ' -f1-3 /proc/loadavg >"$dir/load.start"
    date +%s.%N >"$dir/start"
    (role scheduler scheduler -- scheduler --enqueue-now >"$dir/scheduler.out")
    date +%s.%N >"$dir/enqueued"
    total="$(sql "$dburl" "SELECT count(*) FROM queue_jobs")"
    # Finished: no job open, every hand-off taken.
    while :; do
        row="$(sql "$dburl" "SELECT (SELECT count(*) FROM queue_jobs WHERE state IN ('queued','claimed')), (SELECT count(*) FROM queue_handoff WHERE NOT taken)")"
        if [ "$row" = "0|0" ]; then
            break
        fi
        echo "$(date +%s) $row" >>"$dir/progress"
        sleep 1
    done
    date +%s.%N >"$dir/end"
    cut -d' ' -f1-3 /proc/loadavg >"$dir/load.end"
    sql "$dburl" "SELECT state, count(*), sum(claims), max(attempt) FROM queue_jobs GROUP BY state" >"$dir/jobs"
    sql "$dburl" "SELECT count(*) FROM queue_handoff" >"$dir/handoffs"
    awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$fleet/stat" >"$dir/fleet.cpu" 2>/dev/null || true
    stop_all
    echo "$total" >"$dir/total"
    "$toolmark" log verify "$objects/log/public" >"$dir/verify" 2>&1 || true
    sql "$pg" "DROP DATABASE $db" >/dev/null || true
done

python3 bench/cluster_crawl_summary.py "$out" "${counts[@]}" | tee "$out/summary.md"
