#!/usr/bin/env node
// A deliberately broken Streamable HTTP client (plain fetch, no SDK) for
// testing `mcp-compat check-client` (cli/tests/peers_matrix.rs): it must be
// caught. The peer client contract: URL SCENARIO REVISION -> one JSON line.
//
// usage: node peers/testing/broken-client.mjs BUG URL SCENARIO REVISION
//   BUG: none | ignore-retry (resumes at once) | resume-with-post (sends the
//        call again instead of GET + Last-Event-ID) | cancel-on-disconnect
//        (sends notifications/cancelled when the server closes the stream,
//        then resumes) | no-reinit (gives up on a 404 instead of starting a
//        new session) | no-dedupe (processes an event whose id it already
//        had) | no-fallback (as `auto`, gives up when the modern request is
//        refused instead of falling back to initialize)
// Scenarios: call (echo + add) and disconnect; the others are n/a.
// REVISION `auto`: dual-era, a modern request first (server/discover), then
// initialize at 2025-11-25 when it is refused without a modern error; the
// modern era itself is n/a (this client speaks only the legacy revisions).
const [bug, url, scenario, revision] = process.argv.slice(2);
const out = { outcome: 'fail', reason: '', revision: null, stage: 'connect' };
const done = (outcome, reason, extra = {}) => {
  process.stdout.write(JSON.stringify({ ...out, outcome, reason, ...extra }) + '\n');
  process.exit(0);
};
const BUGS = ['none', 'ignore-retry', 'resume-with-post', 'cancel-on-disconnect', 'no-reinit', 'no-dedupe', 'no-fallback'];
if (!BUGS.includes(bug)) {
  process.stderr.write('usage: broken-client.mjs BUG URL SCENARIO REVISION\n');
  process.exit(2);
}
if (!['call', 'disconnect'].includes(scenario)) done('n/a', 'this test client runs only call and disconnect');
if (revision === '2026-07-28') done('n/a', 'this test client speaks only the legacy revisions');
setTimeout(() => done('fail', 'no outcome within 20 s'), 20_000).unref();

let session = null;
let nextId = 1;
/** Event ids already processed (a replayed one is dropped). */
const seenIds = new Set();
const sleep = ms => new Promise(r => setTimeout(r, ms));
function headers(extra = {}) {
  const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra };
  if (session) h['mcp-session-id'] = session;
  if (out.revision) h['mcp-protocol-version'] = out.revision;
  return h;
}

/** Reads an SSE or JSON response: messages, the last event id, retry. */
async function read(resp) {
  const state = { messages: [], lastId: null, retry: null };
  if (!(resp.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const text = await resp.text();
    if (text) state.messages.push(JSON.parse(text));
    return state;
  }
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of resp.body) {
    buf += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let data = '';
      let id = null;
      for (const line of event.split('\n')) {
        const [field, ...rest] = line.split(':');
        const value = rest.join(':').replace(/^ /, '');
        if (field === 'id') id = value;
        else if (field === 'retry') state.retry = Number(value);
        else if (field === 'data') data += value;
      }
      if (id !== null) state.lastId = id;
      const replayed = id !== null && seenIds.has(id);
      if (id !== null) seenIds.add(id);
      if (data && (!replayed || bug === 'no-dedupe')) state.messages.push(JSON.parse(data));
    }
  }
  return state;
}

async function post(message, extra) {
  const resp = await fetch(url, { method: 'POST', headers: headers(extra), body: JSON.stringify(message) });
  if (resp.headers.get('mcp-session-id')) session = resp.headers.get('mcp-session-id');
  return resp;
}

async function call(name, args, meta) {
  const id = nextId++;
  const params = { name, arguments: args, ...(meta ? { _meta: meta } : {}) };
  return { id, resp: await post({ jsonrpc: '2.0', id, method: 'tools/call', params }) };
}

const answer = (state, id) => state.messages.find(m => m.id === id && !m.method);
const text = m => m?.result?.content?.[0]?.text;

async function initialize(offer) {
  session = null;
  out.revision = null;
  const init = await post({
    jsonrpc: '2.0', id: nextId++, method: 'initialize',
    params: { protocolVersion: offer, capabilities: {}, clientInfo: { name: 'broken-client', version: '0' } }
  });
  const initState = await read(init);
  const version = initState.messages[0]?.result?.protocolVersion;
  if (!version) done('fail', `initialize answered ${init.status} ${JSON.stringify(initState.messages)}`, { kind: 'no_mutual_revision' });
  out.revision = version;
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
}

/** The modern probe of a dual-era client: true when the server is legacy. */
async function legacyServer() {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'broken-client', version: '0' },
    'io.modelcontextprotocol/clientCapabilities': {}
  };
  const resp = await fetch(url, {
    method: 'POST',
    headers: { ...headers({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' }) },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'server/discover', params: { _meta: meta } })
  });
  const body = await resp.text();
  if (resp.ok) return false;
  let modernError = false;
  try {
    const code = JSON.parse(body)?.error?.code;
    modernError = [-32022, -32021, -32020].includes(code);
  } catch {}
  if (modernError) return false;
  if (bug === 'no-fallback') done('fail', `the modern request was refused (${resp.status}); no fall-back`, { kind: 'no_mutual_revision' });
  return true;
}

/** A tools/call answered; on a 404 for the session, a new session first. */
async function answered(name, args) {
  let c = await call(name, args);
  if (c.resp.status === 404 && session) {
    await c.resp.text();
    if (bug === 'no-reinit') done('fail', `${name}: 404 for the session; not re-initializing`);
    await initialize(out.revision);
    c = await call(name, args);
  }
  return text(answer(await read(c.resp), c.id));
}

async function main() {
  let offer = revision;
  if (revision === 'auto') {
    if (!(await legacyServer())) done('n/a', 'a modern server: this test client speaks only the legacy revisions');
    offer = '2025-11-25';
  }
  await initialize(offer);
  out.stage = 'scenario';
  if (scenario === 'call') {
    const echo = await answered('echo', { text: 'hello' });
    const add = await answered('add', { a: 2, b: 3 });
    if (echo !== 'hello' || add !== '5') done('fail', `echo ${echo}, add ${add}`);
    done('pass', 'echo and add answered');
  }
  const c = await call('countdown', { n: 4, interval_ms: 40, close_after: 2 }, { progressToken: 'p' });
  let state = await read(c.resp);
  const progress = state.messages.filter(m => m.method === 'notifications/progress').map(m => m.params.progress);
  let resumed = false;
  while (!answer(state, c.id)) {
    if (state.lastId === null) done('fail', 'the stream closed with no event id to resume from');
    if (bug === 'resume-with-post') {
      const again = await call('countdown', { n: 4, interval_ms: 40 }, { progressToken: 'p2' });
      const s = await read(again.resp);
      done(answer(s, again.id) ? 'pass' : 'fail', 'called again by POST instead of resuming', { resumed: false });
    }
    if (bug !== 'ignore-retry') await sleep(state.retry ?? 1000);
    if (bug === 'cancel-on-disconnect') {
      await (await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: c.id } })).text();
    }
    const get = await fetch(url, { method: 'GET', headers: { ...headers(), 'last-event-id': state.lastId } });
    resumed = true;
    const next = await read(get);
    progress.push(...next.messages.filter(m => m.method === 'notifications/progress').map(m => m.params.progress));
    state = { ...next, lastId: next.lastId ?? state.lastId, retry: next.retry ?? state.retry };
  }
  const ok = JSON.stringify(progress) === '[1,2,3,4]' && text(answer(state, c.id)) === 'done';
  done(ok ? 'pass' : 'fail', `progress ${JSON.stringify(progress)}`, { resumed });
}

main().catch(e => done('fail', String(e?.message ?? e)));
