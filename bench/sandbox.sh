#!/usr/bin/env bash
# Sandbox benchmark (issue #14): seconds per package version observed in gVisor, and versions
# per hour at concurrency 2, on the real npm set scripts/mcp-servers packs (server-memory,
# server-everything, server-filesystem, server-sequential-thinking 2026.8.31) and the PyPI
# wheels it downloads (mcp-server-time 2026.10.19, mcp-server-fetch 2026.10.24), each run by
# `toolmark package observe --json --offline --find-links` (the tree from the warmed npm cache or
# the downloaded wheels: no network).
#
#   bench/sandbox.sh            RUNS=3 runs of each package one at a time, then the set twice
#                               over with two observations at a time
#
# Needs root and runsc. Environment: OUT (default target/bench-sandbox/<UTC time>), RUNS
# (default 3), TOOLMARK (default target/release/toolmark, built if missing). Every report stays
# in OUT; the table is printed and written to OUT/summary.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${RUNS:-3}
out=${OUT:-$root/target/bench-sandbox/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
servers=$(scripts/mcp-servers)
packages="$servers/packages"
toolmark=${TOOLMARK:-$root/target/release/toolmark}
if [ ! -x "$toolmark" ] || [ ! -x "$(dirname "$toolmark")/toolmark-probe" ]; then
  cargo build --release -q -p toolmark -p toolmark-probe
fi
work=$(mktemp -d /var/tmp/toolmark-bench-XXXX)
trap 'rm -rf "$work"' EXIT
args_for() { # the registry's packageArguments for the servers that need them
  case "$1" in
    *server-filesystem*) echo "--arg /home/decoy" ;;
    *) echo "" ;;
  esac
}
observe() { # tarball or wheel, report file
  # shellcheck disable=SC2046
  "$toolmark" package observe --json --offline --registry https://registry.npmjs.org/ \
    --npm-cache "$packages/npm-cache" --find-links "$packages/wheels" \
    --pip-cache "$work/pip-cache" --work "$work" $(args_for "$1") "$1" >"$2" || true
}
set_of() { # the artifacts observed
  ls "$packages"/*.tgz "$packages"/wheels/mcp_server_time-*.whl "$packages"/wheels/mcp_server_fetch-*.whl
}
{
  echo "# bench/sandbox.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r), $(runsc --version | head -n 1)"
  echo
  echo "One at a time (median of $runs runs; the steps of the median run, ms):"
  echo
  echo "| package | status | tools | findings | complete | median s | tree | install | startup | calls | grace | teardown |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$out/summary.md"
for artifact in $(set_of); do
  name=$(basename "$artifact")
  name=${name%.*}
  for i in $(seq 1 "$runs"); do
    observe "$artifact" "$out/$name.$i.json"
  done
  python3 - "$out" "$name" "$runs" >>"$out/summary.md" <<'EOF'
import json, sys, statistics
out, name, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
reports = [json.load(open(f"{out}/{name}.{i}.json")) for i in range(1, runs + 1)]
reports.sort(key=lambda r: r["elapsedMs"])
m = reports[len(reports) // 2]
t = m.get("timingsMs", {})
codes = ",".join(sorted({f["code"] for f in m["findings"]})) or "none"
print(f"| {m['package']} | {m['status']} | {len(m['tools'])} | {codes} | {m['complete']} | "
      f"{statistics.median(r['elapsedMs'] for r in reports) / 1000:.1f} | "
      + " | ".join(str(t.get(k, "-")) for k in ["tree", "install", "startup", "calls", "grace", "teardown"]) + " |")
EOF
done
# Concurrency 2: the set twice over, two observations at a time.
list=()
for artifact in $(set_of) $(set_of); do list+=("$artifact"); done
start=$(date +%s.%N)
i=0
for artifact in "${list[@]}"; do
  i=$((i + 1))
  observe "$artifact" "$out/pair.$i.json" &
  if (( i % 2 == 0 )); then wait; fi
done
wait
end=$(date +%s.%N)
python3 - "$out" "${#list[@]}" "$start" "$end" >>"$out/summary.md" <<'EOF'
import json, sys
out, n, start, end = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
ok = sum(json.load(open(f"{out}/pair.{i}.json"))["status"] == "ok" for i in range(1, n + 1))
wall = end - start
print()
print(f"Concurrency 2: {n} observations ({ok} ok) in {wall:.1f} s wall: {n / wall * 3600:.0f} versions/hour.")
EOF
cat "$out/summary.md"
