#!/usr/bin/env python3
"""Make names/data/popularity.txt (toolmark-popularity/1) from HISTOR 0.4.2's curated.json.

    pip download aimarket-histor==0.4.2 --no-deps -d /tmp/h
    unzip -q /tmp/h/aimarket_histor-0.4.2-py3-none-any.whl histor/curated.json -d /tmp/h
    python3 names/data/make-snapshot.py /tmp/h/histor/curated.json > names/data/popularity.txt

Keeps every npm: entry (its `weekly` is npm's last-week count of 2026-10-10, per its `source`)
and every pypi: entry with a count (PyPI's 30-day count from the top-15 000 list of 2026-10-01,
divided by 4.3 by HISTOR); PyPI projects outside that list have no count (HISTOR writes 0) and
are left out, which reads the same (an unlisted package counts 0). No count is changed.
"""
import json
import re
import sys

data = json.load(open(sys.argv[1], encoding="utf-8"))["servers"]
rows = {}
for e in data:
    key = e.get("endpoint") or ""
    weekly = e.get("weekly")
    source = e.get("source") or ""
    if key.startswith("npm:"):
        if not isinstance(weekly, int) or not source.startswith("npm 2026-10-10, "):
            continue
        rows[key] = (weekly, None)
    elif key.startswith("pypi:"):
        if not isinstance(weekly, int) or weekly <= 0 or not source.startswith("PyPI top 15 000 (2026-10-01)"):
            continue
        name = re.sub(r"[-_.]+", "-", key[5:].lower())
        rows["pypi:" + name] = (weekly, "2026-10-01")
out = sys.stdout
out.write("toolmark-popularity/1\ndate 2026-10-10\n")
out.write("source HISTOR 0.4.2 (PyPI aimarket-histor, MIT), histor/curated.json: npm last-week downloads counted 2026-10-10 for the MCP-related npm packages HISTOR found by npm search\n")
out.write("source PyPI: HISTOR's weekly = the 30-day download count of hugovk/top-pypi-packages' top-15 000 list of 2026-10-01 divided by 4.3, for PyPI projects with mcp in their name (entries dated 2026-10-01)\n")
out.write("source made by names/data/make-snapshot.py; see names/data/SOURCES\n\n")
for key in sorted(rows):
    weekly, as_of = rows[key]
    out.write(f"{key}\t{weekly}" + (f"\t{as_of}" if as_of else "") + "\n")
