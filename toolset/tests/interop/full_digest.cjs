// Recomputes toolmark/1 digests with an independent RFC 8785 implementation (the npm
// `canonicalize` package, by the RFC's authors) and Node's crypto, from the definitions in
// docs/digests.md. Usage: NODE_PATH=<dir>/node_modules node full_digest.cjs FILE... ; prints
// one line per file:
//   - a tool set (a bare array or {"tools": […]}): "<file> <full digest> <tool index digest>";
//   - a page of another kind ({"prompts"|"resources"|"resourceTemplates"|"contents": […]}):
//     "<file> <per-kind digest>".
'use strict';
const canonicalize = require('canonicalize');
const { createHash } = require('crypto');
const { readFileSync } = require('fs');

const sri = (s) => 'sha256-' + createHash('sha256').update(Buffer.from(s, 'utf8')).digest('base64');

// The member each kind's entries are sorted by (`name` for tools and prompts).
const KEYS = { tools: 'name', prompts: 'name', resources: 'uri', resourceTemplates: 'uriTemplate', contents: 'uri' };

function sortedCanonical(entries, key) {
  const items = entries.map((t) => ({
    key: t && typeof t === 'object' && !Array.isArray(t) && typeof t[key] === 'string' ? t[key] : null,
    canon: canonicalize(t),
  }));
  items.sort((a, b) => {
    if (a.key === null || b.key === null) {
      if (a.key !== b.key) return a.key === null ? -1 : 1;
    } else if (a.key !== b.key) {
      return a.key < b.key ? -1 : 1; // JS string order is UTF-16 code-unit order
    }
    return Buffer.compare(Buffer.from(a.canon, 'utf8'), Buffer.from(b.canon, 'utf8'));
  });
  return '[' + items.map((i) => i.canon).join(',') + ']';
}

// toolmark-tool/1: each entry's SRI; the index digest is the SRI of the sorted array of them.
function toolIndex(tools) {
  const digests = tools.map((t) => sri(canonicalize(t))).sort();
  return sri(canonicalize(digests));
}

for (const file of process.argv.slice(2)) {
  // RFC 8785 has no form for a number beyond a double's range (JSON.parse reads it as
  // Infinity); toolmark/1 writes it as JSON.stringify does, `null` (docs/digests.md).
  const finite = (_key, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v);
  const doc = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''), finite);
  if (Array.isArray(doc) || Array.isArray(doc.tools)) {
    const tools = Array.isArray(doc) ? doc : doc.tools;
    console.log(file + ' ' + sri(sortedCanonical(tools, 'name')) + ' ' + toolIndex(tools));
    continue;
  }
  const kind = Object.keys(KEYS).find((k) => Array.isArray(doc[k]));
  console.log(file + ' ' + sri(sortedCanonical(doc[kind], KEYS[kind])));
}
