#!/usr/bin/env node
// A TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) client for the interop
// tests (integration-tests/tests/ts_sdk.rs): `Client` over
// `StreamableHTTPClientTransport`.
//
// usage: node scripts/ts-interop/client.mjs URL [--protocol-version REV]
//          [--expect-version REV] [--count N] [--interval-ms N] [--close-ms N]
//          [--timeout-ms N] [--silent-ms N]
//
// Connects, calls `echo`, `countdown {n, interval_ms}` with an onprogress
// callback, and `close_stream {ms}` (with onprogress too), terminates the
// session (DELETE) and closes. Prints one JSON summary line on stdout:
//
//   {"ok":true,"protocolVersion":"…","sessionId":"…","echo":"…",
//    "countdown":{"text":"done","progress":[1,2,…],"logs":N,"resumptions":N},
//    "closeStream":{"text":"resumed","progress":[…],"logs":N,"resumptions":N},
//    "deleted":true,"deleteStatus":200,"http":[…],"transportErrors":[…]}
//
// "resumptions" counts the GETs with Last-Event-ID the transport sent during
// that call; "http" lists every HTTP request the transport made
// ({method, status, lastEventId, protocolVersion}), recorded by the `fetch`
// the transport was given.
//
// and exits 1 on any failure (an exception, an unexpected answer, progress
// that is not exactly 1..N, a negotiated version other than --expect-version),
// with the summary's "ok" false and "error" saying why.
//
// --protocol-version: the SDK's Client always offers its latest version
// (2025-11-25) in `initialize` and has no option to pin another; this flag
// rewrites the offered `protocolVersion` in the outgoing initialize request
// (a wrapper around the transport's send), which is what a client built on
// an older SDK would send. Without it the version is whatever the server
// answers (a server speaking only an older revision counter-offers it, and
// the SDK accepts any version it supports).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { firstText, isOneToN, offerVersion, recordingFetch, resumptionsSince } from '../../peers/ts-sdk/shared.mjs';

function usage(why) {
  process.stderr.write(
    `client.mjs: ${why}\nusage: node client.mjs URL [--protocol-version REV] [--expect-version REV] ` +
      '[--count N] [--interval-ms N] [--close-ms N] [--timeout-ms N] [--silent-ms N]\n'
  );
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { count: 5, intervalMs: 20, closeMs: 100, timeoutMs: 30_000 };
  const ints = { '--count': 'count', '--interval-ms': 'intervalMs', '--close-ms': 'closeMs', '--timeout-ms': 'timeoutMs', '--silent-ms': 'silentMs' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--protocol-version') opts.protocolVersion = argv[++i];
    else if (a === '--expect-version') opts.expectVersion = argv[++i];
    else if (a in ints) {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) usage(`bad ${a} ${argv[i]}`);
      opts[ints[a]] = v;
    } else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else if (opts.url === undefined) opts.url = a;
    else usage(`unexpected argument ${a}`);
  }
  if (opts.url === undefined) usage('missing URL');
  if (opts.count < 1) usage('--count must be at least 1');
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const summary = { ok: false, protocolVersion: null, sessionId: null, transportErrors: [] };

function fail(why) {
  throw new Error(why);
}

async function main() {
  const http = [];
  summary.http = http;
  const transport = new StreamableHTTPClientTransport(new URL(opts.url), { fetch: recordingFetch(http) });
  if (opts.protocolVersion !== undefined) offerVersion(transport, opts.protocolVersion);
  const client = new Client({ name: 'ts-sdk-interop-client', version: '1.32.2' }, { capabilities: {} });
  // Resumption shows up here too ("SSE stream disconnected: …" when a
  // connection ends without the response): informational, not a failure.
  client.onerror = e => summary.transportErrors.push(String(e?.message ?? e));
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, n => {
    logs.push(n.params);
  });

  await client.connect(transport);
  summary.protocolVersion = transport.protocolVersion ?? null;
  summary.sessionId = transport.sessionId ?? null;
  if (opts.expectVersion !== undefined && summary.protocolVersion !== opts.expectVersion) {
    fail(`negotiated ${summary.protocolVersion}, expected ${opts.expectVersion}`);
  }
  const callOpts = { timeout: opts.timeoutMs };

  // echo
  const echoText = 'hello from the TypeScript SDK';
  const echo = await client.callTool({ name: 'echo', arguments: { text: echoText } }, undefined, callOpts);
  summary.echo = firstText(echo);
  if (summary.echo !== echoText) fail(`echo answered ${JSON.stringify(echo)}`);

  // countdown, with progress
  let progress = [];
  let logsBefore = logs.length;
  let httpBefore = http.length;
  const countdown = await client.callTool(
    { name: 'countdown', arguments: { n: opts.count, interval_ms: opts.intervalMs } },
    undefined,
    { ...callOpts, onprogress: p => progress.push(p.progress) }
  );
  summary.countdown = {
    text: firstText(countdown),
    progress,
    logs: logs.length - logsBefore,
    resumptions: resumptionsSince(http, httpBefore)
  };
  if (summary.countdown.text !== 'done') fail(`countdown answered ${JSON.stringify(countdown)}`);
  if (!isOneToN(progress, opts.count)) fail(`countdown progress ${JSON.stringify(progress)}, expected 1..${opts.count}`);

  // close_stream: the server may close the SSE connection mid-call; the
  // transport resumes by GET with Last-Event-ID after the server's retry.
  progress = [];
  logsBefore = logs.length;
  httpBefore = http.length;
  const closed = await client.callTool({ name: 'close_stream', arguments: { ms: opts.closeMs } }, undefined, {
    ...callOpts,
    onprogress: p => progress.push(p.progress)
  });
  summary.closeStream = {
    text: firstText(closed),
    progress,
    logs: logs.length - logsBefore,
    resumptions: resumptionsSince(http, httpBefore)
  };
  if (closed.isError) fail(`close_stream answered ${JSON.stringify(closed)}`);

  // slow (with --silent-ms): a call that sends no event for that long, so
  // a policy that closes connections without events (after-priming,
  // after-ms, idle) makes the SDK resume while nothing new has happened.
  if (opts.silentMs !== undefined) {
    httpBefore = http.length;
    const slow = await client.callTool({ name: 'slow', arguments: { ms: opts.silentMs } }, undefined, callOpts);
    summary.slow = { text: firstText(slow), resumptions: resumptionsSince(http, httpBefore) };
    if (summary.slow.text !== `slept ${opts.silentMs} ms`) fail(`slow answered ${JSON.stringify(slow)}`);
  }

  // DELETE, then close
  httpBefore = http.length;
  await transport.terminateSession();
  summary.deleted = transport.sessionId === undefined;
  summary.deleteStatus = http.slice(httpBefore).find(e => e.method === 'DELETE')?.status ?? null;
  await client.close();
  summary.ok = true;
}

let code = 0;
try {
  await main();
} catch (e) {
  summary.ok = false;
  summary.error = String(e?.stack ?? e);
  code = 1;
}
process.stdout.write(JSON.stringify(summary) + '\n');
process.exit(code);
