"""Summarise bench/crawl.sh's raw output as Markdown tables; exit 1 if any target was not `ok`.

    python3 bench/crawl_summary.py OUT_DIR SCENARIO ...

Reads, per scenario directory: fleet.json (the standin-fleet line: endpoints, hosts, bounds),
fleet-<crawler>.requests.json (the fleet's exit line: requests answered, first request in and
last answer out), <crawler>.time (`/usr/bin/time -v`), <crawler>.start/.end (`date +%s.%N`),
<crawler>.load (/proc/loadavg before the run), toolmark-report.json, and histor.json
(bench/histor_crawl.py) when HISTOR ran.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path


def gnu_time(path: Path) -> dict[str, float]:
    text = path.read_text()

    def field(label: str) -> str:
        m = re.search(rf"^\s*{re.escape(label)}: (.+)$", text, re.M)
        if not m:
            raise SystemExit(f"{path}: no {label!r}")
        return m.group(1).strip()

    wall = 0.0
    for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
        wall = wall * 60 + float(part)
    return {
        "wall": wall,
        "cpu": float(field("User time (seconds)")) + float(field("System time (seconds)")),
        "rss_mb": int(field("Maximum resident set size (kbytes)")) * 1024 / 1e6,
        "exit": int(field("Exit status")),
    }


def read_float(path: Path) -> float | None:
    try:
        return float(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def fleet_exit(path: Path) -> dict:
    """The last JSON line standin-fleet wrote to stderr."""
    try:
        lines = [ln for ln in path.read_text().splitlines() if ln.startswith("{")]
        return json.loads(lines[-1]) if lines else {}
    except OSError:
        return {}


def main() -> int:
    out = Path(sys.argv[1])
    failures = []
    rows = []
    timeline = []
    ratios = []
    daily = []
    for scenario in sys.argv[2:]:
        delta_day = scenario.endswith("-delta")
        d = out / scenario
        fleet = json.loads((d / "fleet.json").read_text())
        n = fleet["endpoints"]
        layout = f"{fleet['hosts']:,} × {fleet['perHost']}"
        if fleet["remotesPerServer"] > 1:
            layout += f" ({fleet['servers']:,} servers × {fleet['remotesPerServer']} remotes)"
        result = {}
        for crawler in ("toolmark", "histor"):
            time_path = d / f"{crawler}.time"
            if not time_path.exists():
                continue
            bound = fleet["bounds"][crawler]
            t = gnu_time(time_path)
            served = fleet_exit(d / f"fleet-{crawler}.requests.json")
            start, end = read_float(d / f"{crawler}.start"), read_float(d / f"{crawler}.end")
            load = read_float(d / f"{crawler}.load")
            if crawler == "toolmark":
                report = json.loads((d / "toolmark-report.json").read_text())
                statuses = report["totals"]
                harvest, observe = report["harvest"]["seconds"], report["observeSeconds"]
                name = "toolmark"
            else:
                h = json.loads((d / "histor.json").read_text())
                statuses = h["observations"]
                harvest, observe = h["harvestSeconds"], h["observeSeconds"]
                name = "HISTOR 0.4.2"
            # HISTOR's table holds both runs' observations; toolmark's report one run's.
            want = 2 * n if delta_day and crawler == "histor" else n
            if t["exit"] != 0 or statuses != {"ok": want}:
                failures.append(f"{scenario}: {name} exit {t['exit']}, statuses {statuses} (want {want} ok)")
            if crawler == "toolmark":
                mode = report["harvest"]["mode"]
                requests = report["harvest"]["requests"]
                if delta_day and not mode.startswith("since "):
                    failures.append(f"{scenario}: toolmark's measured run harvested {mode!r}, not a delta")
            else:
                mode, requests = "full", None
            network = served.get("activeSeconds") or float("nan")
            sim = bound.get("simulatedSeconds") or float("nan")
            result[crawler] = {"wall": t["wall"], "observe": observe, "harvest": harvest, "network": network,
                               "mode": mode, "requests": requests, "cpu": t["cpu"], "rss": t["rss_mb"],
                               "load": load}
            rows.append(
                f"| {scenario} | {n:,} | {layout} | {name} | {load if load is not None else '?'} "
                f"| {harvest:.1f} | {observe:.1f} | {network:.1f} "
                f"| {bound['seconds']:.2f} / {bound['tightSeconds']:.2f} | {sim:.2f} "
                f"| **{observe / bound['seconds']:.2f}×** | {network / bound['seconds']:.2f}× | {observe / sim:.2f}× "
                f"| {t['wall']:.1f} | {t['cpu']:.1f} | {t['rss_mb']:.0f} | {statuses.get('ok', 0):,} |"
            )
            first, last = served.get("firstRequestUnix"), served.get("lastAnswerUnix")
            if start and end and first and last:
                fleet_cpu = read_float(d / f"fleet-{crawler}.cpu")
                timeline.append(
                    f"| {scenario} | {name} | {harvest:.1f} | {first - start - harvest:.1f} "
                    f"| {last - first:.1f} | {end - last:.1f} | {end - start:.1f} "
                    f"| {fleet_cpu if fleet_cpu is not None else '?'} |"
                )
        if delta_day and "toolmark" in result and "histor" in result:
            tm, hi = result["toolmark"], result["histor"]
            daily.append(
                f"| {scenario} | {n:,} | {layout} | {tm['mode'].split(' ')[0]} ({tm['requests']} request"
                f"{'s' if tm['requests'] != 1 else ''}) | {tm['harvest']:.2f} | {tm['observe']:.1f} "
                f"| {tm['wall']:.1f} | {tm['cpu']:.1f} | {tm['rss']:.0f} "
                f"| {hi['harvest']:.1f} | {hi['observe']:.1f} | {hi['wall']:.1f} | {hi['cpu']:.1f} "
                f"| **{hi['wall'] / tm['wall']:.1f}×** |"
            )
        if "toolmark" in result and "histor" in result:
            tm, hi = result["toolmark"], result["histor"]
            ratios.append(
                f"| {scenario} | {hi['wall'] / tm['wall']:.1f}× | {hi['observe'] / tm['observe']:.1f}× "
                f"| {hi['network'] / tm['network']:.1f}× "
                f"| {(hi['wall'] - hi['harvest']) / (tm['wall'] - tm['harvest']):.1f}× |"
            )
    print("| scenario | targets | hosts × endpoints | crawler | load before | harvest s | observe s | network s "
          "| bound s (simple / tight) | policy, no overhead s | observe ÷ bound | network ÷ bound "
          "| observe ÷ policy | whole run s | CPU s | peak RSS MB | ok |")
    print("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: | ---: | ---: |")
    print("\n".join(rows))
    if ratios:
        print()
        print("| scenario | HISTOR ÷ toolmark: whole run | observe phase | network phase | whole run minus harvest |")
        print("| --- | ---: | ---: | ---: | ---: |")
        print("\n".join(ratios))
    if daily:
        print()
        print("Daily whole run (each crawler's second run over its own data; toolmark's is a delta day):")
        print()
        print("| scenario | targets | hosts × endpoints | toolmark harvest | toolmark harvest s | observe s "
              "| whole run s | CPU s | peak RSS MB | HISTOR harvest s | observe s | whole run s | CPU s "
              "| HISTOR ÷ toolmark, whole run |")
        print("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        print("\n".join(daily))
    if timeline:
        print()
        print("| scenario | crawler | harvest s | harvest end → first MCP request s | network s "
              "| last answer → exit s | whole s | fleet CPU s |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        print("\n".join(timeline))
    if failures:
        print()
        for f in failures:
            print(f"FAILED: {f}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
