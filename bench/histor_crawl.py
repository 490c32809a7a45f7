"""Run exactly one HISTOR 0.4.2 crawl against a given registry and print its timings as JSON.

    .venv/histor/bin/python bench/histor_crawl.py --registry http://127.0.0.1:P --data DIR

This is what `histor crawl` does (histor/__main__.py: `build(settings)` then
`services.crawler.run()`), with three changes so that it crawls the registry it is given and
nothing else:

* the harvest is `histor.registry.harvest` alone: the default harvest adds HISTOR's curated list
  (`curated.json`: popular remotes on the public internet and ~45k packages), which must not be
  dialled from a benchmark;
* the WARDEN sidecar (`scanner/scan.mjs`, a Node process per batch of new tool sets) is not in
  the wheel, so a stub answers "no matches" for every set. This leaves out work HISTOR does in
  production, so it can only make HISTOR look faster;
* the classifier and the package sandbox stay off (they are off unless configured).

Settings come from the environment as HISTOR reads them: HISTOR_REGISTRY_URL,
HISTOR_ALLOW_PRIVATE_TARGETS=1 (http and loopback targets), HISTOR_CRAWL_PER_HOST=2,
HISTOR_CRAWL_WORKERS=12 (its default), HISTOR_DATA_DIR. The printed JSON has the wall time of
the whole run, of the harvest, of the observe-and-commit phase (first batch started to last
batch committed), HISTOR's own run stats, the observations by status read back from its
database, and the peak RSS of this process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--registry", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--per-host", type=int, default=2)
    ap.add_argument("--workers", type=int, default=12)
    args = ap.parse_args()

    for key in list(os.environ):
        # Nothing configured outside this script may switch on the classifier or a sandbox.
        if key.startswith(("HISTOR_", "DEEPSEEK_", "OPENROUTER_")):
            del os.environ[key]
    os.environ.update({
        "HISTOR_PROFILE": "dev",
        "HISTOR_REGISTRY_URL": args.registry,
        "HISTOR_ALLOW_PRIVATE_TARGETS": "1",
        "HISTOR_CRAWL_PER_HOST": str(args.per_host),
        "HISTOR_CRAWL_WORKERS": str(args.workers),
        "HISTOR_DATA_DIR": args.data,
    })

    from awr import canonical_sri
    from histor import __version__
    from histor.config import load_settings
    from histor.registry import harvest
    from histor.scanner import RuleSets, Scanner
    from histor.service import build

    class NoWarden(Scanner):
        """Stands in for the WARDEN sidecar: empty rule sets, no matches."""

        def __init__(self) -> None:
            super().__init__(scanner_dir=".")
            patterns = {"id": "bench-empty-patterns", "patterns": []}
            records = {"id": "bench-empty-records", "records": []}
            self._rulesets = RuleSets(
                warden_package="none (toolmark benchmark stub)",
                pattern_set=patterns,
                pattern_set_digest=canonical_sri(patterns),
                record_set=records,
                record_set_digest=canonical_sri(records),
            )

        def scan(self, jobs, timeout=0):  # noqa: ANN001 - same signature as Scanner.scan
            return {j["id"]: {"id": j["id"], "patternMatches": [], "recordMatches": []} for j in jobs}

    marks: dict[str, float] = {}

    def registry_only(url: str):
        marks["harvest_start"] = time.monotonic()
        targets = harvest(url, allow_cleartext=True)
        marks["harvest_end"] = time.monotonic()
        return targets

    settings = load_settings()
    services = build(settings, crawler_kwargs={"harvest_fn": registry_only})
    crawler = services.crawler
    crawler.scanner = NoWarden()
    inner = crawler._remote_batch

    def timed_batch(*a, **kw):
        marks.setdefault("observe_start", time.monotonic())
        try:
            return inner(*a, **kw)
        finally:
            marks["observe_end"] = time.monotonic()

    crawler._remote_batch = timed_batch

    started = time.monotonic()
    stats = crawler.run()
    wall = time.monotonic() - started
    services.close()

    db = sqlite3.connect(settings.db_path)
    statuses = dict(db.execute("SELECT status, count(*) FROM observations GROUP BY status").fetchall())
    db.close()
    out = {
        "histor": __version__,
        "wallSeconds": wall,
        "harvestSeconds": marks.get("harvest_end", started) - marks.get("harvest_start", started),
        "observeSeconds": marks.get("observe_end", 0) - marks.get("observe_start", 0),
        "observations": statuses,
        "peakRssKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "workers": settings.crawl_workers,
        "perHost": settings.crawl_per_host,
        "stats": {k: stats.get(k) for k in ("registry_servers", "registry_endpoints", "attempted",
                                            "statuses", "not_attempted", "labels_issued", "tree_size")},
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
