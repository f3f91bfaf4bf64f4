// Expected-failures baselines for scripts/conformance.sh.
//
// conformance/expected-failures-*.yml use the suite's format (a `server` or
// `client` list of `<scenario>` or `<scenario>:<check-id>` entries, reasons
// as comments) plus optional per-revision lists `server@<revision>`: the
// same scenario runs once per wire revision, and an entry that fails on one
// revision but passes on another would otherwise be reported stale on the
// passing one. The suite reads only `server`/`client`; this helper derives
// the file for one run.
//
//   node baseline.mjs derive  NODE_MODULES FILE LEG REVISION OUT
//       writes OUT: LEG = entries of LEG + entries of LEG@REVISION
//   node baseline.mjs unrun   NODE_MODULES FILE LEG RESULTS
//       prints the entries whose scenario never ran: RESULTS/<revision>/...
//       must hold a `[<leg>-]<scenario>-<timestamp>/checks.json` for it
//       (any revision for LEG entries, that revision for LEG@REVISION ones)
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [mode, nodeModules, file, leg, arg, out] = process.argv.slice(2);
const usage = () => {
  console.error('usage: baseline.mjs derive NODE_MODULES FILE LEG REVISION OUT | unrun NODE_MODULES FILE LEG RESULTS');
  process.exit(2);
};
if (!mode || !nodeModules || !file || !leg || !arg) usage();

const YAML = createRequire(path.join(path.resolve(nodeModules), 'noop.js'))('yaml');
const doc = YAML.parse(fs.readFileSync(file, 'utf8')) ?? {};
if (typeof doc !== 'object' || Array.isArray(doc)) {
  console.error(`${file}: expected a mapping of ${leg} / ${leg}@<revision> lists`);
  process.exit(2);
}
const lists = {};
for (const [key, value] of Object.entries(doc)) {
  if (key !== leg && !key.startsWith(`${leg}@`)) continue;
  if (value == null) continue;
  if (!Array.isArray(value) || value.some((e) => typeof e !== 'string' || e === '')) {
    console.error(`${file}: '${key}' must be a list of '<scenario>' or '<scenario>:<check-id>' strings`);
    process.exit(2);
  }
  lists[key] = value;
}

if (mode === 'derive') {
  if (!out) usage();
  const entries = [...(lists[leg] ?? []), ...(lists[`${leg}@${arg}`] ?? [])];
  fs.writeFileSync(out, YAML.stringify({ [leg]: entries }));
} else if (mode === 'unrun') {
  const ran = (revision, scenario) => {
    const dirs = revision ? [path.join(arg, revision)] : fs.readdirSync(arg).map((d) => path.join(arg, d));
    const esc = (t) => t.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
    // Server results are `<leg>-<scenario>-<time>`, client ones `<scenario>-<time>`.
    const name = new RegExp(`^(?:${esc(leg)}-)?${esc(scenario)}-\\d{4}-\\d{2}-\\d{2}T`);
    const found = (dir) => {
      let entries;
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
      } catch {
        return false;
      }
      return entries.some((e) =>
        e.isDirectory() &&
        ((name.test(e.name) && fs.existsSync(path.join(dir, e.name, 'checks.json'))) ||
          found(path.join(dir, e.name))));
    };
    return dirs.some(found);
  };
  for (const [key, entries] of Object.entries(lists)) {
    const revision = key.includes('@') ? key.slice(key.indexOf('@') + 1) : undefined;
    for (const entry of entries) {
      const scenario = entry.split(':')[0];
      if (!ran(revision, scenario)) console.log(`${key}: ${entry}`);
    }
  }
} else {
  usage();
}
