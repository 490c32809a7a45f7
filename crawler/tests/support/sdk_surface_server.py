"""A real Python `mcp` SDK server with a surface beyond tools, for the crawler's surface tests, on
loopback: the 2.x SDK's MCPServer (mcp 2.3.0, the `mcp-sdk` venv of scripts/mcp-servers), built
only with the SDK's own decorators and its MCP Apps extension (`mcp.server.apps.Apps`).

It serves over streamable HTTP at /mcp (the session era and 2026-07-28 stateless requests):
  tools      `lookup`, and `show_term` bound to the app page `ui://lookup/app.html`
             (`_meta.ui.resourceUri`, stamped by `Apps.tool`)
  prompts    `summarize` (no arguments) and `translate` (`text` required, `language` optional)
  resources  `note://readme` (text/plain), `note://changelog` (text/markdown), and the app page
             (`text/html;profile=mcp-app`, with `_meta.ui.csp` when --csp is given)
  templates  `note://terms/{term}`
with the SDK's cache hints (SEP-2549) on every cacheable method: `ttlMs` --ttl-ms, `cacheScope`
--cache-scope (the SDK writes them on 2026-07-28 results; session-era results drop them).

The app page's HTML is read from --page on every `resources/read`, so a test changes the page
between two observations by rewriting that file. No listing is paged: MCPServer lists
everything in one result.

  --port N          the loopback port
  --page FILE       the app page's HTML (read at each read)
  --csp DOMAINS     comma-separated `connectDomains` declared in the page's `_meta.ui.csp`
  --ttl-ms N        the cache hint's ttlMs (default 60000)
  --cache-scope S   `public` (default) or `private`
"""

import argparse
from pathlib import Path

import uvicorn
from mcp.server.apps import APP_MIME_TYPE, Apps
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import FileResource

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--page", required=True)
parser.add_argument("--csp", default="")
parser.add_argument("--ttl-ms", type=int, default=60000)
parser.add_argument("--cache-scope", choices=["public", "private"], default="public")
args = parser.parse_args()

hint = CacheHint(ttl_ms=args.ttl_ms, scope=args.cache_scope)
cacheable = ["tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"]

PAGE = "ui://lookup/app.html"
apps = Apps()


@apps.tool(resource_uri=PAGE, description="Show a term in the lookup app.")
def show_term(term: str) -> str:
    return term


meta = None
connect = [d.strip() for d in args.csp.split(",") if d.strip()]
if connect:
    meta = {"ui": {"csp": {"connectDomains": connect}}}
apps.add_resource(
    FileResource(
        uri=PAGE,
        name="lookup-app",
        description="The lookup app's page.",
        mime_type=APP_MIME_TYPE,
        path=Path(args.page).resolve(),
        meta=meta,
    )
)

server = MCPServer(
    "toolmark-sdk-surface",
    version="1.0.0",
    extensions=[apps],
    cache_hints={method: hint for method in cacheable},
)


@server.tool()
def lookup(term: str) -> str:
    """Look a term up."""
    return term


@server.prompt(description="Summarize the notes.")
def summarize() -> str:
    return "Summarize the notes in note://readme."


@server.prompt(description="Translate a text.")
def translate(text: str, language: str = "French") -> str:
    return f"Translate into {language}: {text}"


@server.resource("note://readme", mime_type="text/plain", description="What the notes are.")
def readme() -> str:
    return "These notes list terms."


@server.resource("note://changelog", mime_type="text/markdown", description="What changed.")
def changelog() -> str:
    return "# Changes\n\n- first release\n"


@server.resource("note://terms/{term}", mime_type="text/plain", description="One term's note.")
def term_note(term: str) -> str:
    return f"A note on {term}."


uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=args.port, log_level="warning")
