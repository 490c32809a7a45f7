// Lists an MCP server's surface beyond tools the way the official TypeScript SDK's client does,
// for tests that compare toolmark's per-kind digests with an independent client:
//
//   node list_surface.mjs --sdk DIR [--raw] [--name NAME] URL
//
// DIR is the `mcp-sdk-node` directory of scripts/mcp-servers (npm @modelcontextprotocol/sdk,
// pinned there); URL a streamable-HTTP endpoint. It connects with `Client` and
// `StreamableHTTPClientTransport` (capabilities `{}`, clientInfo NAME, default `list-surface`),
// reads every page of `prompts/list` (when `initialize` declares `capabilities.prompts`),
// `resources/list` and `resources/templates/list` (when it declares `capabilities.resources`),
// every page of `tools/list`, and `resources/read` of every `ui://` URI a tool names in
// `_meta.ui.resourceUri` or the legacy `_meta["ui/resourceUri"]` (first-named order, each once),
// and prints one JSON object:
//
//   {"prompts": [...] | null, "resources": [...] | null, "resourceTemplates": [...] | null,
//    "appPages": {"<uri>": [<contents>...], ...}}
//
// (`null`: the capability is not declared, so the kind was not listed.)
//
// By default the items are the SDK's parsed objects (`listPrompts`, `listResources`, ...): the
// SDK's zod schemas keep `_meta` and every member they define but DROP members they do not
// define (on prompts, their arguments and icons, resources, templates, annotations, read
// contents and tools), so a server that sends extra members lists differently here than on
// the wire. `--raw` asks through `Client.request` with the SDK's loose `ResultSchema` instead:
// the results exactly as JSON-parsed, every member kept.
//
// Exit status 1 (a message on stderr) when a listing fails or passes MAX_PAGES pages.

import { pathToFileURL } from "node:url";
import { join } from "node:path";

/** Most pages read of one list: a server paging forever is an error here, not a hang. */
const MAX_PAGES = 1000;

const args = process.argv.slice(2);
let sdk = null;
let raw = false;
let name = "list-surface";
let url = null;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--sdk") sdk = args[++i];
  else if (args[i] === "--raw") raw = true;
  else if (args[i] === "--name") name = args[++i];
  else url = args[i];
}
if (!sdk || !url) {
  console.error("usage: list_surface.mjs --sdk DIR [--raw] [--name NAME] URL");
  process.exit(2);
}
const dist = join(sdk, "node_modules/@modelcontextprotocol/sdk/dist/esm");
const load = (p) => import(pathToFileURL(join(dist, p)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const { ResultSchema } = await load("types.js");

const client = new Client({ name, version: "1.0.0" }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

/** Every item of a paged list: `typed` is the SDK's own method, `method` the wire name. */
async function all(typed, method, key) {
  const items = [];
  let cursor;
  for (let page = 0; page < MAX_PAGES; page++) {
    const params = cursor === undefined ? {} : { cursor };
    const result = raw
      ? await client.request({ method, params }, ResultSchema)
      : await typed(params);
    items.push(...(result[key] ?? []));
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === null || cursor === "") return items;
  }
  throw new Error(`${method}: more than ${MAX_PAGES} pages`);
}

try {
  const caps = client.getServerCapabilities() ?? {};
  const out = { prompts: null, resources: null, resourceTemplates: null, appPages: {} };
  if (caps.prompts) {
    out.prompts = await all((p) => client.listPrompts(p), "prompts/list", "prompts");
  }
  if (caps.resources) {
    out.resources = await all((p) => client.listResources(p), "resources/list", "resources");
    out.resourceTemplates = await all(
      (p) => client.listResourceTemplates(p),
      "resources/templates/list",
      "resourceTemplates",
    );
  }
  const tools = await all((p) => client.listTools(p), "tools/list", "tools");
  const uris = [];
  for (const tool of tools) {
    const meta = tool._meta ?? {};
    const uri = meta.ui?.resourceUri ?? meta["ui/resourceUri"];
    if (typeof uri === "string" && uri.startsWith("ui://") && !uris.includes(uri)) uris.push(uri);
  }
  for (const uri of uris) {
    const params = { uri };
    const result = raw
      ? await client.request({ method: "resources/read", params }, ResultSchema)
      : await client.readResource(params);
    out.appPages[uri] = result.contents;
  }
  process.stdout.write(JSON.stringify(out) + "\n");
  await client.close();
} catch (e) {
  console.error(`list_surface: ${e.message ?? e}`);
  await client.close().catch(() => {});
  process.exit(1);
}
