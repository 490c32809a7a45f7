#!/usr/bin/env bash
# The peer comparison for the rule set (issue #28): toolmark's `toolmark scan` beside WARDEN's
# static scan (npm @aimarket/warden 0.5.0, StaticScanGate, the scanner HISTOR uses), in one run,
# over the labelled corpus (toolset/tests/fixtures/rules/): per class recall on the poisoned
# files, false positives on the clean real tools and instructions, and the speed of both on a
# 1,000-tool set and on every dev clean tool. Prints machine facts, versions and Markdown tables.
#
#   bench/rules.sh [TOOLMARK_BIN] [CORPUS_DIR]
#
# TOOLMARK_BIN (or env TOOLMARK_BIN) defaults to target/release/toolmark in the repository;
# CORPUS_DIR (or env RULES_CORPUS) to toolset/tests/fixtures/rules. WARDEN is installed by
# scripts/warden-node unless TOOLMARK_WARDEN_DIR names an installed copy. RULES_BENCH_REPS,
# RULES_BENCH_COPIES and RULES_BENCH_WARDEN_ITERATIONS tune the speed runs (3, 4, 50).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-${TOOLMARK_BIN:-$root/target/release/toolmark}}
corpus=${2:-${RULES_CORPUS:-$root/toolset/tests/fixtures/rules}}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
corpus=$(cd "$corpus" && pwd)
[ -x "$bin" ] || { echo "rules.sh: no toolmark binary at $bin (cargo build --release)" >&2; exit 1; }
warden=${TOOLMARK_WARDEN_DIR:-$("$root/scripts/warden-node")}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "## toolmark rule set vs WARDEN static scan"
echo
echo "* date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "* machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "* toolmark: $("$bin" --version 2>/dev/null || echo "$bin")"
node "$root/bench/rules_warden.mjs" "$warden" ruleset | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
rs = r["ruleset"]
print("* WARDEN: %s %s, static-scan ruleset v%s %s (%d rules; scans name, description, inputSchema)"
      % (r["package"], r["version"], rs["version"], rs["digest"], r["rules"]))'
echo "* corpus: $corpus ($(cd "$corpus" && wc -l poisoned*.jsonl clean*.jsonl | awk '$2!="total"{printf "%s%s %s", s, $2, $1; s=", "}'))"
echo
python3 "$root/bench/rules_summary.py" "$bin" "$warden" "$corpus" "$work"
