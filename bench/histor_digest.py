"""HISTOR's side of the digest benchmark: ``json.loads`` + ``histor.subject.tool_set_digest``.

Usage: ``python histor_digest.py NAME=PATH [NAME=PATH ...]`` with the interpreter of a venv that
has ``aimarket-histor`` 0.4.2 (``scripts/histor-venv``). Prints one JSON line per input:

    {"input": NAME, "bytes": N, "impl": "histor", "best_s": ..., "median_s": ..., "loops": ..., "repeats": ...}

and a second line with ``"impl": "histor-crawler"``, which parses with
``histor.mcpclient.parse_json`` (``json.loads`` with HISTOR's duplicate-member refusal and depth
check) as its crawler does for each observation, instead of the bare ``json.loads``.

Each timing is ``timeit`` over the whole job from the input's bytes to the SRI, with enough loops
that one repeat takes at least 0.5 s, repeated 7 times; ``best_s`` and ``median_s`` are seconds
per tool set.
"""

from __future__ import annotations

import json
import statistics
import sys
import timeit
from importlib.metadata import version

from histor.mcpclient import parse_json
from histor.subject import tool_set_digest

REPEATS = 7
MIN_REPEAT_S = 0.5


def tools_of(doc):
    return doc["tools"] if isinstance(doc, dict) else doc


def measure(fn) -> tuple[float, float, int]:
    timer = timeit.Timer(fn)
    loops, total = timer.autorange()  # also the warm-up: stops once a run takes >= 0.2 s
    loops = max(1, int(MIN_REPEAT_S / (total / loops)) + 1)
    runs = [t / loops for t in timer.repeat(repeat=REPEATS, number=loops)]
    return min(runs), statistics.median(runs), loops


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    meta = {"histor": version("aimarket-histor"), "awr": version("awr"), "python": sys.version.split()[0]}
    print(json.dumps({"meta": meta}), flush=True)
    for arg in argv[1:]:
        name, _, path = arg.partition("=")
        with open(path, "rb") as f:
            data = f.read()
        sri = tool_set_digest(tools_of(json.loads(data)))[0]
        for impl, loads in (("histor", json.loads), ("histor-crawler", parse_json)):
            best, median, loops = measure(lambda: tool_set_digest(tools_of(loads(data))))
            print(json.dumps({"input": name, "bytes": len(data), "impl": impl, "sri": sri,
                              "best_s": best, "median_s": median, "loops": loops, "repeats": REPEATS}),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
