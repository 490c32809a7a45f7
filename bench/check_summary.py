"""Summarise bench/check.sh's raw output (OUT/r<round>-<body>-<server>.wrk, .cpu, .load) as Markdown.

    python3 bench/check_summary.py OUT

Exit status 1 when any measured run had socket errors or non-2xx/3xx answers, or a check answer
was not "same".
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}
SERVERS = ("toolmark", "histor", "nginx")
LABEL = {"toolmark": "toolmark `/check`", "histor": "HISTOR 0.4.2 `/check`", "nginx": "nginx static file"}
GOAL_RPS_X_HISTOR = 20.0
GOAL_P99_MS = 2.0
GOAL_NGINX_SHARE = 0.5


def ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not m:
        raise ValueError(f"not a wrk duration: {text!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


def parse_wrk(path: Path) -> dict:
    text = path.read_text()
    out: dict = {"errors": 0, "non2xx": 0}
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    out["rps"] = float(m.group(1)) if m else 0.0
    m = re.search(r"Latency\s+([\d.]+\w+)\s+([\d.]+\w+)\s+([\d.]+\w+)", text)
    if m:
        out["avg"], out["max"] = ms(m.group(1)), ms(m.group(3))
    for pct in ("50", "75", "90", "99"):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+\w+)", text, re.M)
        out[f"p{pct}"] = ms(m.group(1)) if m else float("nan")
    m = re.search(r"(\d+) requests in ([\d.]+\w+), ([\d.]+\w+) read", text)
    if m:
        out["requests"] = int(m.group(1))
        out["seconds"] = ms(m.group(2)) / 1000
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        out["errors"] = sum(int(g) for g in m.groups())
        out["errorDetail"] = m.group(0)
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        out["non2xx"] = int(m.group(1))
    return out


def fmt_ms(v: float) -> str:
    return f"{v * 1000:.0f} µs" if v < 1 else f"{v:.2f} ms" if v < 100 else f"{v:.0f} ms"


def main() -> int:
    out = Path(sys.argv[1])
    bad = False
    runs: dict[tuple[int, str, str], dict] = {}
    for f in sorted(out.glob("r*-*-*.wrk")):
        m = re.fullmatch(r"r(\d+)-(\w+)-(toolmark|histor|nginx)\.wrk", f.name)
        if not m:
            continue
        key = (int(m.group(1)), m.group(2), m.group(3))
        run = parse_wrk(f)
        cpu = f.with_suffix(".cpu")
        run["cpu"] = float(cpu.read_text()) if cpu.exists() else float("nan")
        load = f.with_suffix(".load")
        run["load"] = load.read_text().split()[0] if load.exists() else "?"
        wrkcpu = f.with_suffix(".wrkcpu")
        try:
            run["wrkcpu"] = sum(float(x) for x in wrkcpu.read_text().split()[-2:])
        except (OSError, ValueError):
            run["wrkcpu"] = float("nan")
        busy = f.with_suffix(".busy")
        run["busy"] = float(busy.read_text()) if busy.exists() else float("nan")
        runs[key] = run
        if run["errors"] or run["non2xx"]:
            bad = True
    single: dict[tuple[str, str], dict] = {}
    for f in sorted(out.glob("c1-*-*.wrk")):
        m = re.fullmatch(r"c1-(\w+)-(toolmark|histor|nginx)\.wrk", f.name)
        if m:
            run = parse_wrk(f)
            cpu = f.with_suffix(".cpu")
            run["cpu"] = float(cpu.read_text()) if cpu.exists() else float("nan")
            single[(m.group(1), m.group(2))] = run
            if run["errors"] or run["non2xx"]:
                bad = True
    bodies = sorted({k[1] for k in runs}, key=lambda b: (b != "digest", b))
    rounds = sorted({k[0] for k in runs})
    info = json.loads((out / "bodies.json").read_text()) if (out / "bodies.json").exists() else {}
    nproc = 1
    machine = out / "machine.txt"
    if machine.exists():
        m = re.search(r"^nproc: (\d+)", machine.read_text(), re.M)
        nproc = int(m.group(1)) if m else 1

    print("| round | body | server | answer bytes | requests/s | p50 | p75 | p90 | p99 | max | requests | "
          "errors | non-2xx | server CPU s | server CPU µs per request | wrk CPU s | rest CPU s | machine busy |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: | ---: | ---: |")
    for r in rounds:
        for body in bodies:
            sizes = {}
            p = out / f"before-{body}.sizes.json"
            if p.exists():
                sizes = json.loads(p.read_text())
            for server in SERVERS:
                run = runs.get((r, body, server))
                if not run:
                    continue
                size = sizes.get(server, {}).get("bytes") if server != "nginx" else \
                    (out / "nginx" / "www" / f"check-{body}.json").stat().st_size
                per_req = run["cpu"] / run["requests"] * 1e6 if run.get("requests") else float("nan")
                rest = run["busy"] - run["cpu"] - run["wrkcpu"]
                busy_share = run["busy"] / (nproc * run["seconds"]) * 100 if run.get("seconds") else float("nan")
                print(f"| {r} | {body} | {LABEL[server]} | {size if size is not None else '?':,} | "
                      f"{run['rps']:,.0f} | {fmt_ms(run['p50'])} | {fmt_ms(run['p75'])} | "
                      f"{fmt_ms(run['p90'])} | {fmt_ms(run['p99'])} | {fmt_ms(run['max'])} | "
                      f"{run.get('requests', 0):,} | {run['errors']} | {run['non2xx']} | {run['cpu']:.1f} | "
                      f"{per_req:,.0f} | {run['wrkcpu']:.1f} | {rest:.1f} | {busy_share:.0f}% |")
    print()
    print("| round | body | toolmark ÷ HISTOR requests/s (goal ≥ 20×) | toolmark p99 (goal ≤ 2 ms) | "
          "toolmark ÷ nginx requests/s (goal ≥ 50%) |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for r in rounds:
        for body in bodies:
            t, h, n = (runs.get((r, body, s)) for s in SERVERS)
            if not t:
                continue
            vs_h = f"{t['rps'] / h['rps']:.1f}×" if h and h["rps"] else "–"
            vs_n = f"{t['rps'] / n['rps'] * 100:.0f}%" if n and n["rps"] else "–"
            ok = lambda c: "met" if c else "missed"  # noqa: E731
            print(f"| {r} | {body} | {vs_h} ({ok(h and h['rps'] and t['rps'] / h['rps'] >= GOAL_RPS_X_HISTOR)}) | "
                  f"{fmt_ms(t['p99'])} ({ok(t['p99'] <= GOAL_P99_MS)}) | "
                  f"{vs_n} ({ok(n and n['rps'] and t['rps'] / n['rps'] >= GOAL_NGINX_SHARE)}) |")
    print()
    if single:
        print("One connection (`wrk -t1 -c1 -d10s --latency`):")
        print()
        print("| body | server | requests/s | p50 | p99 | max | server CPU µs per request | errors | non-2xx |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for body in bodies:
            for server in SERVERS:
                run = single.get((body, server))
                if not run:
                    continue
                per_req = run["cpu"] / run["requests"] * 1e6 if run.get("requests") else float("nan")
                print(f"| {body} | {LABEL[server]} | {run['rps']:,.0f} | {fmt_ms(run['p50'])} | "
                      f"{fmt_ms(run['p99'])} | {fmt_ms(run['max'])} | {per_req:,.0f} | {run['errors']} | "
                      f"{run['non2xx']} |")
        print()
    if info:
        print(f"Endpoint `{info.get('endpoint')}` ({info.get('server')}, {info.get('tools')} tools, MTL/1 "
              f"`{info.get('toolSetDigest')}`); bodies: digest {info.get('bodyDigestBytes')} bytes, "
              f"tools {info.get('bodyToolsBytes')} bytes.")
    for phase in ("before", "after"):
        for body in bodies:
            p = out / f"{phase}-{body}.sizes.json"
            if p.exists():
                sizes = json.loads(p.read_text())
                print(f"* {phase}, {body}: " + "; ".join(
                    f"{who} HTTP {s.get('status')} {s.get('bytes')} bytes match={s.get('match')}"
                    + (f" signature {s['signature']}" if s.get("signature") else "")
                    for who, s in sizes.items()))
                if any(s.get("match") != "same" for s in sizes.values()):
                    bad = True
    metrics = out / "toolmark-metrics.txt"
    if metrics.exists():
        for line in metrics.read_text().splitlines():
            if line.startswith("toolmark_checks_rate_limited_total"):
                print(f"* toolmark /metrics after the runs: `{line}`")
    for (r, body, server), run in sorted(runs.items()):
        if run["errors"] or run["non2xx"]:
            print(f"* **round {r}, {body}, {server}: {run.get('errorDetail', '')}, non-2xx {run['non2xx']}**")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
