// `node:fs` plus a small `globSync` for Node versions that lack it (see
// register.mjs). The suite uses it only to find result files
// (`**/checks.json` under an output directory), so this supports what such
// patterns need: `**` (any number of directories), `*` and `?` within one
// path segment, and the `cwd` option; results are paths relative to `cwd`,
// with `/` separators, sorted.
import fs from 'node:fs';
import path from 'node:path';

export * from 'node:fs';
export default fs;

function toRegExp(pattern) {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      i++;
      if (pattern[i + 1] === '/') {
        i++;
        re += '(?:.*/)?';
      } else {
        re += '.*';
      }
    } else if (c === '*') {
      re += '[^/]*';
    } else if (c === '?') {
      re += '[^/]';
    } else {
      re += c.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
    }
  }
  return new RegExp(`^${re}$`);
}

function walk(root, rel, out) {
  let entries;
  try {
    entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const child = rel ? `${rel}/${e.name}` : e.name;
    out.push(child);
    if (e.isDirectory()) walk(root, child, out);
  }
}

export function globSync(patterns, options = {}) {
  const cwd = options.cwd ? String(options.cwd) : process.cwd();
  const res = (Array.isArray(patterns) ? patterns : [patterns]).map(toRegExp);
  const all = [];
  walk(cwd, '', all);
  return all.filter((p) => res.some((re) => re.test(p))).sort();
}
