// toolmark desk: in-browser verification of the log (C2SP signed-note checkpoints, witness
// cosignatures (cosignature/v1), RFC 6962 / RFC 9162 inclusion proofs, c2sp.org/tlog-proof@v1
// bundles) with WebCrypto only.
// Plain script, no dependencies, no build step. Exposes `window.toolmark` for check.js and
// wires the /log page's form when it is present.
'use strict';

(function () {
  const utf8 = new TextEncoder();

  function fail(message) {
    throw new Error(message);
  }

  // ---- bytes ----------------------------------------------------------------------------

  function concat(...parts) {
    let n = 0;
    for (const p of parts) n += p.length;
    const out = new Uint8Array(n);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  function equalBytes(a, b) {
    if (a.length !== b.length) return false;
    let d = 0;
    for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
    return d === 0;
  }

  function hex(bytes) {
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  function fromHex(s) {
    if (!/^([0-9a-f]{2})*$/.test(s)) fail('not lowercase hex: ' + s);
    const out = new Uint8Array(s.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
    return out;
  }

  function b64encode(bytes) {
    let bin = '';
    for (const b of bytes) bin += String.fromCharCode(b);
    return btoa(bin);
  }

  // Standard base64 with padding, canonical (re-encodes to the same text).
  function b64decode(s, what) {
    if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) {
      fail(what + ' is not standard base64');
    }
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    if (b64encode(out) !== s) fail(what + ' is not canonical base64');
    return out;
  }

  // URL-safe base64 without padding (the /check answer's signature value).
  function b64urlDecode(s, what) {
    if (!/^[A-Za-z0-9_-]*$/.test(s) || s.length % 4 === 1) fail(what + ' is not base64url');
    let t = s.replace(/-/g, '+').replace(/_/g, '/');
    while (t.length % 4) t += '=';
    return b64decode(t, what);
  }

  function needCrypto() {
    if (!window.isSecureContext || !window.crypto || !crypto.subtle) {
      fail('WebCrypto is not available: the page must be served over https (or from localhost)');
    }
  }

  async function sha256(...parts) {
    return new Uint8Array(await crypto.subtle.digest('SHA-256', concat(...parts)));
  }

  async function ed25519Key(publicKey) {
    if (publicKey.length !== 32) fail('an Ed25519 public key is 32 bytes');
    try {
      return await crypto.subtle.importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify']);
    } catch (e) {
      fail('this browser cannot import Ed25519 keys (' + e.message + ')');
    }
  }

  async function ed25519Verify(key, signature, message) {
    if (signature.length !== 64) return false;
    return crypto.subtle.verify({ name: 'Ed25519' }, key, signature, message);
  }

  // ---- C2SP signed-note -------------------------------------------------------------------

  // "<name>+<8 hex key id>+<base64(0x01 || 32-byte Ed25519 public key)>"; the key id must be
  // the first 4 bytes of SHA-256(name || "\n" || 0x01 || public key).
  function parseVkey(text) {
    return parseTypedVkey(text, 0x01, 'verifier key');
  }

  // A witness's key: the same form with type 0x04 (C2SP tlog-cosignature, cosignature/v1).
  function parseWitnessVkey(text) {
    return parseTypedVkey(text, 0x04, 'witness key');
  }

  async function parseTypedVkey(text, type, what) {
    const vkey = text.trim();
    const i = vkey.indexOf('+');
    const j = vkey.indexOf('+', i + 1);
    if (i <= 0 || j < 0) fail(what + ': expected <name>+<id>+<key>');
    const name = vkey.slice(0, i);
    const idHex = vkey.slice(i + 1, j);
    if (!/^[0-9a-f]{8}$/.test(idHex)) fail(what + ': the key id is not 8 hex digits');
    const key = b64decode(vkey.slice(j + 1), what);
    if (key.length !== 33 || key[0] !== type) {
      fail(what + ': not an Ed25519 (0x0' + type + ') key');
    }
    const digest = await sha256(utf8.encode(name), Uint8Array.of(0x0a), key);
    const id = hex(digest.slice(0, 4));
    if (id !== idHex) fail(what + ': key id ' + idHex + ' does not match the key (' + id + ')');
    const publicKey = key.slice(1);
    return { text: vkey, name, id, publicKey, key: await ed25519Key(publicKey) };
  }

  // Opens a signed note: the signed text is everything up to and including the newline before
  // the last blank line; every signature line by this key (same name and key id) must verify,
  // and there must be at least one. Returns the text.
  async function openNote(note, vk) {
    if (/[\u0000-\u0009\u000b-\u001f\u007f]/.test(note)) fail('note: control character');
    const split = note.lastIndexOf('\n\n');
    if (split < 0) fail('note: no blank line before the signatures');
    const text = note.slice(0, split + 1);
    const block = note.slice(split + 2);
    if (!block.endsWith('\n')) fail('note: the last signature line is not terminated');
    const lines = block.slice(0, -1).split('\n');
    if (lines.length > 100) fail('note: more than 100 signatures');
    let verified = 0;
    for (const line of lines) {
      const m = /^\u2014 ([^ ]+) ([A-Za-z0-9+/=]+)$/.exec(line);
      if (!m) fail('note: malformed signature line');
      const sig = b64decode(m[2], 'signature');
      if (sig.length < 5) fail('note: signature too short');
      if (m[1] !== vk.name || hex(sig.slice(0, 4)) !== vk.id) continue;
      const ok = await ed25519Verify(vk.key, sig.slice(4), utf8.encode(text));
      if (!ok) fail('the signature by ' + vk.name + '+' + vk.id + ' does not verify');
      verified++;
    }
    if (verified === 0) fail('note: no signature by ' + vk.name + '+' + vk.id);
    return text;
  }

  // ---- C2SP tlog-cosignature (cosignature/v1) --------------------------------------------------

  // The cosignatures in `note` by the given witnesses ({name, key: parsed witness key}): one
  // result per signature line whose key name and key id are a witness's, in note order:
  // {witness, keyName, timestamp (BigInt POSIX seconds), ok, why}. A line is ok when it is 76
  // bytes (key id, big-endian u64 timestamp, Ed25519 signature) and the signature verifies over
  // "cosignature/v1\ntime <timestamp>\n" followed by the note's text. Lines by other keys (the
  // log's own) are ignored.
  async function noteCosignatures(note, witnesses) {
    const split = note.lastIndexOf('\n\n');
    if (split < 0) fail('note: no blank line before the signatures');
    const text = note.slice(0, split + 1);
    const lines = note.slice(split + 2).replace(/\n$/, '').split('\n');
    const out = [];
    for (const line of lines) {
      const m = /^\u2014 ([^ ]+) ([A-Za-z0-9+/=]+)$/.exec(line);
      if (!m) fail('note: malformed signature line');
      const sig = b64decode(m[2], 'signature');
      if (sig.length < 4) continue;
      const id = hex(sig.slice(0, 4));
      const w = witnesses.find((x) => x.key.name === m[1] && x.key.id === id);
      if (!w) continue;
      if (sig.length !== 76) {
        out.push({ witness: w.name, keyName: m[1], timestamp: null, ok: false,
          why: sig.length + ' bytes, not a 76-byte cosignature/v1' });
        continue;
      }
      let timestamp = 0n;
      for (const b of sig.slice(4, 12)) timestamp = (timestamp << 8n) | BigInt(b);
      const message = utf8.encode('cosignature/v1\ntime ' + timestamp + '\n' + text);
      const ok = await ed25519Verify(w.key.key, sig.slice(12), message);
      out.push({ witness: w.name, keyName: m[1], timestamp, ok,
        why: ok ? '' : 'the Ed25519 signature does not verify' });
    }
    return out;
  }

  // POSIX seconds as YYYY-MM-DDTHH:MM:SSZ (the raw number beyond what a Date holds).
  function isoTime(seconds) {
    if (seconds === null) return '?';
    if (seconds > 8640000000000n) return String(seconds);
    return new Date(Number(seconds) * 1000).toISOString().replace('.000Z', 'Z');
  }

  // The witness policy the site publishes (/api/v1/witnesses), keys parsed and checked:
  // {quorum, witnesses: [{name, url, key}]}.
  async function loadWitnesses() {
    const w = await fetchJson('/api/v1/witnesses');
    const witnesses = [];
    for (const x of w.witnesses || []) {
      witnesses.push({ name: x.name, url: x.url, key: await parseWitnessVkey(x.vkey) });
    }
    return { quorum: w.quorum, witnesses };
  }

  // Verifies the witnesses' cosignatures on `note`, one step per cosignature ("what" names the
  // checkpoint); throws at a forged one. Returns the verified cosignatures.
  async function checkCosignatures(rep, note, policy, what) {
    if (policy.witnesses.length === 0) {
      rep.ok('no witness is configured (quorum ' + policy.quorum + '): ' + what + ' is signed by the log alone');
      return [];
    }
    const found = await noteCosignatures(note, policy.witnesses);
    for (const c of found) {
      if (!c.ok) {
        fail('the cosignature by witness ' + c.witness + ' (' + c.keyName + ') on ' + what +
          ' does not verify: ' + c.why);
      }
    }
    for (const c of found) {
      rep.ok('witness ' + c.witness + ' cosigned ' + what + ' at ' + isoTime(c.timestamp) +
        ' (Ed25519 over cosignature/v1, key ' + c.keyName + ')');
    }
    const who = new Set(found.map((c) => c.witness));
    rep.ok(who.size + ' of ' + policy.witnesses.length + ' witnesses cosigned ' + what +
      ' (the service\'s quorum: ' + policy.quorum + ')');
    return found;
  }

  // "<origin>\n<size>\n<base64 root>\n[<extension>\n]*"; the origin must be the key's name.
  function parseCheckpoint(text, vk) {
    const lines = text.slice(0, -1).split('\n');
    if (lines.length < 3) fail('checkpoint: fewer than three lines');
    const [origin, sizeLine, rootLine] = lines;
    if (origin !== vk.name) fail('checkpoint: origin ' + origin + ' is not the key name ' + vk.name);
    if (!/^(0|[1-9][0-9]*)$/.test(sizeLine)) fail('checkpoint: bad tree size');
    const size = BigInt(sizeLine);
    if (size >= 1n << 64n) fail('checkpoint: tree size does not fit 64 bits');
    const root = b64decode(rootLine, 'root hash');
    if (root.length !== 32) fail('checkpoint: the root is not 32 bytes');
    for (const ext of lines.slice(3)) if (ext === '') fail('checkpoint: empty extension line');
    return { origin, size, root, rootBase64: rootLine };
  }

  async function openCheckpoint(note, vk) {
    return parseCheckpoint(await openNote(note, vk), vk);
  }

  // ---- RFC 6962 hashing and RFC 9162 inclusion proofs ------------------------------------------

  function leafHash(entry) {
    return sha256(Uint8Array.of(0x00), entry);
  }

  function nodeHash(left, right) {
    return sha256(Uint8Array.of(0x01), left, right);
  }

  // RFC 9162 section 2.1.3.2: recompute the root from the leaf, its index and the audit path.
  async function verifyInclusion(proof, size, root, index, leaf) {
    if (index >= size) fail('inclusion proof: index ' + index + ' is not below tree size ' + size);
    let fn = index;
    let sn = size - 1n;
    let r = leaf;
    for (const p of proof) {
      if (sn === 0n) fail('inclusion proof: longer than the tree is deep');
      if ((fn & 1n) === 1n || fn === sn) {
        r = await nodeHash(p, r);
        if ((fn & 1n) === 0n) {
          while ((fn & 1n) === 0n && fn !== 0n) {
            fn >>= 1n;
            sn >>= 1n;
          }
        }
      } else {
        r = await nodeHash(r, p);
      }
      fn >>= 1n;
      sn >>= 1n;
    }
    if (sn !== 0n) fail('inclusion proof: shorter than the tree is deep');
    if (!equalBytes(r, root)) fail('inclusion proof: the computed root differs from the checkpoint root');
  }

  // ---- c2sp.org/tlog-proof@v1 ----------------------------------------------------------------

  function parseBundle(text) {
    const lines = [];
    let rest = text;
    function next(what) {
      const i = rest.indexOf('\n');
      if (i < 0) fail('bundle: missing ' + what);
      const line = rest.slice(0, i);
      rest = rest.slice(i + 1);
      lines.push(line);
      return line;
    }
    if (next('header') !== 'c2sp.org/tlog-proof@v1') fail('bundle: the first line is not c2sp.org/tlog-proof@v1');
    let line = next('index line');
    let extra = null;
    if (line.startsWith('extra ')) {
      extra = b64decode(line.slice(6), 'extra');
      line = next('index line');
    }
    const m = /^index (0|[1-9][0-9]*)$/.exec(line);
    if (!m) fail('bundle: expected "index <decimal>"');
    const index = BigInt(m[1]);
    const proof = [];
    for (;;) {
      const h = next('blank line before the checkpoint');
      if (h === '') break;
      if (proof.length === 64) fail('bundle: more than 64 proof hashes');
      const bytes = b64decode(h, 'proof hash ' + (proof.length + 1));
      if (bytes.length !== 32) fail('bundle: proof hash ' + (proof.length + 1) + ' is not 32 bytes');
      proof.push(bytes);
    }
    if (rest === '') fail('bundle: missing checkpoint');
    return { extra, index, proof, checkpoint: rest };
  }

  // Verifies a bundle: the checkpoint's signature with the log key, then the inclusion of
  // SHA-256(0x00 || entry) at the bundle's index. `entry` defaults to the bytes of `extra`;
  // when given, `extra` (if any) must equal it.
  async function verifyBundle(text, vk, entry) {
    const b = parseBundle(text);
    if (entry && b.extra && !equalBytes(entry, b.extra)) fail('bundle: extra is not the entry');
    const bytes = entry || b.extra;
    if (!bytes) fail('bundle: no entry (no extra line) to check');
    const cp = await openCheckpoint(b.checkpoint, vk);
    await verifyInclusion(b.proof, cp.size, cp.root, b.index, await leafHash(bytes));
    return { index: b.index, proof: b.proof, checkpoint: cp, entry: bytes, note: b.checkpoint };
  }

  // ---- RFC 8785 (JCS) for JSON of strings, integers, booleans, null, arrays, objects ----------

  function jcs(v) {
    if (v === null || typeof v === 'boolean' || typeof v === 'string') return JSON.stringify(v);
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) fail('JCS: non-finite number');
      return JSON.stringify(v);
    }
    if (Array.isArray(v)) return '[' + v.map(jcs).join(',') + ']';
    if (typeof v === 'object') {
      // Array.prototype.sort compares strings by UTF-16 code units, as RFC 8785 requires.
      const keys = Object.keys(v).sort();
      return '{' + keys.map((k) => JSON.stringify(k) + ':' + jcs(v[k])).join(',') + '}';
    }
    fail('JCS: not a JSON value');
  }

  async function fetchText(url) {
    const r = await fetch(url, { cache: 'no-store' });
    if (!r.ok) fail('GET ' + url + ': HTTP ' + r.status);
    return r.text();
  }

  async function fetchJson(url) {
    const r = await fetch(url, { cache: 'no-store' });
    if (!r.ok) fail('GET ' + url + ': HTTP ' + r.status);
    return r.json();
  }

  // ---- a step list and a result line -------------------------------------------------------

  function reporter(resultEl, stepsEl) {
    stepsEl.textContent = '';
    resultEl.removeAttribute('data-ok');
    resultEl.textContent = 'Verifying…';
    return {
      ok(text) {
        const li = document.createElement('li');
        li.className = 'ok';
        li.textContent = '✓ ' + text;
        stepsEl.appendChild(li);
      },
      failed(text) {
        const li = document.createElement('li');
        li.className = 'fail';
        li.textContent = '✗ ' + text;
        stepsEl.appendChild(li);
        resultEl.textContent = 'FAILED: ' + text;
        resultEl.setAttribute('data-ok', 'false');
      },
      done(text) {
        resultEl.textContent = text;
        resultEl.setAttribute('data-ok', 'true');
      },
    };
  }

  window.toolmark = {
    b64decode, b64urlDecode, fromHex, hex, equalBytes, sha256, ed25519Key, ed25519Verify,
    parseVkey, openNote, openCheckpoint, parseBundle, verifyInclusion, verifyBundle, leafHash,
    jcs, fetchText, fetchJson, reporter, needCrypto, utf8, parseWitnessVkey, noteCosignatures,
    loadWitnesses, checkCosignatures, isoTime,
  };

  // ---- the /log page ------------------------------------------------------------------------

  function wireLogPage() {
    const form = document.getElementById('verify-form');
    if (!form) return;
    const button = document.getElementById('verify-button');
    const load = document.getElementById('verify-load');
    const targetEl = document.getElementById('verify-target');
    const bundleEl = document.getElementById('verify-bundle');
    const entryEl = document.getElementById('verify-entry');
    const result = document.getElementById('verify-result');
    const steps = document.getElementById('verify-steps');

    function lookupUrl() {
      const id = targetEl.value.trim();
      if (!/^[0-9a-f]{16}$/.test(id)) fail('the target id must be 16 lowercase hex digits');
      return '/api/v1/lookup/' + id;
    }

    load.addEventListener('click', async () => {
      try {
        bundleEl.value = await fetchText(lookupUrl());
        bundleEl.focus();
      } catch (e) {
        const rep = reporter(result, steps);
        rep.failed(e.message);
      }
    });

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      button.disabled = true;
      entryEl.hidden = true;
      const rep = reporter(result, steps);
      try {
        needCrypto();
        const vk = await parseVkey(await fetchText('/api/v1/log/vkey'));
        rep.ok('verifier key ' + vk.name + '+' + vk.id + ': key id = SHA-256(name ‖ 0x0A ‖ 0x01 ‖ key)[0:4]');
        const currentNote = await fetchText('/checkpoint');
        const current = await openCheckpoint(currentNote, vk);
        rep.ok('checkpoint signature verifies (Ed25519 over the note text): size ' + current.size +
          ', root ' + current.rootBase64);
        const policy = await loadWitnesses();
        await checkCosignatures(rep, currentNote, policy, 'the current checkpoint');
        let text = bundleEl.value;
        let source = 'the pasted bundle';
        if (text.trim() === '') {
          text = await fetchText(lookupUrl());
          source = 'the bundle of ' + targetEl.value.trim();
        } else {
          text = text.replace(/\r\n/g, '\n');
          if (!text.endsWith('\n')) text += '\n';
        }
        const b = await verifyBundle(text, vk);
        rep.ok(source + ': its checkpoint signature verifies (size ' + b.checkpoint.size + ')');
        const cosigned = await checkCosignatures(rep, b.note, policy, 'the bundle\'s checkpoint');
        rep.ok('entry ' + b.index + ' is included: SHA-256(0x00 ‖ entry) and ' + b.proof.length +
          ' proof hashes give the root ' + b.checkpoint.rootBase64);
        if (b.checkpoint.size === current.size) {
          if (!equalBytes(b.checkpoint.root, current.root)) {
            fail('the bundle and the current checkpoint sign different roots for size ' + current.size);
          }
          rep.ok('the bundle is proved against the current checkpoint');
        } else {
          rep.ok('the bundle is proved against a checkpoint of size ' + b.checkpoint.size +
            ' (the current one has ' + current.size + ')');
        }
        let entryText = new TextDecoder('utf-8', { fatal: true }).decode(b.entry);
        try {
          entryText = JSON.stringify(JSON.parse(entryText), null, 2);
        } catch (e) {
          /* shown as it is */
        }
        entryEl.textContent = entryText;
        entryEl.hidden = false;
        let newest = null;
        for (const c of cosigned) if (newest === null || c.timestamp > newest) newest = c.timestamp;
        rep.done('Verified: entry ' + b.index + ' is in the log of ' + vk.name + ' (tree size ' +
          b.checkpoint.size + ')' + (newest === null ? '' : '; newest cosignature ' + isoTime(newest)));
      } catch (e) {
        rep.failed(e.message);
      } finally {
        button.disabled = false;
      }
    });
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', wireLogPage);
  } else {
    wireLogPage();
  }
})();
