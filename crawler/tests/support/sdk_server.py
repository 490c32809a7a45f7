"""A real Python `mcp` SDK server for the crawler's tests, on loopback: the 2.x SDK's MCPServer
(mcp 2.3.0, which also speaks 2026-07-28: `server/discover` and stateless requests) or, run by
a venv holding the 1.x SDK (mcp 1.30.0, the `mcp-proxy` venv), its FastMCP, which speaks only
the session-era protocol (`--mode open` only).

It serves one tool, `lookup`, over streamable HTTP at /mcp (and at /<prefix>/mcp for each
--prefixes entry: one server behind several endpoints of one origin, as a path-routing
gateway shows it), forwards /<prefix>/mcp to 127.0.0.1:<port>/mcp for each --routes entry
`prefix=port` (another server behind the same origin), and writes one line per request
to the log file: `REQ <method> <path> <header names, comma-separated, lower-case>`, and
`FORBIDDEN <name>` (answering 400) when a request carries a header named with --forbid: the
server itself asserts that no declared secret or templated header reaches it.

  --mode open   answers anyone (a header-declared remote that lists its tools without a key)
  --mode auth   the SDK's own resource-server auth: 401 with `WWW-Authenticate: Bearer
                resource_metadata=...` and RFC 9728 metadata naming --issuer as its
                authorization server; the token verifier logs `TOKEN` if it is ever called.
"""

import argparse
import sys

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

try:
    from mcp.server.mcpserver import MCPServer
except ImportError:  # the 1.x SDK
    MCPServer = None
    from mcp.server.fastmcp import FastMCP

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--mode", choices=["open", "auth"], required=True)
parser.add_argument("--log", required=True)
parser.add_argument("--forbid", default="")
parser.add_argument("--issuer", default="https://auth.example.test")
parser.add_argument("--name", default="toolmark-sdk-test")
parser.add_argument("--prefixes", default="")
parser.add_argument("--routes", default="")
args = parser.parse_args()
forbidden = {h.strip().lower() for h in args.forbid.split(",") if h.strip()}
routed = {f"/{p.strip()}/mcp" for p in args.prefixes.split(",") if p.strip()}
forwarded = {
    f"/{k.strip()}/mcp": int(v)
    for k, v in (r.split("=") for r in args.routes.split(",") if r.strip())
}


async def forward(scope, receive, send, port):
    """The request to 127.0.0.1:<port>/mcp, its answer streamed back as it comes."""
    import httpx

    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    skip = {b"host", b"content-length"}
    headers = [(k, v) for k, v in scope["headers"] if k not in skip]
    async with httpx.AsyncClient(timeout=60) as client:
        request = client.build_request(
            scope["method"], f"http://127.0.0.1:{port}/mcp", headers=headers, content=body
        )
        response = await client.send(request, stream=True)
        hop = {"content-length", "transfer-encoding", "connection"}
        out = [
            (k.encode("latin-1"), v.encode("latin-1"))
            for k, v in response.headers.multi_items()
            if k.lower() not in hop
        ]
        await send({"type": "http.response.start", "status": response.status_code, "headers": out})
        async for chunk in response.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        await response.aclose()
log = open(args.log, "a", buffering=1)


class NeverVerifies:
    """The SDK calls this only for a request that carries a bearer token."""

    async def verify_token(self, token: str) -> AccessToken | None:
        log.write("TOKEN\n")
        return None


base = f"http://127.0.0.1:{args.port}"
kwargs = {}
if args.mode == "auth":
    kwargs = dict(
        token_verifier=NeverVerifies(),
        auth=AuthSettings(
            issuer_url=args.issuer,
            resource_server_url=f"{base}/mcp",
            required_scopes=["tools.read"],
            validate_token_resource=False,
        ),
    )
if MCPServer is not None:
    server = MCPServer(args.name, version="1.0.0", **kwargs)
else:
    assert args.mode == "open", "the 1.x server runs --mode open only"
    server = FastMCP(args.name)


@server.tool()
def lookup(term: str) -> str:
    """Look a term up."""
    return term


app = server.streamable_http_app()


async def asserting(scope, receive, send):
    if scope["type"] == "http":
        names = [k.decode("latin-1").lower() for k, _ in scope["headers"]]
        log.write(f"REQ {scope['method']} {scope['path']} {','.join(names)}\n")
        bad = [n for n in names if n in forbidden]
        if bad:
            for n in bad:
                log.write(f"FORBIDDEN {n}\n")
            await send({"type": "http.response.start", "status": 400, "headers": []})
            await send({"type": "http.response.body", "body": b"forbidden header"})
            return
        if scope["path"] in forwarded:
            await forward(scope, receive, send, forwarded[scope["path"]])
            return
        if scope["path"] in routed:
            scope = dict(scope, path="/mcp", raw_path=b"/mcp")
    await app(scope, receive, send)


uvicorn.run(asserting, host="127.0.0.1", port=args.port, log_level="warning")
