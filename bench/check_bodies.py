"""Request bodies for bench/check.sh, and the checks that the servers answer them as expected.

Runs under HISTOR's interpreter (it uses HISTOR's own MTL/1 digest and `awr`'s RFC 8785 code):

    python bench/check_bodies.py prepare --report toolmark-report.json --corpus-set FILE --out DIR
    python bench/check_bodies.py verify --toolmark URL --histor URL --body FILE --out DIR --name NAME

`prepare` picks the observed endpoint serving the corpus tool set FILE (by HISTOR's MTL/1 digest
of that file against the `mtl1` toolmark's crawl report holds for each target), reads the tools
from that endpoint itself (initialize, notifications/initialized, tools/list, as a client does),
checks that HISTOR's digest of what it read is the digest toolmark observed, and writes

    DIR/body-digest.json   {"endpoint": E, "toolSetDigest": D}   what WARDEN `--histor` sends
    DIR/body-tools.json    {"endpoint": E, "tools": [...]}       the tools the client received
    DIR/bodies-distinct.tsv  every observed endpoint and its MTL/1 digest (bench/check_post.lua
                           cycles through them, adding a "nonce" member neither server reads, so
                           that no two requests of a run are byte-for-byte alike)
    DIR/body-distinct.json, body-distinct-last.json   the first and last of those, for `verify`
    DIR/bodies.json        endpoint, digest, tool count, body sizes

`verify` POSTs one body to both servers, requires `"match": "same"` from both, checks the
toolmark answer's Ed25519 signature (key from /api/v1/issuer, over the JCS bytes without
`signature`) and that it carries a tlog-proof bundle, and writes the answers and their sizes
(DIR/NAME.toolmark.json, DIR/NAME.histor.json, DIR/NAME.sizes.json). Exit status 1 on any
mismatch.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import urllib.request
from pathlib import Path

from awr import canonicalize
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from histor.subject import tool_set_digest


def post(url: str, doc: object, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    data = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
    return post_raw(url, data, headers)


def post_raw(url: str, data: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, data=data, method="POST", headers={
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **(headers or {}),
    })
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


def read_tools(endpoint: str) -> list:
    """The tools an MCP client gets from `endpoint` (one page; the stand-ins never page)."""
    status, headers, _ = post(endpoint, {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "toolmark-check-bench", "version": "0"}},
    })
    if status != 200:
        raise SystemExit(f"initialize at {endpoint}: HTTP {status}")
    session = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": "2025-06-18"}
    post(endpoint, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    status, _, body = post(endpoint, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}, session)
    if status != 200:
        raise SystemExit(f"tools/list at {endpoint}: HTTP {status}")
    answer = json.loads(body)
    if answer.get("result", {}).get("nextCursor"):
        raise SystemExit(f"tools/list at {endpoint} is paged; this helper reads one page")
    return answer["result"]["tools"]


def prepare(args: argparse.Namespace) -> int:
    report = json.loads(Path(args.report).read_text())
    corpus = json.loads(Path(args.corpus_set).read_text())
    corpus_tools = corpus["tools"] if isinstance(corpus, dict) else corpus
    want, _ = tool_set_digest(corpus_tools)
    targets = sorted((t for t in report["targets"] if t.get("status") == "ok" and t.get("mtl1") == want),
                     key=lambda t: t["endpoint"])
    if not targets:
        raise SystemExit(f"no observed target has the MTL/1 digest of {args.corpus_set} ({want})")
    target = targets[0]
    endpoint = target["endpoint"]
    tools = read_tools(endpoint)
    got, _ = tool_set_digest(tools)
    if got != target["mtl1"]:
        raise SystemExit(f"{endpoint}: HISTOR's digest of what it serves now is {got}, toolmark observed "
                         f"{target['mtl1']}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    body_digest = json.dumps({"endpoint": endpoint, "toolSetDigest": target["mtl1"]}, separators=(",", ":"))
    body_tools = json.dumps({"endpoint": endpoint, "tools": tools}, separators=(",", ":"), ensure_ascii=False)
    (out / "body-digest.json").write_text(body_digest)
    (out / "body-tools.json").write_text(body_tools)
    # Every observed endpoint with its digest, for the run in which no two requests are alike.
    every = sorted((t for t in report["targets"] if t.get("status") == "ok" and t.get("mtl1")),
                   key=lambda t: t["endpoint"])
    (out / "bodies-distinct.tsv").write_text("".join(f"{t['endpoint']}\t{t['mtl1']}\n" for t in every))
    (out / "body-distinct.json").write_text(json.dumps(
        {"endpoint": every[0]["endpoint"], "toolSetDigest": every[0]["mtl1"], "nonce": 0}, separators=(",", ":")))
    (out / "body-distinct-last.json").write_text(json.dumps(
        {"endpoint": every[-1]["endpoint"], "toolSetDigest": every[-1]["mtl1"], "nonce": 1}, separators=(",", ":")))
    info = {
        "endpoint": endpoint,
        "server": target["server"],
        "toolSetDigest": target["mtl1"],
        "fullDigest": target.get("full"),
        "tools": len(tools),
        "targetsWithThisSet": len(targets),
        "bodyDigestBytes": len(body_digest.encode()),
        "bodyToolsBytes": len(body_tools.encode()),
        "distinctEndpoints": len(every),
    }
    (out / "bodies.json").write_text(json.dumps(info, indent=2) + "\n")
    print(json.dumps(info))
    return 0


def verify(args: argparse.Namespace) -> int:
    body = Path(args.body).read_bytes()
    out = Path(args.out)
    problems = []
    sizes = {}
    for who, url in (("toolmark", args.toolmark.rstrip("/") + "/api/v1/check"),
                     ("histor", args.histor.rstrip("/") + "/api/v1/check")):
        status, headers, raw = post_raw(url, body)
        (out / f"{args.name}.{who}.json").write_bytes(raw)
        sizes[who] = {"status": status, "bytes": len(raw), "contentType": headers.get("content-type")}
        if status != 200:
            problems.append(f"{who}: HTTP {status}: {raw[:300]!r}")
            continue
        answer = json.loads(raw)
        sizes[who]["match"] = answer.get("match")
        if answer.get("match") != "same":
            problems.append(f"{who}: match is {answer.get('match')!r}, not 'same'")
        if who == "toolmark":
            with urllib.request.urlopen(args.toolmark.rstrip("/") + "/api/v1/issuer", timeout=30) as resp:
                issuer = json.load(resp)
            signature = answer.pop("signature", {})
            key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(issuer["publicKeyHex"]))
            value = signature.get("value", "")
            try:
                key.verify(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)), canonicalize(answer))
                sizes[who]["signature"] = "valid"
            except Exception as exc:  # noqa: BLE001 - any failure is a finding
                problems.append(f"toolmark: signature does not verify ({type(exc).__name__})")
            if not answer.get("proof", {}).get("tlogProof"):
                problems.append("toolmark: no proof.tlogProof in the answer")
    (out / f"{args.name}.sizes.json").write_text(json.dumps(sizes, indent=2) + "\n")
    print(json.dumps(sizes))
    for p in problems:
        print(f"check_bodies.py verify {args.name}: {p}", file=sys.stderr)
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--report", required=True)
    p.add_argument("--corpus-set", required=True)
    p.add_argument("--out", required=True)
    v = sub.add_parser("verify")
    v.add_argument("--toolmark", required=True)
    v.add_argument("--histor", required=True)
    v.add_argument("--body", required=True)
    v.add_argument("--out", required=True)
    v.add_argument("--name", required=True)
    args = ap.parse_args()
    return prepare(args) if args.command == "prepare" else verify(args)


if __name__ == "__main__":
    sys.exit(main())
