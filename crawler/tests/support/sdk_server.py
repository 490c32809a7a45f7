"""A real Python `mcp` SDK (2.x, MCPServer) server for the crawler's tests, on loopback.

It serves one tool, `lookup`, over streamable HTTP at /mcp, and writes one line per request
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
from mcp.server.mcpserver import MCPServer

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--mode", choices=["open", "auth"], required=True)
parser.add_argument("--log", required=True)
parser.add_argument("--forbid", default="")
parser.add_argument("--issuer", default="https://auth.example.test")
args = parser.parse_args()
forbidden = {h.strip().lower() for h in args.forbid.split(",") if h.strip()}
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
server = MCPServer("toolmark-sdk-test", version="1.0.0", **kwargs)


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
    await app(scope, receive, send)


uvicorn.run(asserting, host="127.0.0.1", port=args.port, log_level="warning")
