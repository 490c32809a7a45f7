"""HISTOR's own MTL/1 tool-set digest over a file of cases, for ``histor_differential.rs``.

Usage: ``python mtl1_digest.py CASES [--canonical]``, with the interpreter of a venv that has
``aimarket-histor`` installed (``scripts/histor-venv`` makes one).

CASES holds one case a line; each line is a JSON string whose value is the text of one tool-set
document (wrapping the text in a string keeps its own whitespace, newlines included, on one line).
The document is read the way HISTOR reads a server's answer, with the standard ``json.loads``
(duplicate member names: the last wins; ``1.0`` and ``1e400`` are floats; ``"\\ud800"`` is
kept as an unpaired surrogate). The tool list is taken from the shapes toolmark accepts: a bare
array, ``{"tools": [...]}``, or a JSON-RPC response whose ``result`` is such an object.

Output, one JSON line each: first ``{"histor": "<version>", "awr": "<version>", "python": ...}``, then per case one of
``{"sri": "sha256-..."}``, ``{"code": "MTL-..."}`` (an ``MtlError``), ``{"parse_error": "..."}``
(not JSON, or no tool list), ``{"exception": "..."}`` (anything else HISTOR raised). With
``--canonical`` a digested case also carries ``"canonical"``: the RFC 8785 text HISTOR hashed.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version

from awr import canonicalize
from histor.subject import MtlError, tool_set_digest


def tools_of(doc: object) -> list:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        holder = doc
        if "jsonrpc" in doc and isinstance(doc.get("result"), dict):
            holder = doc["result"]
        tools = holder.get("tools")
        if isinstance(tools, list):
            return tools
    raise ValueError("not a tool set: expected an array or an object with a \"tools\" array")


def one(text: str, with_canonical: bool) -> dict:
    try:
        tools = tools_of(json.loads(text))
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        return {"parse_error": str(exc)}
    try:
        sri, entries = tool_set_digest(tools)
    except MtlError as exc:
        return {"code": exc.code}
    except Exception as exc:  # noqa: BLE001 - reported, and the Rust side fails on it
        return {"exception": f"{type(exc).__name__}: {exc}"}
    out = {"sri": sri}
    if with_canonical:
        out["canonical"] = canonicalize(entries).decode("utf-8")
    return out


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if not a.startswith("--")]
    with_canonical = "--canonical" in argv[1:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.stdout
    out.write(json.dumps({"histor": version("aimarket-histor"), "awr": version("awr"), "python": sys.version.split()[0]}) + "\n")
    with open(args[0], "rb") as cases:
        for line in cases:
            if not line.strip():
                continue
            out.write(json.dumps(one(json.loads(line), with_canonical)) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
