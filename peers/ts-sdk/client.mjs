#!/usr/bin/env node
// The TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) client adapter of
// `mcp-compat matrix --peer ts-sdk` (peers/ts-sdk.toml).
//
// usage: node peers/ts-sdk/client.mjs URL SCENARIO REVISION
//
// Runs one scenario with the SDK's Client over StreamableHTTPClientTransport
// and prints one JSON line (the peer client contract, README "Peers"):
//   {"outcome": "pass"|"fail"|"n/a", "reason": "...", "revision": "2025-11-25"|null,
//    "stage": "connect"|"scenario", "resumed": true|false (disconnect only)}
// REVISION is the version put in `initialize` (the SDK always offers its
// latest and has no option for another, so the adapter rewrites the
// outgoing initialize); it accepts any version it supports in the answer.
// Scenarios: call (echo + add), progress (countdown, progress 1..3 once
// each), input (ask_name: elicitation answered "Ada"), disconnect
// (countdown 1..4 whose SSE stream the server closes after the 2nd event:
// every progress once, "resumed" says whether a GET with Last-Event-ID was sent).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';

import { firstText, isOneToN, offerVersion, recordingFetch } from './shared.mjs';

const [url, scenario, revision] = process.argv.slice(2);
const out = { outcome: 'fail', reason: '', revision: null, stage: 'connect' };
function done(outcome, reason, extra = {}) {
  Object.assign(out, { outcome, reason }, extra);
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(0);
}
if (!url || !scenario || !revision) {
  process.stderr.write('usage: node client.mjs URL SCENARIO REVISION\n');
  process.exit(2);
}
if (!['call', 'progress', 'input', 'disconnect'].includes(scenario)) done('n/a', `unknown scenario ${scenario}`);
if (revision === '2026-07-28') done('n/a', 'the TypeScript SDK 1.32.2 has no 2026-07-28');

async function main() {
  const http = [];
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch(http) });
  offerVersion(transport, revision);
  const client = new Client({ name: 'mcp-compat-peer-ts-sdk', version: '1.32.2' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }));
  try {
    await client.connect(transport);
  } catch (e) {
    done('fail', `connect: ${e?.message ?? e}`, { kind: 'no_mutual_revision' });
  }
  out.revision = transport.protocolVersion ?? null;
  out.stage = 'scenario';
  const opts = { timeout: 10_000 };
  const call = (name, args, extra = {}) => client.callTool({ name, arguments: args }, undefined, { ...opts, ...extra });
  switch (scenario) {
    case 'call': {
      const echo = firstText(await call('echo', { text: 'hello' }));
      const add = firstText(await call('add', { a: 2, b: 3 }));
      if (echo !== 'hello' || add !== '5') done('fail', `echo answered ${echo}, add answered ${add}`);
      done('pass', 'echo and add answered');
      break;
    }
    case 'progress':
    case 'disconnect': {
      const n = scenario === 'progress' ? 3 : 4;
      const args = scenario === 'progress' ? { n, interval_ms: 20 } : { n, interval_ms: 40, close_after: 2 };
      const progress = [];
      const mark = http.length;
      const r = await call('countdown', args, { onprogress: p => progress.push(p.progress) });
      const resumed = http.slice(mark).some(e => e.method === 'GET' && e.lastEventId !== null);
      const extra = scenario === 'disconnect' ? { resumed } : {};
      if (firstText(r) !== 'done') done('fail', `countdown answered ${JSON.stringify(r)}`, extra);
      if (!isOneToN(progress, n)) done('fail', `progress ${JSON.stringify(progress)}, not 1..${n} once each`, extra);
      done('pass', `progress 1..${n} once each${resumed ? ', resumed by GET with Last-Event-ID' : ''}`, extra);
      break;
    }
    case 'input': {
      // A JSON-RPC error instead of a question: what a server that cannot
      // send requests answers (a manifest's back_channel = false).
      // Not the SDK's own errors for a lost connection or a timeout.
      const r = await call('ask_name', {}).catch(e => {
        if (e?.code === ErrorCode.ConnectionClosed || e?.code === ErrorCode.RequestTimeout) throw e;
        done('fail', `JSON-RPC error: ${e?.message ?? e}`, { kind: 'no_back_channel' });
      });
      const t = firstText(r);
      if (r.isError) done('fail', `tool error: ${t}`, { kind: 'input_unavailable' });
      if (!t?.includes('Ada')) done('fail', `ask_name answered ${JSON.stringify(r)}`);
      done('pass', `ask_name answered ${JSON.stringify(t)}`);
    }
  }
}

main().catch(e => done('fail', String(e?.message ?? e)));
