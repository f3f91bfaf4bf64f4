// Module resolution hook (see register.mjs): `fs` / `node:fs` imported from
// inside the conformance package resolves to fs-shim.mjs; every other import
// resolves as usual.
const shim = new URL('./fs-shim.mjs', import.meta.url).href;
const SUITE = '/@modelcontextprotocol/conformance/';

export async function resolve(specifier, context, nextResolve) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes(SUITE)) {
    return { url: shim, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
