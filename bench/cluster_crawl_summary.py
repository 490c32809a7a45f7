"""The table of bench/cluster_crawl.sh: python3 bench/cluster_crawl_summary.py OUT WORKERS...

Per worker count: the run's wall time (scheduler start → every job finished and every hand-off
taken), the harvest's part of it, the politeness bound and the ratio, each role's CPU (user +
sys) and peak RSS (/usr/bin/time -v), the jobs' end states, and the log's verified size.

The politeness bound of one daily run (docs/benchmarks.md derives it):
  harvest   (pages − REGISTRY_BURST) / REGISTRY_RATE_PER_SECOND: the registry's rate, 1 request/s
            after a burst of 5, pages = the registry requests the fleet counted;
  observe   the fleet's `bounds.cluster[C].exactHostSeconds`: the busiest host's observations
            (3 requests × its latency each: initialize, initialized, tools/list; the discover
            probe is paid once per host, the DELETE is sent after the place is given back)
            split as well as possible over its 2 places;
  bound     harvest + observe: no crawl that keeps both limits finishes sooner.
The bound at the cluster's concurrency also counts all observations' work spread over
C = workers × `crawl.concurrency` (256) places.
"""
import json
import os
import re
import sys

REGISTRY_BURST = 5
REGISTRY_RATE = 1.0
# Observations a worker keeps running: `crawl.concurrency`'s default.
CONCURRENCY = 256


def time_v(path):
    """CPU seconds (user + sys) and peak RSS (MiB) from a /usr/bin/time -v report."""
    try:
        text = open(path).read()
    except OSError:
        return None, None
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", text).group(1))
    sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", text).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    return user + sys_, rss / 1024


def num(path):
    return float(open(path).read().strip())


def main():
    out, counts = sys.argv[1], sys.argv[2:]
    shape = json.load(open(os.path.join(out, "registry", "shape.json")))["generated"]
    print(f"Registry: {shape['entries']} entries, {shape['latest']} latest servers, "
          f"{shape['remotes']} remotes on {shape['hosts']} hosts (busiest: "
          f"{shape['busiestHosts'][0][1]} endpoints)\n")
    print("| workers | wall s | harvest s | bound s (harvest + busiest host) | wall ÷ bound "
          "| bound at workers × 256 in flight s | wall ÷ that | jobs | log size | load (start → end) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    roles_rows = []
    for n in counts:
        d = os.path.join(out, f"workers-{n}")
        start, enq, end = num(f"{d}/start"), num(f"{d}/enqueued"), num(f"{d}/end")
        fleet = json.load(open(f"{d}/fleet.json"))
        exit_line = json.load(open(f"{d}/fleet.requests.json"))
        pages = exit_line["registryRequests"]
        harvest_bound = max(0, pages - REGISTRY_BURST) / REGISTRY_RATE
        # Any entry gives the total work (globalSeconds × its concurrency) and the host bound.
        c0, cluster = next(iter(fleet["bounds"]["cluster"].items()))
        host = cluster["exactHostSeconds"]
        total_work = cluster["globalSeconds"] * int(c0)
        bound = harvest_bound + host
        at_c = harvest_bound + max(host, total_work / (int(n) * CONCURRENCY))
        wall = end - start
        # state|jobs|claims|most attempts, one line per state
        jobs = ", ".join(
            f"{state} {count} (claims {claims})"
            for state, count, claims, _ in (l.split("|") for l in open(f"{d}/jobs").read().split()))
        verify = open(f"{d}/verify").read().strip()
        m = re.search(r"at size (\d+)", verify)
        size = m.group(1) if m else verify[:60]
        load = f"{open(f'{d}/load.start').read().strip()} → {open(f'{d}/load.end').read().strip()}"
        print(f"| {n} | {wall:.0f} | {enq - start:.0f} | {bound:.0f} ({harvest_bound:.0f} + {host:.0f}) "
              f"| {wall / bound:.2f} | {at_c:.0f} | {wall / at_c:.2f} | {jobs} | {size} | {load} |")
        for name in ["scheduler", "sequencer"] + [f"worker-{w}" for w in range(1, int(n) + 1)]:
            cpu, rss = time_v(f"{d}/{name}.time")
            if cpu is not None:
                roles_rows.append(f"| {n} | {name} | {cpu:.1f} | {rss:.0f} |")
        try:
            roles_rows.append(f"| {n} | fleet (stand-ins) | {num(f'{d}/fleet.cpu'):.1f} | — |")
        except (OSError, ValueError):
            pass
        r = exit_line["requests"]
        roles_rows.append(f"| {n} | fleet requests | discover {r['discover']}, initialize "
                          f"{r['initialize']}, tools/list {r['toolsList']}, DELETE {r.get('closed', '?')}, "
                          f"other {r['other']}, "
                          f"registry {pages} | |")
    print("\n| workers | role | CPU s (user+sys) | peak RSS MiB |")
    print("| --- | --- | --- | --- |")
    print("\n".join(roles_rows))


if __name__ == "__main__":
    main()
