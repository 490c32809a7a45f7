#!/usr/bin/env bash
# A replica's follower and a new replica's join from an index snapshot (issue #27), and
# /check on an index of that size.
#
#   bench/follow.sh [ENTRIES]        (default 1000000)
#
# 1. `cargo bench -p toolmark-index --bench follow` (index/benches/follow.rs): writes a log of
#    ENTRIES entries with the real Recorder into OUT/follow-ENTRIES/ once (a data directory:
#    log/, blobs/ with one document per observation, index.sqlite; kept for the next run), then
#    times a fresh index following it from its public files (catch-up, entries/s), publishing a
#    snapshot of that index, and a new index joining from the snapshot (every check) and
#    following. The snapshot goes to the test bucket when TOOLMARK_TEST_S3 is set
#    (scripts/seaweedfs; a fresh prefix, deleted afterwards), else to a directory.
# 2. `toolmark serve` on that data directory (the same index rows a replica derives; loopback,
#    --check-rate 0), and wrk -t2 -c64 -d20s --latency with bench/check_post.lua, every request
#    a distinct body (an endpoint of the log with its current MTL/1 digest, and a nonce): the
#    uncached /check p50/p99. Then wrk -t1 -c1 -d10s: a lone request's latency.
#
# Environment: OUT (default ${TMPDIR:-/tmp}/toolmark-follow), CARGO_TARGET_DIR as usual, STEPS
# (default "follow check": either alone runs only that step; check needs the log). Record
# `uptime` with the figures: the machine's other work shows in them.
set -euo pipefail
ENTRIES=${1:-1000000}
OUT=${OUT:-${TMPDIR:-/tmp}/toolmark-follow}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
for tool in wrk curl python3; do
    command -v "$tool" >/dev/null || { echo "follow.sh: $tool is missing" >&2; exit 1; }
done

if [ -n "${TOOLMARK_TEST_S3:-}" ]; then
    export AWS_ENDPOINT_URL=$TOOLMARK_TEST_S3 AWS_ALLOW_HTTP=true AWS_REGION=us-east-1
    export AWS_ACCESS_KEY_ID=$TOOLMARK_TEST_S3_ACCESS_KEY_ID
    export AWS_SECRET_ACCESS_KEY=$TOOLMARK_TEST_S3_SECRET_ACCESS_KEY
    export TOOLMARK_BENCH_OBJECTS=s3://$TOOLMARK_TEST_S3_BUCKET/bench-follow-$$
fi
STEPS=${STEPS:-follow check}
if [[ " $STEPS " == *" follow "* ]]; then
echo "load before: $(uptime)"
(cd "$ROOT" && TOOLMARK_BENCH_DIR=$OUT TOOLMARK_BENCH_ENTRIES=$ENTRIES \
    /usr/bin/time -f "bench: %e s wall, %U s user, %S s sys, %M KiB peak RSS" \
    cargo bench -q -p toolmark-index --bench follow)
echo "load after: $(uptime)"
fi
[[ " $STEPS " == *" check "* ]] || exit 0

DATA=$OUT/follow-$ENTRIES
(cd "$ROOT" && cargo build -q --release -p toolmark)
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/toolmark
python3 - "$DATA/index.sqlite" "$OUT/bodies.tsv" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = db.execute("SELECT target, current_mtl1 FROM targets WHERE current_mtl1 IS NOT NULL").fetchall()
with open(sys.argv[2], "w") as f:
    for endpoint, digest in rows:
        f.write(f"{endpoint}\t{digest}\n")
print(f"bodies: {len(rows)} endpoints with a current tool set")
PY
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" serve --data "$DATA" --listen "127.0.0.1:$PORT" --check-rate 0 2>"$OUT/serve.log" &
SERVE=$!
trap 'kill $SERVE 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/checkpoint" && break; sleep 0.2; done
URL=http://127.0.0.1:$PORT/api/v1/check
first=$(head -1 "$OUT/bodies.tsv")
curl -s -X POST -H 'content-type: application/json' \
    -d "{\"endpoint\":\"${first%%$'\t'*}\",\"toolSetDigest\":\"${first##*$'\t'}\"}" "$URL" \
    | grep -q '"match":"same"' || { echo "follow.sh: /check does not answer same" >&2; exit 1; }
echo "load before wrk: $(uptime)"
DISTINCT=$OUT/bodies.tsv wrk -t2 -c64 -d5s -s "$ROOT/bench/check_post.lua" "$URL" >/dev/null
DISTINCT=$OUT/bodies.tsv wrk -t2 -c64 -d20s --latency -s "$ROOT/bench/check_post.lua" "$URL"
DISTINCT=$OUT/bodies.tsv wrk -t1 -c1 -d10s --latency -s "$ROOT/bench/check_post.lua" "$URL"
echo "load after wrk: $(uptime)"
