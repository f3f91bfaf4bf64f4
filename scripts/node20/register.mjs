// Preloaded with `node --import` by scripts/conformance.sh.
//
// The conformance suite's CLI (@modelcontextprotocol/conformance) imports
// `globSync` from `fs` when it loads; `fs.globSync` exists only from Node 22
// on, so on Node 20 the import fails before anything runs. On such a Node
// this registers hooks.mjs, which hands the suite's modules (and only
// theirs) fs-shim.mjs in place of `fs`. On a Node that has fs.globSync it
// does nothing.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register('./hooks.mjs', import.meta.url);
}
