// toolmark desk: the /check page. Posts a pasted tools/list result to /api/v1/check, shows the
// answer, and verifies it in the browser: the answer's Ed25519 signature over its RFC 8785
// bytes (without "signature") with the key from /api/v1/issuer, then the log proof bundle it
// carries (checkpoint signature with the log key, the witnesses' cosignatures on it with the
// keys from /api/v1/witnesses, inclusion of the entry), then that the entry says what the
// answer says. Needs verify.js (window.toolmark) loaded first.
'use strict';

(function () {
  const tm = window.toolmark;

  // The raw text span [start, end) of the value of member `name` of the JSON object that
  // starts at `from` (the text is already known to be valid JSON). The last member of that name
  // wins, as in JSON.parse. Returns null when there is none.
  function memberSpan(text, name, from) {
    let i = from;
    const ws = () => {
      while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
    };
    const skipString = () => {
      i++; // opening quote
      while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
    };
    const skipValue = () => {
      ws();
      const start = i;
      if (text[i] === '"') {
        skipString();
      } else if (text[i] === '{' || text[i] === '[') {
        let depth = 0;
        do {
          const c = text[i];
          if (c === '"') {
            skipString();
            continue;
          }
          if (c === '{' || c === '[') depth++;
          if (c === '}' || c === ']') depth--;
          i++;
        } while (depth > 0);
      } else {
        while (i < text.length && !',}] \t\n\r'.includes(text[i])) i++;
      }
      return [start, i];
    };
    ws();
    if (text[i] !== '{') return null;
    i++;
    let found = null;
    for (;;) {
      ws();
      if (text[i] === '}') break;
      const keyStart = i;
      skipString();
      const key = JSON.parse(text.slice(keyStart, i));
      ws();
      i++; // colon
      const span = skipValue();
      if (key === name) found = span;
      ws();
      if (text[i] === ',') i++;
    }
    return found;
  }

  // The tools array's JSON text, exactly as pasted: a bare array, {"tools": [...]} (with any
  // other members), or a JSON-RPC response {"result": {"tools": [...]}}.
  function toolsText(text) {
    let doc;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      throw new Error('the pasted text is not JSON: ' + e.message);
    }
    if (Array.isArray(doc)) return text.trim();
    if (doc === null || typeof doc !== 'object') throw new Error('expected an array of tools or an object with "tools"');
    let from = text.search(/\S/);
    if (!Array.isArray(doc.tools) && doc.result && typeof doc.result === 'object') {
      const r = memberSpan(text, 'result', from);
      from = r[0];
      doc = doc.result;
    }
    if (!Array.isArray(doc.tools)) throw new Error('no "tools" array in the pasted object');
    const span = memberSpan(text, 'tools', from);
    return text.slice(span[0], span[1]);
  }

  function fact(dl, term, value, href) {
    const div = document.createElement('div');
    const dt = document.createElement('dt');
    dt.textContent = term;
    const dd = document.createElement('dd');
    if (href) {
      const a = document.createElement('a');
      a.href = href;
      a.textContent = value;
      dd.appendChild(a);
    } else {
      dd.textContent = value;
    }
    div.append(dt, dd);
    dl.appendChild(div);
  }

  async function verifyAnswer(answer, rep) {
    tm.needCrypto();
    // 1. The signature: Ed25519 over RFC 8785 bytes of the answer without "signature".
    const issuer = await tm.fetchJson('/api/v1/issuer');
    const sig = answer.signature;
    if (!sig || sig.alg !== 'Ed25519') throw new Error('the answer is not signed with Ed25519');
    if (sig.publicKeyHex !== issuer.publicKeyHex) throw new Error('the answer is signed by a key other than /api/v1/issuer\'s');
    const key = await tm.ed25519Key(tm.fromHex(issuer.publicKeyHex));
    const unsigned = Object.assign({}, answer);
    delete unsigned.signature;
    const bytes = tm.utf8.encode(tm.jcs(unsigned));
    const ok = await tm.ed25519Verify(key, tm.b64urlDecode(sig.value, 'signature'), bytes);
    if (!ok) throw new Error('the answer\'s signature does not verify');
    rep.ok('answer signature verifies: Ed25519 over ' + bytes.length + ' RFC 8785 bytes, key ' + issuer.keyId);
    if (answer.type !== 'toolmark.check/v1') throw new Error('the answer type is not toolmark.check/v1');

    if (!answer.proof) {
      return 'Verified: the signed answer says "' + answer.match + '" (it carries no log proof for this match)';
    }
    // 2. The proof bundle, with the log key fetched from this site (and named in the answer).
    const vkeyText = (await tm.fetchText('/api/v1/log/vkey')).trim();
    if (answer.log && answer.log.vkey !== vkeyText) throw new Error('the answer names a log key other than /api/v1/log/vkey');
    const vk = await tm.parseVkey(vkeyText);
    const entry = tm.utf8.encode(answer.proof.entry);
    const b = await tm.verifyBundle(answer.proof.tlogProof, vk, entry);
    rep.ok('proof checkpoint signature verifies (log ' + vk.name + ', size ' + b.checkpoint.size + ')');
    if (String(b.index) !== String(answer.proof.entryIndex)) throw new Error('the bundle proves another entry index');
    // The witnesses' cosignatures on that checkpoint, with the keys /api/v1/witnesses publishes;
    // what the answer states of them must be what the checkpoint carries.
    const cosigned = await tm.checkCosignatures(rep, b.note, await tm.loadWitnesses(), 'the proof\'s checkpoint');
    for (const s of (answer.log && answer.log.cosignatures) || []) {
      if (!cosigned.some((c) => c.keyName === s.witness && tm.isoTime(c.timestamp) === s.timestamp)) {
        throw new Error('the answer states a cosignature by ' + s.witness + ' at ' + s.timestamp +
          ' that its checkpoint does not carry');
      }
    }
    rep.ok('entry ' + b.index + ' is included in the tree of size ' + b.checkpoint.size +
      ' (' + b.proof.length + ' proof hashes, root ' + b.checkpoint.rootBase64 + ')');
    // 3. The entry says what the answer says.
    const e = JSON.parse(answer.proof.entry);
    if (e.status !== 'ok') throw new Error('the logged entry is not a successful observation');
    if (answer.target && e.subject.id !== answer.target.id) throw new Error('the logged entry is of another target');
    const q = answer.query || {};
    if (q.comparedBy === 'toolmark/1') {
      if (e.full !== q.fullDigest) throw new Error('the logged full digest is not the one sent');
    } else if (e.mtl1 !== q.toolSetDigest) {
      throw new Error('the logged MTL/1 digest is not the one sent');
    }
    rep.ok('the logged entry (' + e.observedAt + ', ' + e.subject.server + ') holds the digest compared (' +
      (q.comparedBy || '?') + ')');
    let newest = null;
    for (const c of cosigned) if (newest === null || c.timestamp > newest) newest = c.timestamp;
    return 'Verified: "' + answer.match + '" — signed answer, entry ' + b.index + ' proved in the log' +
      (newest === null ? '' : ', cosigned by ' + new Set(cosigned.map((c) => c.witness)).size +
        ' witness(es), newest ' + tm.isoTime(newest));
  }

  function wire() {
    const form = document.getElementById('check-form');
    if (!form) return;
    const button = document.getElementById('check-button');
    const status = document.getElementById('check-status');
    const box = document.getElementById('check-answer');
    const matchEl = document.getElementById('check-match');
    const noteEl = document.getElementById('check-note');
    const facts = document.getElementById('check-facts');
    const raw = document.getElementById('check-raw');
    const verifyEl = document.getElementById('check-verify');
    const steps = document.getElementById('check-steps');

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      button.disabled = true;
      box.hidden = true;
      status.textContent = 'Checking…';
      status.removeAttribute('data-ok');
      try {
        const endpoint = document.getElementById('check-endpoint').value.trim();
        const name = document.getElementById('check-name').value.trim();
        if (!endpoint && !name) throw new Error('give the endpoint (or the server name)');
        const tools = toolsText(document.getElementById('check-tools').value);
        let body = '{';
        if (endpoint) body += '"endpoint":' + JSON.stringify(endpoint) + ',';
        if (name) body += '"name":' + JSON.stringify(name) + ',';
        body += '"tools":' + tools + '}';
        const r = await fetch('/api/v1/check', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        const replyText = await r.text();
        let answer;
        try {
          answer = JSON.parse(replyText);
        } catch (e) {
          throw new Error('HTTP ' + r.status + ': ' + replyText.slice(0, 200));
        }
        if (!r.ok) throw new Error('the check was refused (HTTP ' + r.status + '): ' + (answer.detail || ''));
        status.textContent = 'Answer received.';
        matchEl.textContent = answer.match;
        matchEl.setAttribute('data-match', answer.match);
        matchEl.className = 'badge ' + (answer.match === 'same' ? 'good'
          : answer.match === 'different' ? 'bad' : 'neutral');
        noteEl.textContent = answer.note || '';
        facts.textContent = '';
        if (answer.target) {
          fact(facts, 'Server', answer.target.name, '/s/' + encodeURIComponent(answer.target.id));
          fact(facts, 'Endpoint', answer.target.endpoint);
          fact(facts, 'Last status', answer.target.lastStatus || '—');
        }
        if (answer.observed) {
          fact(facts, 'Last observed', answer.observed.lastObserved || '—');
          if (answer.observed.unchangedSince) {
            fact(facts, 'Unchanged since', answer.observed.unchangedSince);
          }
          fact(facts, 'Observations', String(answer.observed.observations));
          fact(facts, 'Tools observed', String(answer.observed.toolCount));
        }
        if (answer.seenBefore) {
          fact(facts, 'Seen before', answer.seenBefore.first_seen + ' – ' + answer.seenBefore.last_seen);
        }
        if (answer.log && answer.log.cosignedAt) {
          fact(facts, 'Log cosigned by witnesses at', answer.log.cosignedAt +
            ' (newest of ' + (answer.log.cosignatures || []).length + ')');
        }
        fact(facts, 'Compared by', answer.query.comparedBy);
        if (answer.query.fullDigest) fact(facts, 'Full digest sent', answer.query.fullDigest);
        raw.textContent = JSON.stringify(answer, null, 2);
        box.hidden = false;
        const rep = tm.reporter(verifyEl, steps);
        try {
          rep.done(await verifyAnswer(answer, rep));
        } catch (e) {
          rep.failed(e.message);
        }
      } catch (e) {
        status.textContent = 'Error: ' + e.message;
        status.setAttribute('data-ok', 'false');
      } finally {
        button.disabled = false;
      }
    });
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', wire);
  } else {
    wire();
  }
})();
