# Generates api/src/openapi.json: python3 scripts/dev/openapi.py > api/src/openapi.json
# (the JSON is what is served and tested; edit here, regenerate, commit both).
import json
digest = {"type": "string", "pattern": "^sha256-[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$", "description": "SRI sha256 digest, canonical base64"}
err = {"description": "Error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
def errs(*codes):
    names = {"400": "Bad request", "404": "Not found", "413": "Body too large", "429": "Rate limited", "503": "Unavailable"}
    return {c: {"description": names[c], "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}} for c in codes}
def jsonresp(schema, desc="OK"):
    return {"description": desc, "content": {"application/json": {"schema": schema}}}
def text(ct, desc="OK"):
    return {"description": desc, "content": {ct: {"schema": {"type": "string"}}}}
idp = {"name": "id", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[0-9a-f]{16}$"}, "description": "Target id: 16 lowercase hex digits"}
changeid = {"name": "id", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1, "maximum": 9223372036854775807}}
def q(name, schema, desc=""):
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": desc}
uint = {"type": "integer", "minimum": 0, "maximum": 9223372036854775807}
pos = {"type": "integer", "minimum": 1, "maximum": 9223372036854775807}
limit = {"type": "integer", "minimum": 1, "maximum": 200}
klass = {"type": "string", "enum": ["benign", "unsure", "dangerous"]}
watch = {"type": "string", "pattern": "^[0-9a-f]{16}(,[0-9a-f]{16}){0,99}$"}
obj = {"type": "object"}
nullable_str = {"type": ["string", "null"]}
paths = {
 "/api/v1/check": {"post": {
   "summary": "Is this tool set what toolmark observed at this endpoint?",
   "requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CheckRequest"}}}},
   "responses": {"200": jsonresp({"$ref": "#/components/schemas/CheckAnswer"}, "A signed answer"), **errs("400", "413", "429")}}},
 "/api/v1/issuer": {"get": {"summary": "The key that signs /check answers", "responses": {"200": jsonresp({"type": "object", "required": ["publicKeyHex", "alg", "keyId"], "properties": {"publicKeyHex": {"type": "string", "pattern": "^[0-9a-f]{64}$"}, "alg": {"const": "Ed25519"}, "keyId": {"type": "string"}}})}}},
 "/checkpoint": {"get": {"summary": "The signed checkpoint (C2SP tlog-checkpoint)", "responses": {"200": text("text/plain"), **errs("404")}}},
 "/tile/{path}": {"get": {"summary": "A Merkle tile or entry bundle (C2SP tlog-tiles path)", "parameters": [{"name": "path", "in": "path", "required": True, "schema": {"type": "string"}, "description": "The rest of the tile path, e.g. 0/000.p/10 or entries/000"}],
   "responses": {"200": {"description": "Tile bytes", "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}, **errs("404")}}},
 "/api/v1/log/vkey": {"get": {"summary": "The log's verifier key (signed-note form)", "responses": {"200": text("text/plain")}}},
 "/api/v1/proof/inclusion": {"get": {"summary": "Inclusion proof", "parameters": [dict(q("index", uint), required=True), q("size", pos)],
   "responses": {"200": jsonresp({"type": "object", "required": ["index", "size", "proof", "checkpoint"], "properties": {"index": uint, "size": uint, "proof": {"type": "array", "items": {"type": "string"}}, "checkpoint": {"type": "string"}}}), **errs("400", "404")}}},
 "/api/v1/proof/consistency": {"get": {"summary": "Consistency proof", "parameters": [dict(q("old", pos), required=True), q("new", pos)],
   "responses": {"200": jsonresp({"type": "object", "required": ["old", "new", "proof", "checkpoint"], "properties": {"old": uint, "new": uint, "proof": {"type": "array", "items": {"type": "string"}}, "checkpoint": {"type": "string"}}}), **errs("400", "404")}}},
 "/api/v1/lookup/{id}": {"get": {"summary": "A target's latest entry as a c2sp.org/tlog-proof@v1 bundle", "parameters": [idp], "responses": {"200": text("text/plain"), **errs("400", "404")}}},
 "/api/v1/servers": {"get": {"summary": "Targets: search, filter, page", "parameters": [q("q", {"type": "string", "maxLength": 200}), q("state", {"type": "string", "enum": ["all", "observed", "changed", "failing", "skipped", "delisted"]}), q("limit", limit), q("offset", uint)],
   "responses": {"200": jsonresp({"type": "object", "required": ["total", "offset", "limit", "servers"], "properties": {"total": uint, "offset": uint, "limit": uint, "servers": {"type": "array", "items": {"$ref": "#/components/schemas/TargetSummary"}}}}), **errs("400")}}},
 "/api/v1/servers/{id}": {"get": {"summary": "One target: summary, timeline, current tools, changes", "parameters": [idp],
   "responses": {"200": jsonresp({"type": "object", "required": ["server", "timeline", "changes"], "properties": {"server": {"$ref": "#/components/schemas/TargetSummary"}, "timeline": {"type": "array", "items": obj}, "changes": {"type": "array", "items": {"$ref": "#/components/schemas/Change"}}, "tools": {"type": ["array", "null"]}}}), **errs("400", "404")}}},
 "/api/v1/servers/{id}/sensitive": {"get": {"summary": "Sensitive-tool glob classification of a target's current tools", "parameters": [idp, {"name": "pattern", "in": "query", "required": False, "schema": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 100}, "style": "form", "explode": True}],
   "responses": {"200": jsonresp({"type": "object", "required": ["sensitive", "safe"], "properties": {"sensitive": {"type": "array", "items": {"type": "string"}}, "safe": {"type": "array", "items": {"type": "string"}}}}), **errs("400", "404")}}},
 "/api/v1/sensitive": {"post": {"summary": "Sensitive-tool glob classification of posted tools",
   "requestBody": {"required": True, "content": {"application/json": {"schema": {"type": "object", "required": ["tools", "patterns"], "properties": {"tools": {"type": "array", "maxItems": 5000}, "patterns": {"type": "array", "maxItems": 100, "items": {"type": "string", "maxLength": 200}}, "server": {"type": ["string", "null"], "minLength": 1, "maxLength": 200}}}}}},
   "responses": {"200": jsonresp({"type": "object", "required": ["sensitive", "safe"], "properties": {"sensitive": {"type": "array", "items": {"type": "string"}}, "safe": {"type": "array", "items": {"type": "string"}}}}), **errs("400", "413")}}},
 "/api/v1/changes": {"get": {"summary": "Changes, cursor-paged", "parameters": [q("after", uint), q("before", uint), q("limit", limit), q("server", {"type": "string", "minLength": 1, "maxLength": 200}), q("target", {"type": "string", "pattern": "^[0-9a-f]{16}$"}), q("class", klass)],
   "responses": {"200": jsonresp({"type": "object", "required": ["changes"], "properties": {"changes": {"type": "array", "items": {"$ref": "#/components/schemas/Change"}}, "nextCursor": {"type": ["integer", "null"]}, "hasMore": {"type": "boolean"}}}), **errs("400")}}},
 "/api/v1/changes/{id}": {"get": {"summary": "One change with its diff and classification", "parameters": [changeid],
   "responses": {"200": jsonresp({"allOf": [{"$ref": "#/components/schemas/Change"}, {"type": "object", "properties": {"diff": {"type": ["object", "null"]}, "classification": {"type": ["object", "null"]}}}]}), **errs("400", "404")}}},
 "/feed.xml": {"get": {"summary": "Atom feed of changes (HISTOR-compatible path and watch=)", "parameters": [q("watch", watch), q("class", klass), q("before", uint)], "responses": {"200": text("application/atom+xml"), **errs("400")}}},
 "/feed.rss": {"get": {"summary": "RSS 2.0 feed of changes", "parameters": [q("watch", watch), q("class", klass), q("before", uint)], "responses": {"200": text("application/rss+xml"), **errs("400")}}},
 "/feed.json": {"get": {"summary": "JSON Feed 1.1 of changes", "parameters": [q("watch", watch), q("class", klass), q("before", uint)], "responses": {"200": {"description": "OK", "content": {"application/feed+json": {"schema": {"type": "object", "required": ["version", "title", "items"]}}}}, **errs("400")}}},
 "/health": {"get": {"summary": "Liveness and freshness", "responses": {"200": jsonresp({"type": "object", "required": ["ok", "service", "version"]}), "503": jsonresp({"type": "object", "required": ["ok"]}, "The checkpoint does not verify")}}},
 "/metrics": {"get": {"summary": "Prometheus metrics", "responses": {"200": text("text/plain")}}},
 "/api/openapi.json": {"get": {"summary": "This document", "responses": {"200": jsonresp(obj)}}},
}
for page, summary in [("/", "Desk: servers"), ("/changes", "Desk: changes"), ("/log", "Desk: the log and in-browser verification"), ("/check", "Desk: check a tool set")]:
    paths[page] = {"get": {"summary": summary, "tags": ["desk"], "responses": {"200": text("text/html"), **errs("400")}}}
paths["/s/{id}"] = {"get": {"summary": "Desk: one target", "tags": ["desk"], "parameters": [idp], "responses": {"200": text("text/html"), "400": text("text/html", "Bad request"), "404": text("text/html", "Not found")}}}
paths["/changes/{id}"] = {"get": {"summary": "Desk: one change", "tags": ["desk"], "parameters": [changeid], "responses": {"200": text("text/html"), "400": text("text/html", "Bad request"), "404": text("text/html", "Not found")}}}
for p in ["/", "/changes", "/log", "/check"]:
    paths[p]["get"]["responses"]["400"] = text("text/html", "Bad request")
doc = {
 "openapi": "3.1.0",
 "info": {"title": "toolmark", "version": "0.1.0", "description": "A public transparency log of MCP tool definitions: /check with proofs, servers and changes, the log as C2SP tiles, change feeds. See docs/api.md."},
 "paths": paths,
 "components": {"schemas": {
   "Error": {"type": "object", "required": ["error", "detail"], "properties": {"error": {"type": "string"}, "detail": {"type": "string"}}},
   "CheckRequest": {"type": "object", "properties": {
      "endpoint": {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": "^[^\\u0000]+$"},
      "package": {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": "^[^\\u0000]+$"},
      "name": {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": "^[^\\u0000]+$"},
      "tools": {"type": "array", "maxItems": 5000},
      "toolSetDigest": digest, "fullDigest": digest, "contribute": {"type": "boolean"}},
     "anyOf": [{"required": ["endpoint"]}, {"required": ["package"]}, {"required": ["name"]}]},
   "CheckAnswer": {"type": "object", "required": ["type", "checkedAt", "issuer", "query", "match", "log", "signature"], "properties": {
      "type": {"const": "toolmark.check/v1"}, "checkedAt": {"type": "string"}, "issuer": {"type": "string"},
      "query": obj, "target": obj, "observed": obj, "seenBefore": obj, "note": {"type": "string"},
      "match": {"type": "string", "enum": ["same", "different", "previously-observed", "not-observed", "not-listed", "undigestible", "no-digest"]},
      "log": {"type": "object", "required": ["origin", "treeSize", "rootHash", "checkpoint", "vkey"]},
      "proof": {"type": "object", "required": ["entryIndex", "entry", "tlogProof"], "properties": {"entryIndex": uint, "entry": {"type": "string"}, "tlogProof": {"type": "string"}}},
      "signature": {"type": "object", "required": ["alg", "keyId", "value"], "properties": {"alg": {"const": "Ed25519"}, "keyId": {"type": "string"}, "value": {"type": "string"}}}}},
   "TargetSummary": {"type": "object", "required": ["id", "name", "endpoint", "kind"], "properties": {"id": {"type": "string", "pattern": "^[0-9a-f]{16}$"}, "name": {"type": "string"}, "endpoint": {"type": "string"}, "kind": {"type": "string", "enum": ["remote", "package"]}, "lastStatus": nullable_str, "full": nullable_str, "mtl1": nullable_str}},
   "Change": {"type": "object", "required": ["id", "targetId", "server", "endpoint", "observedAt", "class"], "properties": {"id": {"type": "integer"}, "targetId": {"type": "string"}, "server": {"type": "string"}, "endpoint": {"type": "string"}, "observedAt": {"type": "string"}, "class": klass}},
 }}}
print(json.dumps(doc, indent=1, ensure_ascii=False))
