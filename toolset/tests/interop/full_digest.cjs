// Recomputes toolmark/1 full digests with an independent RFC 8785 implementation (the npm
// `canonicalize` package, by the RFC's authors) and Node's crypto, from the definition in
// docs/digests.md. Usage: NODE_PATH=<dir>/node_modules node full_digest.cjs FILE... ; prints
// "<file> <sri>" per file.
'use strict';
const canonicalize = require('canonicalize');
const { createHash } = require('crypto');
const { readFileSync } = require('fs');

const sri = (s) => 'sha256-' + createHash('sha256').update(Buffer.from(s, 'utf8')).digest('base64');

function fullCanonical(tools) {
  const items = tools.map((t) => ({
    name: t && typeof t === 'object' && !Array.isArray(t) && typeof t.name === 'string' ? t.name : null,
    canon: canonicalize(t),
  }));
  items.sort((a, b) => {
    if (a.name === null || b.name === null) {
      if (a.name !== b.name) return a.name === null ? -1 : 1;
    } else if (a.name !== b.name) {
      return a.name < b.name ? -1 : 1; // JS string order is UTF-16 code-unit order
    }
    return Buffer.compare(Buffer.from(a.canon, 'utf8'), Buffer.from(b.canon, 'utf8'));
  });
  return '[' + items.map((i) => i.canon).join(',') + ']';
}

for (const file of process.argv.slice(2)) {
  // RFC 8785 has no form for a number beyond a double's range (JSON.parse reads it as
  // Infinity); toolmark/1 writes it as JSON.stringify does, `null` (docs/digests.md).
  const finite = (_key, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v);
  const doc = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''), finite);
  const tools = Array.isArray(doc) ? doc : doc.tools;
  console.log(file + ' ' + sri(fullCanonical(tools)));
}
