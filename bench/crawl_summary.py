"""Summarise bench/crawl.sh's raw output as Markdown tables; exit 1 if any target was not `ok`.

    python3 bench/crawl_summary.py OUT_DIR SCENARIO ...
    python3 bench/crawl_summary.py --surface OUT_DIR SCENARIO ...   (bench/crawl.sh --surface)

Reads, per scenario directory: fleet.json (the standin-fleet line: endpoints, hosts, bounds),
fleet-<crawler>.requests.json (the fleet's exit line: requests answered, first request in and
last answer out), <crawler>.time (`/usr/bin/time -v`), <crawler>.start/.end (`date +%s.%N`),
<crawler>.load (/proc/loadavg before the run), toolmark-report.json, and histor.json
(bench/histor_crawl.py) when HISTOR ran.

With --surface, the runs are `tools-K` (TOOLMARK_CRAWL_SURFACE=false) and `surface-K` (the
surface read), K = 1, 2, …: the same files under those names, NAME.kinds.json (the surface
kinds the index recorded), and latencies.jsonl (every endpoint's latency) for the schedule
bound at each mode's requests per observation. A `-delta` scenario's fleet answered both of
its crawls: its first line (SIGUSR1 after the first crawl) is subtracted from its last (without
it, the requests per observation are both crawls' mean); its network window spans both.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path
from urllib.parse import urlsplit


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


def fleet_lines(path: Path) -> list[dict]:
    """The JSON lines standin-fleet wrote to stderr: one per SIGUSR1, then its exit line."""
    try:
        return [json.loads(ln) for ln in path.read_text().splitlines() if ln.startswith("{")]
    except OSError:
        return []


def fleet_exit(path: Path) -> dict:
    """The last JSON line standin-fleet wrote to stderr."""
    lines = fleet_lines(path)
    return lines[-1] if lines else {}


# The fleet's request kinds an observation sends inside its place in the host's limit, and the
# one it sends after giving the place back (the `DELETE` ending a session).
INSIDE = ("discover", "initialize", "initialized", "toolsList", "promptsList", "resourcesList",
          "templatesList", "resourcesRead", "cards")
OUTSIDE = ("closed",)
SURFACE_KINDS = ("promptsList", "resourcesList", "templatesList", "resourcesRead", "cards")
# The kinds `Surface::beside_tools` serves (no `ui://` page), as the index names them.
SERVED_KINDS = ("card", "prompts", "resourceTemplates", "resources")


def schedule_bound(latencies: dict[str, list[float]], inside: float, after: float, per_host: int,
                   concurrency: int) -> float:
    """`fleet::schedule_bound`'s simple form: no schedule ends sooner in which an observation holds
    its host's place for `inside` × the endpoint's latency (at most `per_host` places a host) and
    one of the crawl's `concurrency` slots for `inside + after` (the `DELETE` is sent after the
    place is given back, before the task ends)."""
    host = max(max(inside * max(ls), inside * sum(ls) / per_host) for ls in latencies.values())
    total = sum(sum(ls) for ls in latencies.values())
    return max(host, (inside + after) * total / concurrency)


def latencies_by_host(path: Path) -> dict[str, list[float]]:
    by_host: dict[str, list[float]] = {}
    for line in path.read_text().splitlines():
        e = json.loads(line)
        by_host.setdefault(urlsplit(e["url"]).hostname, []).append(e["latencyMs"] / 1000)
    return by_host


def spread(values: list[float], digits: int = 2) -> str:
    """Median, and the range when there is more than one value."""
    m = statistics.median(values)
    if len(values) == 1:
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def surface_main(out: Path, scenarios: list[str]) -> int:
    """The surface on against off (bench/crawl.sh --surface): one row per crawl, then per scenario
    the ratios, requests per observation and the schedule bound at those requests."""
    failures = []
    rows = []
    ratios = []
    timeline = []
    for scenario in scenarios:
        d = out / scenario
        fleet = json.loads((d / "fleet.json").read_text())
        n = fleet["endpoints"]
        per_host = fleet["bounds"]["toolmark"]["perHost"]
        concurrency = fleet["bounds"]["toolmark"]["concurrency"]
        lat = latencies_by_host(d / "latencies.jsonl")
        layout = f"{fleet['hosts']:,} × {fleet['perHost']}"
        if fleet["remotesPerServer"] > 1:
            layout += f" ({fleet['servers']:,} servers × {fleet['remotesPerServer']} remotes)"
        runs: dict[str, list[dict]] = {"tools": [], "surface": []}
        for k in range(1, 1000):
            if not (d / f"tools-{k}.time").exists() and not (d / f"surface-{k}.time").exists():
                break
            for mode in ("tools", "surface"):
                name = f"{mode}-{k}"
                if not (d / f"{name}.time").exists():
                    continue
                t = gnu_time(d / f"{name}.time")
                report = json.loads((d / f"{name}-report.json").read_text())
                lines = fleet_lines(d / f"fleet-{name}.requests.json")
                served = lines[-1] if lines else {}
                req = dict(served.get("requests", {}))
                # A delta scenario's fleet printed its counts after the first crawl too: the
                # measured crawl's requests are the difference.
                crawls = 2 if scenario.endswith("-delta") else 1
                if crawls == 2 and len(lines) == 2:
                    first_day = lines[0].get("requests", {})
                    req = {k2: v - first_day.get(k2, 0) for k2, v in req.items()}
                    crawls = 1
                inside = sum(req.get(k2, 0) for k2 in INSIDE)
                extra = sum(req.get(k2, 0) for k2 in SURFACE_KINDS)
                peak = served.get("peakInFlight", {})
                statuses = report["totals"]
                if scenario.endswith("-delta") and not report["harvest"]["mode"].startswith("since "):
                    failures.append(f"{scenario} {name}: harvested {report['harvest']['mode']!r}, not a delta")
                if t["exit"] != 0 or statuses != {"ok": n}:
                    failures.append(f"{scenario} {name}: exit {t['exit']}, statuses {statuses} (want {n} ok)")
                if mode == "tools" and extra:
                    failures.append(f"{scenario} {name}: {extra} surface requests with the surface off")
                # What the index recorded: every kind the stand-in serves read at every target.
                kinds_path = d / f"{name}.kinds.json"
                kinds = json.loads(kinds_path.read_text()) if kinds_path.exists() else None
                # A delta scenario's index holds both crawls' entries: the first read every
                # target's surface, the daily one only the targets whose rotation day it is
                # (`crawl.surface_days`), the same number for every kind.
                again = 0
                if mode == "surface" and kinds is not None and scenario.endswith("-delta"):
                    again = kinds.get("card read", 0) - n
                    if not 0 <= again <= n:
                        failures.append(f"{scenario} {name}: {again} surfaces read on the daily run of {n}")
                want_kinds = {f"{k2} read": n + again for k2 in SERVED_KINDS} if mode == "surface" else {}
                if kinds is not None and kinds != want_kinds:
                    failures.append(f"{scenario} {name}: surface kinds recorded {kinds}, want {want_kinds}")
                r = {"k": k, "wall": t["wall"], "cpu": t["cpu"], "rss": t["rss_mb"],
                     "harvest": report["harvest"]["seconds"], "observe": report["observeSeconds"],
                     "network": served.get("activeSeconds") if not scenario.endswith("-delta") else float("nan"),
                     "again": again, "inside": inside / n / crawls, "closed": req.get("closed", 0) / n / crawls, "peak": peak, "load": read_float(d / f"{name}.load")}
                runs[mode].append(r)
                first, last = served.get("firstRequestUnix"), served.get("lastAnswerUnix")
                start, end = read_float(d / f"{name}.start"), read_float(d / f"{name}.end")
                if not scenario.endswith("-delta") and start and end and first and last:
                    fleet_cpu = read_float(d / f"fleet-{name}.cpu")
                    timeline.append(
                        f"| {scenario} | {mode} | {k} | {r['harvest']:.1f} | {first - start - r['harvest']:.1f} "
                        f"| {last - first:.1f} | {end - last:.1f} | {end - start:.1f} "
                        f"| {fleet_cpu if fleet_cpu is not None else '?'} |"
                    )
                bound = schedule_bound(lat, r["inside"], r["closed"], per_host, concurrency)
                kinds = " ".join(f"{k2} {req.get(k2, 0):,}" for k2 in INSIDE + OUTSIDE if req.get(k2, 0))
                hosts = ", ".join(f"{c} × {p}" for p, c in sorted(peak.get("hosts", {}).items(),
                                                                   key=lambda pc: int(pc[0])))
                rows.append(
                    f"| {scenario} | {mode} | {k} | {r['load'] if r['load'] is not None else '?'} "
                    f"| {r['harvest']:.1f} | {r['observe']:.1f} | {r['network']:.1f} | **{r['wall']:.1f}** "
                    f"| {r['cpu']:.1f} | {r['rss']:.0f} | {statuses.get('ok', 0):,} | {r['inside']:.2f} + {r['closed']:.2f} "
                    f"| {bound:.2f} | {r['observe'] / bound:.2f}× | {peak.get('max', '?')} ({hosts}) | {kinds} |"
                )
        if runs["tools"] and runs["surface"]:
            tools, surf = runs["tools"], runs["surface"]

            def ratio(key: str) -> str:
                pairs = [s[key] / t[key] for t, s in zip(tools, surf)]
                return spread(pairs)

            r_tools = statistics.median(r["inside"] for r in tools)
            r_surf = statistics.median(r["inside"] for r in surf)
            b_tools = schedule_bound(lat, r_tools, statistics.median(r["closed"] for r in tools), per_host,
                                     concurrency)
            b_surf = schedule_bound(lat, r_surf, statistics.median(r["closed"] for r in surf), per_host,
                                    concurrency)
            peak_tools = max(int(r["peak"].get("max") or 0) for r in tools)
            peak_surf = max(int(r["peak"].get("max") or 0) for r in surf)
            ratios.append(
                f"| {scenario} | {n:,} | {layout} | {len(tools)} | {spread([r['wall'] for r in tools])} "
                f"| {spread([r['wall'] for r in surf])} | **{ratio('wall')}×** | {ratio('observe')}× "
                f"| {r_tools:.2f} → {r_surf:.2f} | {b_tools:.2f} → {b_surf:.2f} ({b_surf / b_tools:.2f}×) "
                f"| {spread([r['rss'] for r in tools], 0)} → {spread([r['rss'] for r in surf], 0)} "
                f"| {peak_tools} → {peak_surf} (limit {per_host}) "
                f"| {statistics.median(r['again'] for r in surf) if scenario.endswith('-delta') else n:,.0f} |"
            )
    print("| scenario | crawl | run | load before | harvest s | observe s | network s | whole run s | CPU s "
          "| peak RSS MB | ok | requests per observation: in the place + after | bound s at those requests "
          "| observe ÷ bound | peak requests at once on a host (hosts × peak) | requests the fleet answered |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    print("\n".join(rows))
    if ratios:
        print()
        print("| scenario | targets | hosts × endpoints | runs | tools only: whole run s | with the surface: whole run s "
              "| surface ÷ tools, whole run | observe phase | requests in the place per observation "
              "| bound s | peak RSS MB | peak requests at once on a host | surfaces read in the measured crawl |")
        print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        print("\n".join(ratios))
        print()
        print("Median (range) over the runs; a ratio is each run's surface crawl over the tools-only crawl "
              "just before it.")
    if timeline:
        print()
        print("| scenario | crawl | run | harvest s | harvest end → first MCP request s | network s "
              "| last answer → exit s | whole s | fleet CPU s |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        print("\n".join(timeline))
    if failures:
        print()
        for f in failures:
            print(f"FAILED: {f}")
        return 1
    return 0


def main() -> int:
    if sys.argv[1] == "--surface":
        return surface_main(Path(sys.argv[2]), sys.argv[3:])
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
