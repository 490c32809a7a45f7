#!/usr/bin/env bash
# Digest benchmark, ours and HISTOR's side by side on the same bytes; prints a Markdown table.
#
#   bench/run.sh              # everything (about 4 minutes on 2 cores)
#   QUICK=1 bench/run.sh      # shorter criterion runs (noisier)
#
# HISTOR_PYTHON names a Python with aimarket-histor 0.4.2; when unset, scripts/histor-venv makes
# (or reuses) .venv/histor. Inputs: the okta fixture (108 tools) and the generated 5,000-tool set
# (toolset/benches/support/realistic.rs), written to <target>/tmp/tools-5000.json.
# Ours: criterion (toolset/benches/digest.rs), from bytes: parse, parse + MTL/1, parse + full.
# HISTOR: bench/histor_digest.py, json.loads + tool_set_digest (and its crawler's parse_json).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

python="${HISTOR_PYTHON:-}"
if [ -z "$python" ]; then
    python="$(scripts/histor-venv)"
fi

target="$(cargo metadata --format-version 1 --no-deps \
    | "$python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
okta="$root/toolset/tests/fixtures/corpus/docker-mcp-registry/okta-mcp-server.tools.json"
gen="$target/tmp/tools-5000.json"
out="$target/bench"
mkdir -p "$out"

echo "== generating the 5,000-tool set" >&2
gen_line="$(cargo run --quiet --release -p toolmark-toolset --example gen_toolset -- "$gen" 5000)"
echo "$gen_line" >&2
ours_gen_sri="$(sed -n 's/.*MTL\/1 \(sha256-[^,]*\),.*/\1/p' <<<"$gen_line")"

echo "== ours: cargo bench (criterion)" >&2
bench_args=()
if [ -n "${QUICK:-}" ]; then
    bench_args=(--warm-up-time 1 --measurement-time 3)
fi
cargo bench --quiet -p toolmark-toolset --bench digest -- "${bench_args[@]}" >&2

echo "== HISTOR: json.loads + tool_set_digest (timeit)" >&2
"$python" bench/histor_digest.py "okta=$okta" "gen5000=$gen" | tee "$out/histor.jsonl" >&2

"$python" - "$target/criterion" "$out/histor.jsonl" "$okta" "$gen" "$ours_gen_sri" <<'PY'
import json, os, statistics, sys

criterion, histor_path, okta, gen, ours_gen_sri = sys.argv[1:]
sizes = {"okta": os.path.getsize(okta), "gen5000": os.path.getsize(gen)}
tools = {"okta": 108, "gen5000": 5000}

def ours(bench, name):
    # Per-iteration times from criterion's raw samples: best and median over samples.
    with open(os.path.join(criterion, "digest", bench, name, "new", "sample.json")) as f:
        s = json.load(f)
    per = [t / i * 1e-9 for t, i in zip(s["times"], s["iters"])]
    return min(per), statistics.median(per)

histor = {}
meta = {}
with open(histor_path) as f:
    for line in f:
        rec = json.loads(line)
        if "meta" in rec:
            meta = rec["meta"]
            continue
        histor[(rec["impl"], rec["input"])] = (rec["best_s"], rec["median_s"])
        if rec["input"] == "gen5000":
            histor_gen_sri = rec["sri"]

if histor_gen_sri != ours_gen_sri:
    sys.exit(f"MTL/1 digests of the generated set differ: ours {ours_gen_sri}, HISTOR {histor_gen_sri}")

def fmt_t(s):
    return f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"

print()
print(f"HISTOR {meta.get('histor')} (awr {meta.get('awr')}, Python {meta.get('python')}); "
      "time per set is the median over samples (best in brackets); MB = 10^6 bytes of input.")
print(f"MTL/1 digest of gen5000, both sides: {histor_gen_sri}")
print()
print("| input | implementation | time per set | MB/s | × HISTOR |")
print("| --- | --- | ---: | ---: | ---: |")
for name in ("okta", "gen5000"):
    mb = sizes[name] / 1e6
    base = histor[("histor", name)][1]
    label = f"{name} ({tools[name]} tools, {sizes[name] / 1e6:.2f} MB)"
    rows = [
        ("ours: parse + MTL/1 digest", ours("mtl1", name)),
        ("ours: parse + full digest", ours("full", name)),
        ("ours: parse only", ours("parse", name)),
        ("HISTOR: json.loads + tool_set_digest", histor[("histor", name)]),
        ("HISTOR: crawler parse_json + tool_set_digest", histor[("histor-crawler", name)]),
    ]
    for impl, (best, median) in rows:
        print(f"| {label} | {impl} | {fmt_t(median)} ({fmt_t(best)}) | "
              f"{mb / median:.1f} ({mb / best:.1f}) | {base / median:.1f} |")
PY
