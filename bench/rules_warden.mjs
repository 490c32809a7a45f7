// WARDEN's static scan (npm @aimarket/warden, StaticScanGate) over the labelled rules corpus and
// over timing sets, for bench/rules.sh. WARDEN scans name, description and inputSchema only; an
// entry that is server instructions (WARDEN has no instructions surface) is scanned as the
// description of a tool with an empty name.
//
//   node bench/rules_warden.mjs WARDEN_DIR ruleset
//       one JSON line: {"package","version","ruleset":{version,digest},"rules"}
//   node bench/rules_warden.mjs WARDEN_DIR classify FILE.jsonl...
//       one JSON line per entry: {"file","id","kind","any","block","codes"}
//   node bench/rules_warden.mjs WARDEN_DIR speed ITERATIONS SET.json...
//       one JSON line per file: {"file","sets","tools","iterations","median_ms","min_ms","findings"}
//       (a file is one tools/list result, or {"sets": [result, ...]} scanned set by set)
//       (each iteration is one StaticScanGate.evaluate over the already parsed set, timed with
//       performance.now(); three warm-up scans first)
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

const [dir, mode, ...rest] = process.argv.slice(2);
const pkgDir = join(dir, "node_modules", "@aimarket", "warden");
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const warden = await import(pathToFileURL(join(pkgDir, "dist", "index.js")).href);
const gate = new warden.StaticScanGate();
const input = (tools) => ({
  server: { id: "bench", name: "bench", transport: "stdio" },
  tools,
  prior: [],
  policy: { blockAtSeverity: "high" },
});

async function scan(tools) {
  const { findings } = await gate.evaluate(input(tools));
  return findings;
}

if (mode === "ruleset") {
  const rs = warden.staticScanRuleset();
  console.log(JSON.stringify({
    package: pkg.name,
    version: pkg.version,
    ruleset: { version: rs.version, digest: rs.digest },
    rules: rs.rules.length,
  }));
} else if (mode === "classify") {
  for (const file of rest) {
    const name = basename(file);
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (!line.trim()) continue;
      const e = JSON.parse(line);
      const kind = e.tool ? "tool" : "instructions";
      const tool = e.tool ?? { name: "", description: e.instructions, inputSchema: {} };
      const findings = await scan([tool]);
      console.log(JSON.stringify({
        file: name,
        id: e.id,
        kind,
        any: findings.length > 0,
        block: findings.some((f) => !f.advisory),
        codes: [...new Set(findings.map((f) => (f.advisory ? "advise:" : "block:") + f.code))],
      }));
    }
  }
} else if (mode === "speed") {
  const iterations = Number(rest[0]);
  for (const file of rest.slice(1)) {
    // A file holds one set ({"tools": [...]}) or several ({"sets": [{"tools": [...]}, ...]}):
    // an iteration scans every set of the file.
    const doc = JSON.parse(readFileSync(file, "utf8"));
    const sets = doc.sets ? doc.sets.map((s) => s.tools) : [doc.tools];
    const tools = sets.flat();
    let findings = 0;
    for (let i = 0; i < 3; i++) {
      findings = 0;
      for (const set of sets) findings += (await scan(set)).length;
    }
    const times = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = performance.now();
      for (const set of sets) await scan(set);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    console.log(JSON.stringify({
      file: basename(file),
      sets: sets.length,
      tools: tools.length,
      iterations,
      median_ms: times[Math.floor(times.length / 2)],
      min_ms: times[0],
      findings,
    }));
  }
} else {
  console.error("usage: rules_warden.mjs WARDEN_DIR ruleset | classify FILE... | speed N SET...");
  process.exit(2);
}
