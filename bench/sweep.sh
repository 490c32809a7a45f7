#!/usr/bin/env bash
# Package sweep benchmark (issue #14): `toolmark package sweep` over the real registry's npm
# servers (the bundled 2025-12-18 snapshot's servers with an npm package, served on loopback by
# bench/registry_replica.py and stored by one `toolmark crawl --no-dns`, whose remotes all fail
# at once), every package and its dependencies fetched from the real npm registry through a
# Verdaccio on loopback that proxies it (cold caches: on these machines the registries answer
# from an address the SSRF guard refuses, so toolmark cannot fetch from them directly), each
# version observed in gVisor: wall time, versions per hour at concurrency 2, the median seconds
# per version, and the statuses and findings seen. The sweep takes the first CAP packages by
# server name (never observed: registry order). PyPI is not in it: no proxy for it is set up
# here (bench/sandbox.sh measures the wheels).
#
#   CAP=40 bench/sweep.sh
#
# Needs root, runsc and the package registries. Environment: CAP (default 40), CONCURRENCY
# (default 2), OUT (default target/bench-sweep/<UTC time>), TOOLMARK (default
# target/release/toolmark, built if missing). Prints the summary and writes OUT/summary.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cap=${CAP:-40}
concurrency=${CONCURRENCY:-2}
out=${OUT:-$root/target/bench-sweep/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
toolmark=${TOOLMARK:-$root/target/release/toolmark}
if [ ! -x "$toolmark" ] || [ ! -x "$(dirname "$toolmark")/toolmark-probe" ]; then
  cargo build --release -q -p toolmark -p toolmark-probe
fi
work=$(mktemp -d /var/tmp/toolmark-bench-sweep-XXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 bench/registry_replica.py demo/data/mcp-insights-servers-2025-12-18T0842Z.json.gz "$port" npm &
replica=$!
verdaccio_dir=$(scripts/verdaccio)
vport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$work/verdaccio/storage"
cat >"$work/verdaccio/config.yaml" <<YAML
storage: ./storage
uplinks:
  npmjs:
    url: https://registry.npmjs.org/
    timeout: 60s
packages:
  '**':
    access: \$all
    proxy: npmjs
log: { type: stdout, format: pretty, level: warn }
YAML
"$verdaccio_dir/node_modules/.bin/verdaccio" --config "$work/verdaccio/config.yaml" \
  --listen "127.0.0.1:$vport" >"$out/verdaccio.log" 2>&1 &
verdaccio=$!
trap 'kill $replica $verdaccio 2>/dev/null; rm -rf "$work"' EXIT
until curl -sf "http://127.0.0.1:$port/v0.1/servers?limit=1" >/dev/null; do sleep 0.2; done
until curl -sf "http://127.0.0.1:$vport/-/ping" >/dev/null; do sleep 0.2; done
registry="http://127.0.0.1:$port"
"$toolmark" crawl --data "$out/data" --registry "$registry" --allow-private --no-dns \
  --registry-rate 100 --report "$out/crawl.json" >/dev/null 2>"$out/crawl.log"
start=$(date +%s.%N)
"$toolmark" package sweep --data "$out/data" --registry "$registry" --cap "$cap" \
  --concurrency "$concurrency" --work "$work/runs" --cache "$work/cache" --json \
  --npm-registry "http://127.0.0.1:$vport" --allow-private \
  >"$out/sweep.json" 2>"$out/sweep.log" || true
end=$(date +%s.%N)
python3 - "$out" "$start" "$end" "$concurrency" >"$out/summary.md" <<'PY'
import json, sqlite3, statistics, sys, collections, subprocess
out, start, end, concurrency = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
report = json.load(open(f"{out}/sweep.json"))
db = sqlite3.connect(f"file:{out}/data/index.sqlite?mode=ro", uri=True)
rows = db.execute("""SELECT p.package, p.status, p.complete, p.findings, o.elapsed_ms
                     FROM package_observations p JOIN observations o USING (entry)
                     ORDER BY p.entry""").fetchall()
wall = end - start
n = len(rows)
# Versions the sandbox ran (fetched, a tree made or tried); the registry's refusals
# (not-found, no-wheel) and our own fetch failures take no sandbox time.
unrun = {"not-found", "no-wheel", "sandbox-error"}
ran = [r for r in rows if not (r[1] in unrun and (r[4] or 0) < 1000)]
secs = sorted(r[4] / 1000 for r in ran if r[4] is not None)
statuses = collections.Counter(r[1] for r in rows)
codes = collections.Counter(f["code"] for r in rows for f in json.loads(r[3]))
runsc = subprocess.run(["runsc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
print(f"# bench/sweep.sh, {report['startedAt']}, {subprocess.getoutput('nproc')} cores, {runsc}")
print()
print(f"{report['packages']} npm/PyPI stdio packages listed; {n} versions swept at concurrency {concurrency} "
      f"in {wall:.0f} s wall ({n / wall * 3600:.0f} versions/hour), {len(ran)} of them run in the sandbox "
      f"(the rest refused by the registry: not found, no wheel): **{len(ran) / wall * 3600:.0f} sandboxed versions/hour**"
      + (f"; median {statistics.median(secs):.1f} s per sandboxed version (p90 {secs[int(0.9 * (len(secs) - 1))]:.1f} s)." if secs else "."))
print()
print("| status | versions |")
print("|---|---|")
for s, c in statuses.most_common():
    print(f"| {s} | {c} |")
print()
print(f"complete: {sum(1 for r in rows if r[2])} of {n}; findings: " + (", ".join(f"{k} {v}" for k, v in codes.most_common()) or "none"))
print()
print("| package | status | complete | s | findings |")
print("|---|---|---|---|---|")
for p, s, c, f, ms in rows:
    print(f"| {p} | {s} | {'yes' if c else 'no'} | {ms / 1000 if ms is not None else 0:.1f} | {', '.join(x['code'] + ' (' + x['phase'] + ')' for x in json.loads(f)) or '-'} |")
PY
cat "$out/summary.md"
