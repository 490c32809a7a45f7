"""A replica of the official MCP registry's list endpoint for benchmarks, serving one of the
bundled real snapshots (demo/data/*.json.gz): `GET /v0.1/servers?limit=&cursor=&version=latest`
pages the latest item of every server, sorted by name, with `metadata.nextCursor`. Standard
library only.

python3 bench/registry_replica.py SNAPSHOT.json.gz PORT [REGISTRY_TYPE]

With REGISTRY_TYPE (`npm`), only the servers with a package of that registry type are served.
"""
import gzip
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

snapshot, port = sys.argv[1], int(sys.argv[2])
only = sys.argv[3] if len(sys.argv) > 3 else None
with gzip.open(snapshot, "rt", encoding="utf-8-sig") as f:
    items = json.load(f)
latest = sorted(
    (i for i in items
     if i.get("_meta", {}).get("io.modelcontextprotocol.registry/official", {}).get("isLatest")
     and (only is None or any(p.get("registryType") == only for p in i["server"].get("packages") or []))),
    key=lambda i: i["server"]["name"],
)


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlparse(self.path)
        if url.path != "/v0.1/servers":
            self.send_error(404)
            return
        q = parse_qs(url.query)
        limit = min(int(q.get("limit", ["100"])[0]), 100)
        cursor = q.get("cursor", [None])[0]
        start = 0
        if cursor:
            start = next((n + 1 for n, i in enumerate(latest) if i["server"]["name"] == cursor), len(latest))
        page = latest[start:start + limit]
        body = {"servers": page, "metadata": {"count": len(page)}}
        if start + limit < len(latest):
            body["metadata"]["nextCursor"] = page[-1]["server"]["name"]
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
