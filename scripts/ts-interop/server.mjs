#!/usr/bin/env node
// A TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) Streamable HTTP server
// for the interop tests (integration-tests/tests/ts_sdk.rs).
//
// usage: node scripts/ts-interop/server.mjs [--retry-ms N]
//
// - Listens on 127.0.0.1, a free port; the first stdout line is
//   `listening on http://127.0.0.1:PORT/mcp`.
// - Session-based: one StreamableHTTPServerTransport (sessionIdGenerator)
//   and one low-level SDK `Server` per session, sharing the SDK's
//   InMemoryEventStore; `retryInterval` is --retry-ms (default 200).
// - Tools:
//     echo {text}                      answers the text
//     countdown {n, interval_ms}       n progress notifications (when the
//                                      request has a progressToken) and n log
//                                      messages, one every interval, then "done"
//     close_stream {ms, n, force}      progress 1 + a log, closes its SSE stream
//                                      with the SDK's `extra.closeSSEStream()`
//                                      (offered only to clients at >= 2025-11-25
//                                      with an event store), waits ms, sends
//                                      progress 2..n + a log, answers "resumed"
//                                      ("not closed" when nothing was closed).
//                                      force: true closes with
//                                      `transport.closeSSEStream(requestId)`
//                                      on any revision (a server-side drop).
// - stderr: one JSON object per line, for the tests to observe:
//     {"event":"request","method","session","lastEventId","protocolVersion"}
//     {"event":"response","method","session","status"}     (when it finished)
//     {"event":"session-initialized","session","requested"} (initialize's version)
//     {"event":"session-deleted","session"}                 (DELETE, onsessionclosed)
//     {"event":"transport-closed","session"}
//     {"event":"sse-closed","session","requestId","how"}    (close_stream)
//     {"event":"error","message"}
//
// The InMemoryEventStore orders events by `${streamId}_${Date.now()}_${random}`
// (docs/INTEROP.md): events stored in the same millisecond replay in random
// order, so the tools leave a few milliseconds between the events they send.

import { randomUUID } from 'node:crypto';
import http from 'node:http';

import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema
} from '@modelcontextprotocol/sdk/types.js';

const PATH = '/mcp';
/** The least time between two events of one stream (see the header). */
const EVENT_GAP_MS = 3;
const MAX_WAIT_MS = 30_000;
const MAX_COUNT = 1000;

function parseArgs(argv) {
  const opts = { retryMs: 200 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--retry-ms') {
      opts.retryMs = Number(argv[++i]);
      if (!Number.isInteger(opts.retryMs) || opts.retryMs < 0) usage(`bad --retry-ms ${argv[i]}`);
    } else {
      usage(`unknown argument ${a}`);
    }
  }
  return opts;
}

function usage(why) {
  process.stderr.write(`server.mjs: ${why}\nusage: node server.mjs [--retry-ms N]\n`);
  process.exit(2);
}

const opts = parseArgs(process.argv.slice(2));

function log(event) {
  process.stderr.write(JSON.stringify(event) + '\n');
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

const TOOLS = [
  {
    name: 'echo',
    description: 'Answers the text.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }
  },
  {
    name: 'countdown',
    description: 'Sends n progress and log notifications, one every interval_ms, then answers done.',
    inputSchema: {
      type: 'object',
      properties: { n: { type: 'integer' }, interval_ms: { type: 'integer' } },
      required: ['n']
    }
  },
  {
    name: 'close_stream',
    description: 'Closes its SSE stream mid-call (SEP-1699), sends more progress, then answers.',
    inputSchema: {
      type: 'object',
      properties: { ms: { type: 'integer' }, n: { type: 'integer' }, force: { type: 'boolean' } }
    }
  }
];

function text(t) {
  return { content: [{ type: 'text', text: t }] };
}

function toolError(t) {
  return { content: [{ type: 'text', text: t }], isError: true };
}

function intArg(args, key, dflt, max) {
  const v = args?.[key];
  if (v === undefined) {
    if (dflt === undefined) throw new Error(`missing argument ${key}`);
    return dflt;
  }
  if (!Number.isInteger(v) || v < 0 || v > max) throw new Error(`${key} must be an integer in 0..=${max}`);
  return v;
}

/** One session's server: the tools, with `transport` for `force`. */
function makeServer(transport) {
  const server = new Server(
    { name: 'ts-sdk-interop-server', version: '1.32.2' },
    { capabilities: { tools: {}, logging: {} } }
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    const token = extra._meta?.progressToken;
    const progress = async (p, total, message) => {
      if (token !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: p, total, message }
        });
        await sleep(EVENT_GAP_MS);
      }
    };
    const logMessage = async (logger, data) => {
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', logger, data } });
      await sleep(EVENT_GAP_MS);
    };
    try {
      switch (request.params.name) {
        case 'echo':
          if (typeof args.text !== 'string') return toolError('missing string argument text');
          return text(args.text);
        case 'countdown': {
          const n = intArg(args, 'n', undefined, MAX_COUNT);
          const interval = Math.max(intArg(args, 'interval_ms', 10, MAX_WAIT_MS), EVENT_GAP_MS);
          for (let i = 1; i <= n; i++) {
            await sleep(interval);
            await progress(i, n, `${n - i} left`);
            await logMessage('countdown', `${n - i} left`);
          }
          return text('done');
        }
        case 'close_stream': {
          const ms = intArg(args, 'ms', 100, MAX_WAIT_MS);
          const n = Math.max(intArg(args, 'n', 3, MAX_COUNT), 1);
          const force = args.force === true;
          await progress(1, n, 'before close');
          await logMessage('close_stream', 'before close');
          let how = null;
          if (extra.closeSSEStream) {
            extra.closeSSEStream();
            how = 'extra.closeSSEStream';
          } else if (force) {
            transport.closeSSEStream(extra.requestId);
            how = 'transport.closeSSEStream';
          }
          log({ event: 'sse-closed', session: extra.sessionId, requestId: extra.requestId, how });
          await sleep(ms);
          for (let i = 2; i <= n; i++) await progress(i, n, 'after close');
          await logMessage('close_stream', 'after close');
          return text(how ? 'resumed' : 'not closed');
        }
        default:
          return toolError(`unknown tool ${request.params.name}`);
      }
    } catch (e) {
      return toolError(e instanceof Error ? e.message : String(e));
    }
  });
  return server;
}

const eventStore = new InMemoryEventStore();
/** session id -> transport */
const sessions = new Map();

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

async function handle(req, res) {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const sessionId = req.headers['mcp-session-id'];
  log({
    event: 'request',
    method: req.method,
    session: sessionId ?? null,
    lastEventId: req.headers['last-event-id'] ?? null,
    protocolVersion: req.headers['mcp-protocol-version'] ?? null
  });
  res.on('close', () => log({ event: 'response', method: req.method, session: sessionId ?? null, status: res.statusCode }));
  if (url.pathname !== PATH) return jsonError(res, 404, -32000, `no endpoint at ${url.pathname}`);

  let body;
  if (req.method === 'POST') {
    const raw = await readBody(req);
    try {
      body = JSON.parse(raw);
    } catch {
      return jsonError(res, 400, -32700, 'Parse error: Invalid JSON');
    }
  }

  if (sessionId !== undefined) {
    const transport = sessions.get(sessionId);
    if (!transport) return jsonError(res, 404, -32001, 'Session not found');
    return transport.handleRequest(req, res, body);
  }
  if (req.method !== 'POST' || !isInitializeRequest(body)) {
    return jsonError(res, 400, -32000, 'Bad Request: no Mcp-Session-Id and not an initialize request');
  }

  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    eventStore,
    retryInterval: opts.retryMs,
    onsessioninitialized: id => {
      sessions.set(id, transport);
      log({ event: 'session-initialized', session: id, requested: body.params?.protocolVersion ?? null });
    },
    onsessionclosed: id => {
      log({ event: 'session-deleted', session: id });
    }
  });
  transport.onclose = () => {
    const id = transport.sessionId;
    if (id !== undefined) sessions.delete(id);
    log({ event: 'transport-closed', session: id ?? null });
  };
  const server = makeServer(transport);
  server.onerror = e => log({ event: 'error', message: String(e) });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

const httpServer = http.createServer((req, res) => {
  handle(req, res).catch(e => {
    log({ event: 'error', message: String(e?.stack ?? e) });
    if (!res.headersSent) jsonError(res, 500, -32603, 'Internal error');
    else res.destroy();
  });
});

httpServer.listen(0, '127.0.0.1', () => {
  const { port } = httpServer.address();
  process.stdout.write(`listening on http://127.0.0.1:${port}${PATH}\n`);
});

const stop = () => {
  for (const t of sessions.values()) t.close().catch(() => {});
  httpServer.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
