"""A stand-in registry at the real registry's size, shaped like the December 2025 snapshots
(issue #27, "Registry at real size"). Standard library only.

    python3 bench/registry_60k.py OUT_DIR [--entries 60000] [--seed 1] [--corpus DIR]

Measures the snapshots in DIR (default ../shared/corpus/registry next to the repository) and
writes to OUT_DIR:

- `shape.json`: what was measured in each snapshot (entries, latest servers, the share of
  remote-only, package-only, both and neither among latest servers, versions per name, remotes
  per server, endpoints per host, package registry types) and what was generated;
- `items.json`: ENTRIES registry items (every version, `isLatest` on one per name) for
  `standin-fleet --items`, which serves them through the registry stand-in and serves every
  remote URL in them with a stand-in MCP server on loopback.

How the shape is kept (scale factor f = ENTRIES / the newest snapshot's entries):
- hosts: every endpoints-per-host class of the snapshot (183 hosts with one endpoint, 83 with
  two, …, one with 212) gets round(count × f) hosts of that size, so the histogram keeps its
  shape and the largest hosts stay as large as the real one (server.smithery.ai, 212);
- each host's endpoints are grouped into servers by the snapshot's remotes-per-server
  distribution (servers are named after their host, as registry names follow the publisher's
  domain, so one host's servers sit next to each other in name order, as smithery's do);
- the latest servers without remotes are package-only or neither in the snapshot's proportion,
  and the share of remote servers that also list a package is the snapshot's;
- versions per name are drawn from the snapshot's distribution until ENTRIES are reached.
Every remote is `streamable-http` (the stand-in MCP servers speak that only; the snapshot's
`sse` share is reported in shape.json). Package identifiers are made up: this bench does not
sweep packages, they are listed because the harvest pages them.
"""
import argparse
import collections
import json
import os
import random
import sys
from urllib.parse import urlparse

OFFICIAL = "io.modelcontextprotocol.registry/official"
SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"


def official(item):
    return item.get("_meta", {}).get(OFFICIAL, {})


def measure(items):
    """The shape of one snapshot."""
    latest = [i for i in items if official(i).get("isLatest")]
    names = collections.Counter(i["server"]["name"] for i in items)

    def kind(i):
        s = i["server"]
        return ("remote" if s.get("remotes") else "") + ("package" if s.get("packages") else "")

    kinds = collections.Counter(kind(i) or "neither" for i in latest)
    hosts = collections.Counter()
    remotes_per_server = collections.Counter()
    remote_types = collections.Counter()
    for i in latest:
        rs = i["server"].get("remotes") or []
        if rs:
            remotes_per_server[len(rs)] += 1
        for r in rs:
            hosts[urlparse(r["url"]).hostname] += 1
            remote_types[r.get("type")] += 1
    package_types = collections.Counter(
        p.get("registryType") for i in latest for p in (i["server"].get("packages") or []))
    packages_per_server = collections.Counter(
        len(i["server"].get("packages") or []) for i in latest if i["server"].get("packages"))
    return {
        "entries": len(items),
        "latest": len(latest),
        "kinds": dict(kinds),
        "shares": {k: round(v / len(latest), 4) for k, v in kinds.items()},
        "versionsPerName": {str(k): v for k, v in sorted(collections.Counter(names.values()).items())},
        "remotes": sum(hosts.values()),
        "hosts": len(hosts),
        "remotesPerServer": {str(k): v for k, v in sorted(remotes_per_server.items())},
        "endpointsPerHost": {str(k): v for k, v in sorted(collections.Counter(hosts.values()).items())},
        "busiestHosts": hosts.most_common(5),
        "remoteTypes": dict(remote_types),
        "packageTypes": dict(package_types),
        "packagesPerServer": {str(k): v for k, v in sorted(packages_per_server.items())},
    }


def draw(rng, histogram):
    """One value of a {value: count} histogram, in proportion to its counts."""
    values = [int(k) for k in histogram]
    return rng.choices(values, weights=list(histogram.values()))[0]


def item(name, version, latest, remotes, packages, when):
    server = {"$schema": SCHEMA, "name": name, "description": f"crawlbench stand-in {name}",
              "version": version}
    if remotes:
        server["remotes"] = [{"type": "streamable-http", "url": u} for u in remotes]
    if packages:
        server["packages"] = packages
    return {"server": server, "_meta": {OFFICIAL: {
        "status": "active", "publishedAt": when, "updatedAt": when, "isLatest": latest}}}


def packages_for(rng, shape, n):
    out = []
    for k in range(draw(rng, shape["packagesPerServer"])):
        kind = rng.choices(list(shape["packageTypes"]), weights=list(shape["packageTypes"].values()))[0]
        ident = f"@crawlbench/pkg-{n}-{k}" if kind == "npm" else f"crawlbench-pkg-{n}-{k}"
        out.append({"registryType": kind, "identifier": ident, "version": "1.0.0",
                    "transport": {"type": "stdio"}})
    return out


def generate(shape, entries, seed):
    rng = random.Random(seed)
    f = entries / shape["entries"]
    # Hosts, by the snapshot's endpoints-per-host classes, each class scaled by f.
    sizes = []
    for size, count in shape["endpointsPerHost"].items():
        sizes += [int(size)] * round(count * f)
    rng.shuffle(sizes)
    servers = []  # (name, remotes, packages)
    remote_share_with_package = shape["kinds"].get("remotepackage", 0) / (
        shape["kinds"].get("remote", 0) + shape["kinds"].get("remotepackage", 0))
    for h, size in enumerate(sizes):
        host = f"h{h:05d}.crawlbench.test"
        endpoints = [f"https://{host}/mcp/{k}" for k in range(size)]
        s = 0
        while endpoints:
            take = min(draw(rng, shape["remotesPerServer"]), len(endpoints))
            remotes, endpoints = endpoints[:take], endpoints[take:]
            pk = packages_for(rng, shape, len(servers)) if rng.random() < remote_share_with_package else []
            # Reverse-DNS names, as the registry's: one publisher's servers sort together.
            servers.append((f"test.crawlbench.h{h:05d}/server-{s:04d}", remotes, pk))
            s += 1
    with_remotes = len(servers)
    # The latest servers without remotes, in the snapshot's proportion to those with.
    k = shape["kinds"]
    remote_kinds = k.get("remote", 0) + k.get("remotepackage", 0)
    package_only = round(with_remotes * k.get("package", 0) / remote_kinds)
    neither = round(with_remotes * k.get("neither", 0) / remote_kinds)
    for n in range(package_only):
        servers.append((f"io.github.crawlbench-{n:06d}/package", [], packages_for(rng, shape, len(servers))))
    for n in range(neither):
        servers.append((f"io.github.crawlbench-{n:06d}/bare", [], []))
    # Versions per name, drawn until `entries` items; names past that get one version, and the
    # last draws are cut so the total is exact.
    rng.shuffle(servers)
    versions = [1] * len(servers)
    left = entries - len(servers)
    if left < 0:
        sys.exit(f"registry_60k: {len(servers)} latest servers need more than {entries} entries")
    for i in range(len(servers)):
        extra = min(draw(rng, shape["versionsPerName"]) - 1, left)
        versions[i] += extra
        left -= extra
    i = 0
    while left > 0:  # the draws fell short: spread the rest one by one
        versions[i % len(servers)] += 1
        left -= 1
        i += 1
    items = []
    for (name, remotes, pk), v in zip(servers, versions):
        for n in range(v):
            latest = n == v - 1
            when = f"2025-{1 + n % 12:02d}-{1 + n % 28:02d}T00:00:00Z"
            items.append(item(name, f"1.0.{n}", latest, remotes, pk, when))
    generated = measure(items)
    return items, generated


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, default=60000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus", default=os.path.join(here, "..", "..", "shared", "corpus", "registry"))
    a = ap.parse_args()
    snaps = sorted(p for p in os.listdir(a.corpus) if p.endswith(".json"))
    if not snaps:
        sys.exit(f"registry_60k: no snapshot in {a.corpus}")
    measured = {}
    for p in snaps:
        with open(os.path.join(a.corpus, p), encoding="utf-8-sig") as f:
            measured[p] = measure(json.load(f))
    shape = measured[snaps[-1]]
    items, generated = generate(shape, a.entries, a.seed)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "items.json"), "w") as f:
        json.dump(items, f)
    report = {"snapshots": measured, "shapeFrom": snaps[-1], "seed": a.seed, "generated": generated}
    with open(os.path.join(a.out, "shape.json"), "w") as f:
        json.dump(report, f, indent=1)
    g = generated
    print(f"{g['entries']} entries, {g['latest']} latest servers ({g['shares']}), "
          f"{g['remotes']} remotes on {g['hosts']} hosts, busiest {g['busiestHosts'][:3]}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
