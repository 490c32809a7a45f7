#!/usr/bin/env bash
# Witness benchmark (issue #16): the same add-checkpoint requests sent to toolmark's own witness
# (`toolmark witness`) and to the independent aics-witness 0.1.0 (PyPI), one after the other on
# this machine, over loopback HTTP/1.1 keep-alive.
#
#   bench/witness.sh            STEPS=200 BATCH=100 HEARTBEATS=2000 CLIENTS=8 by default
#
# 1. `add_checkpoint_bodies` (a log example) writes a log of STEPS batches of BATCH entries and
#    the request body of each batch (old size + consistency proof + the log-signed checkpoint),
#    and the heartbeat's body (the final tree again, no proof).
# 2. Each witness starts empty, trusting that log; bench/witness_load.py sends the batches in
#    order on one connection (each a signature check, a proof check, a state transaction and a
#    cosignature), then HEARTBEATS heartbeat requests from CLIENTS clients at once.
# 3. Prints each witness's figures and its peak resident memory (VmHWM).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
STEPS=${STEPS:-200}
BATCH=${BATCH:-100}
HEARTBEATS=${HEARTBEATS:-2000}
CLIENTS=${CLIENTS:-8}
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

aics=$(scripts/aics-venv)
cargo build -q --release --bin toolmark
cargo run -q --release -p toolmark-log --example add_checkpoint_bodies -- "$work/bodies" "$STEPS" "$BATCH" >&2
vkey=$(cat "$work/bodies/vkey")
origin=${vkey%%+*}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 1 200); do
    if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),0.2)" 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "nothing listens on $1" >&2
  exit 1
}
peak() { awk '/VmHWM/ { printf "%.1f MiB", $2 / 1024 }' "/proc/$1/status"; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2/1048576 }' /proc/meminfo), $(date -u +%FT%TZ), $(git rev-parse --short HEAD)"
echo "log: $STEPS batches of $BATCH entries; heartbeats: $HEARTBEATS from $CLIENTS clients"

# toolmark witness
port=$(free_port)
target/release/toolmark witness --data "$work/tm" --listen "127.0.0.1:$port" \
  --trust "$origin=$vkey" --name bench.toolmark.example/witness >"$work/tm.log" 2>&1 &
pid=$!
pids+=("$pid")
wait_port "$port"
echo "toolmark witness: $(python3 bench/witness_load.py "http://127.0.0.1:$port" "$work/bodies" \
  --heartbeats "$HEARTBEATS" --clients "$CLIENTS") peak RSS $(peak "$pid")"
kill "$pid"

# aics-witness
port=$(free_port)
mkdir -p "$work/aics"
(cd "$work/aics" &&
  "$aics/aics-witness" init --config w.json --name bench.aics.example/witness \
    --listen "127.0.0.1:$port" --db w.db --key-file w.key >/dev/null &&
  "$aics/aics-witness" add-log --config w.json --origin "$origin" --vkey "$vkey" >/dev/null)
(cd "$work/aics" && exec "$aics/aics-witness" serve --config w.json --log-level WARNING) &
pid=$!
pids+=("$pid")
wait_port "$port"
echo "aics-witness 0.1.0: $(python3 bench/witness_load.py "http://127.0.0.1:$port" "$work/bodies" \
  --heartbeats "$HEARTBEATS" --clients "$CLIENTS") peak RSS $(peak "$pid")"
