#!/usr/bin/env python3
"""The peer comparison behind bench/rules.sh: toolmark's rule set (`toolmark scan`) beside WARDEN's
static scan (bench/rules_warden.mjs) over the labelled rules corpus, and the speed of both.

  rules_summary.py TOOLMARK_BIN WARDEN_DIR CORPUS_DIR WORK_DIR

Writes every corpus entry to WORK_DIR as a file `toolmark scan` reads (a bare tool object, or an
initialize result {"instructions": ...}), scans them all with one `toolmark scan --json` per corpus
file, runs WARDEN over the same entries, and prints Markdown tables."""
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict

POISONED = ["poisoned.jsonl", "poisoned-heldout.jsonl", "poisoned-fresh.jsonl",
            "poisoned-blind.jsonl", "poisoned-blind4.jsonl", "poisoned-train5.jsonl",
            "poisoned-blind5.jsonl"]
CLEAN = ["clean.jsonl", "clean-heldout.jsonl", "clean-fresh.jsonl", "clean-blind.jsonl",
         "clean-blind4.jsonl", "clean-train.jsonl", "clean-topics.jsonl", "clean-blind5.jsonl"]
INSTRUCTIONS = ["clean-instructions.jsonl", "clean-instructions-fresh.jsonl",
                "clean-instructions-blind.jsonl", "clean-instructions-blind4.jsonl",
                "clean-instructions-train.jsonl", "clean-instructions-blind5.jsonl"]
CLASSES = [
    "hidden-instructions", "cross-tool-shadowing", "secret-request", "exfiltration",
    "invisible-unicode", "destructive-command", "safety-override", "tool-preference",
    "covert-collection", "harmful-purpose",
]
BENCH = os.path.dirname(os.path.abspath(__file__))


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def pct(n, d):
    return "–" if d == 0 else f"{100.0 * n / d:.1f}%"


def toolmark_scan(binary, files):
    """One `toolmark scan --json` over `files` (in chunks); {path: report} and stderr lines."""
    reports, errors = {}, []
    for i in range(0, len(files), 400):
        chunk = files[i:i + 400]
        p = subprocess.run([binary, "scan", *chunk, "--json"], capture_output=True, text=True)
        for line in p.stdout.splitlines():
            r = json.loads(line)
            reports[r["file"]] = r
        errors += [l for l in p.stderr.splitlines() if l.strip()]
    return reports, errors


def warden_classify(warden_dir, paths):
    out = subprocess.run(
        ["node", os.path.join(BENCH, "rules_warden.mjs"), warden_dir, "classify", *paths],
        capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        r = json.loads(line)
        res[(r["file"], r["id"])] = r
    return res


def unique_set(entries):
    """The tools of `entries` as one tools/list result; a repeated name gets `_2`, `_3`, ...
    (a set's names are unique), everything else is the real tool unchanged."""
    seen, tools = Counter(), []
    for e in entries:
        t = dict(e["tool"])
        seen[t["name"]] += 1
        if seen[t["name"]] > 1:
            t["name"] = f'{t["name"]}_{seen[t["name"]]}'
        tools.append(t)
    return {"tools": tools}


def wall(cmd, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    binary, warden_dir, corpus, work = sys.argv[1:5]
    reps = int(os.environ.get("RULES_BENCH_REPS", "3"))
    copies = int(os.environ.get("RULES_BENCH_COPIES", "4"))
    w_iter = int(os.environ.get("RULES_BENCH_WARDEN_ITERATIONS", "50"))

    data = {name: load(os.path.join(corpus, name)) for name in POISONED + CLEAN + INSTRUCTIONS}

    # ---- detection: both scanners over every entry
    tm = {}
    errors = []
    for name, entries in data.items():
        d = os.path.join(work, "entries", name.removesuffix(".jsonl"))
        os.makedirs(d, exist_ok=True)
        paths = {}
        for e in entries:
            p = os.path.join(d, e["id"] + ".json")
            doc = e["tool"] if "tool" in e else {"instructions": e["instructions"]}
            with open(p, "w", encoding="utf-8") as f:
                json.dump(doc, f, ensure_ascii=False)
            paths[p] = e["id"]
        reports, errs = toolmark_scan(binary, list(paths))
        errors += errs
        for p, r in reports.items():
            if p in paths:
                tm[(name, paths[p])] = r
    wd = warden_classify(warden_dir, [os.path.join(corpus, n) for n in data])

    first = next(iter(tm.values()), {})
    rules_id = first.get("rules", "?")
    # The digest, when the scan output carries one (toolmark-rules/1's `scan --json` gives the id).
    digests = {k: v for k, v in first.items() if "digest" in k.lower()}
    if digests:
        rules_id += " " + " ".join(f"{k}={v}" for k, v in digests.items())

    def tm_hit(name, e):
        r = tm.get((name, e["id"]))
        if r is None:
            return None
        return (len(r["matches"]) > 0 or r.get("block", 0) + r.get("advise", 0) > 0,
                r.get("block", 0) > 0 or any(m["tier"] == "block" for m in r["matches"]))

    def wd_hit(name, e):
        r = wd[(name, e["id"])]
        return (r["any"], r["block"])

    print(f"toolmark rule set (from `scan --json`): {rules_id}")
    if errors:
        print(f"toolmark scan could not read {len(errors)} entries:")
        for l in errors[:10]:
            print(f"    {l}")
    print()

    print("### Poisoned entries: recall (detected = any match; blocked = a block-tier match)")
    print()
    print("WARDEN has no instructions surface: an `instructions` entry is given to WARDEN as the "
          "description of a tool with an empty name; toolmark reads it as an initialize result "
          "`{\"instructions\": …}` (field `$['instructions']`).")
    print()
    for name in POISONED:
        print(f"**{name}**")
        print()
        print("| class | entries | toolmark detected | toolmark blocked | toolmark recall | "
              "WARDEN detected | WARDEN blocked | WARDEN recall |")
        print("|---|--:|--:|--:|--:|--:|--:|--:|")
        rows = defaultdict(lambda: [0] * 5)
        for e in data[name]:
            t = tm_hit(name, e) or (False, False)
            w = wd_hit(name, e)
            for key in (e["class"], "**all**") + (("*instructions entries*",) if "instructions" in e else ()):
                r = rows[key]
                r[0] += 1
                r[1] += t[0]; r[2] += t[1]; r[3] += w[0]; r[4] += w[1]
        for key in CLASSES + ["*instructions entries*", "**all**"]:
            if key not in rows:
                continue
            n, td, tb, wdn, wb = rows[key]
            print(f"| {key} | {n} | {td} | {tb} | {pct(td, n)} | {wdn} | {wb} | {pct(wdn, n)} |")
        print()

    print("### Clean real tools and instructions: false positives")
    print()
    print("| file | texts | toolmark any match | toolmark block | toolmark FP rate | "
          "WARDEN any match | WARDEN block | WARDEN FP rate (any) | WARDEN FP rate (block) |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    wcodes = Counter()
    tcodes = Counter()
    for name in CLEAN + INSTRUCTIONS:
        groups = [(name, data[name])]
        if name in CLEAN:
            groups.append((f"{name} (`hard`)", [e for e in data[name] if e.get("hard")]))
        for label, entries in groups:
            n = len(entries)
            ta = tb = wa = wb = 0
            for e in entries:
                t = tm_hit(name, e) or (False, False)
                w = wd_hit(name, e)
                ta += t[0]; tb += t[1]; wa += w[0]; wb += w[1]
                if label == name:
                    wcodes.update(wd[(name, e["id"])]["codes"])
                    r = tm.get((name, e["id"]))
                    if r:
                        tcodes.update(f'{m["tier"]}:{m["code"]}' for m in r["matches"])
            print(f"| {label} | {n} | {ta} | {tb} | {pct(ta, n)} | {wa} | {wb} | {pct(wa, n)} | {pct(wb, n)} |")
    print()
    print("WARDEN's rules on the clean texts (texts with at least one finding of the code): "
          + ", ".join(f"{c} {n}" for c, n in wcodes.most_common()))
    print()
    print("toolmark's rules on the clean texts: "
          + (", ".join(f"{c} {n}" for c, n in tcodes.most_common()) or "none"))
    print()

    # ---- speed
    sets = os.path.join(work, "sets")
    os.makedirs(sets, exist_ok=True)
    clean = data["clean.jsonl"]

    def write(name, doc):
        path = os.path.join(sets, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False)
        return path

    one = write("real-1000", unique_set(clean[:1000]))
    by_server = defaultdict(list)
    for e in clean:
        by_server[e["server"]].append(e)
    server_docs = [unique_set(v) for _, v in sorted(by_server.items())]
    server_files = [write(f"server-{i:03d}", d) for i, d in enumerate(server_docs)]
    group = write("clean-dev-by-server", {"sets": server_docs})
    empty = write("empty", {"tools": []})
    tiny = write("one-tool", {"tools": [clean[0]["tool"]]})

    # How much of the 1,000-tool set toolmark's scan reads (it stops at its per-scan limit).
    r = json.loads(subprocess.run([binary, "scan", one, "--json"], capture_output=True,
                                  text=True).stdout)
    # The match list is capped (`truncated` counts the rest), so count from `advise`.
    cut = sum(m["code"] == "scan-truncated" for m in r["matches"])
    chars = sum(len(json.dumps(t, ensure_ascii=False)) for t in unique_set(clean[:1000])["tools"])
    cut_note = (f"toolmark does NOT read all of it: the scan stops at its per-scan character "
                f"limit (the tools' JSON is {chars:,} characters) and reports {r['advise']:,} "
                f"advise matches ({r['block']} block), `scan-truncated` ones for the texts cut or "
                f"not read; so its time is the time of reading the part within the limit"
                ) if cut else "toolmark reads the whole set (no `scan-truncated` match)"
    server_cut = 0
    for i in range(0, len(server_files), 400):
        out = subprocess.run([binary, "scan", *server_files[i:i + 400], "--json"],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            server_cut += any(m["code"] == "scan-truncated" for m in json.loads(line)["matches"])

    # toolmark: a process scanning the file list k times minus the same process scanning it
    # once, divided by k - 1: the per-pass cost without process start and the rule set's
    # one-time compilation (measured apart: one one-tool set minus an empty set).
    def per_pass(files, k):
        t1 = wall([binary, "scan", *files], reps)
        tk = wall([binary, "scan", *(files * k)], reps)
        return (tk - t1) / (k - 1) * 1000

    startup = (wall([binary, "scan", tiny], reps) - wall([binary, "scan", empty], reps)) * 1000
    tm_one = per_pass([one], copies)
    tm_servers = per_pass(server_files, 2)
    out = subprocess.run(
        ["node", os.path.join(BENCH, "rules_warden.mjs"), warden_dir, "speed", str(w_iter),
         one, group],
        capture_output=True, text=True, check=True).stdout
    w_speed = {json.loads(l)["file"].removesuffix(".json"): json.loads(l) for l in out.splitlines()}
    node_version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()

    print("### Speed (medians)")
    print()
    print(f"toolmark: process wall time of `toolmark scan` over the set file(s) repeated k times "
          f"minus the same over them once, ÷ (k − 1) (k = {copies} for the 1,000-tool set, 2 for "
          f"the per-server sets): file read, parse into a ToolSet, scan, text report; median of "
          f"{reps} runs each. Not included: its one-time start (process start plus compiling the "
          f"rule set on the first scan), {startup:.0f} ms (a one-tool set minus an empty set). "
          f"WARDEN: `StaticScanGate.evaluate` on the already parsed set(s), `performance.now()`, "
          f"median of {w_iter} iterations after 3 warm-up passes, Node {node_version}.")
    print()
    print("| set | tools | toolmark ms | toolmark µs/tool | WARDEN ms | WARDEN µs/tool |")
    print("|---|--:|--:|--:|--:|--:|")
    rows = [
        ("first 1,000 tools of clean.jsonl as one set", 1000, tm_one, w_speed["real-1000"]),
        (f"every tool of clean.jsonl, as its {len(server_docs)} servers' sets", len(clean),
         tm_servers, w_speed["clean-dev-by-server"]),
    ]
    for label, n, ms, w in rows:
        wm = w["median_ms"]
        print(f"| {label} | {n} | {ms:.1f} | {1000 * ms / n:.1f} | {wm:.1f} | {1000 * wm / n:.1f} |")
    print()
    print(f"The 1,000-tool set: {cut_note}. Per-server sets with a `scan-truncated` match: "
          f"{server_cut} of {len(server_docs)}. A repeated name in a set gets a `_2`, `_3` … suffix "
          f"(a set's names are unique); every other byte is the real tool.")


if __name__ == "__main__":
    main()
