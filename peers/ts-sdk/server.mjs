#!/usr/bin/env node
// The TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) server adapter of
// `mcp-compat matrix --peer ts-sdk` (peers/ts-sdk.toml).
//
// usage: node peers/ts-sdk/server.mjs --port PORT [--mode sse|json] [--retry-ms N]
//
// Session-based (StreamableHTTPServerTransport with sessionIdGenerator, one
// low-level Server per session). `sse`: SSE answers with the SDK's
// InMemoryEventStore and `retryInterval` (SEP-1699 on 2025-11-25 sessions);
// `json`: `enableJsonResponse`, no event store. Listens on 127.0.0.1:PORT
// and prints `listening on http://127.0.0.1:PORT/mcp`.
//
// The reference tools:
//   echo {text}                         answers the text
//   add {a, b}                          answers a + b as text
//   countdown {n, interval_ms, close_after}
//                                       n progress notifications (with a
//                                       progressToken), one every interval,
//                                       then "done"; with close_after: K it
//                                       closes its SSE stream after the K-th
//                                       (`extra.closeSSEStream`, which the SDK
//                                       offers only with an event store to
//                                       clients at >= 2025-11-25)
//   slow {ms}                           answers "slept" after ms
//   ask_name {}                         elicits {name}, answers "hello, NAME"
//   close_stream {ms}                   closes its SSE stream when the SDK can,
//                                       waits ms, answers "resumed" / "not closed"
import { randomUUID } from 'node:crypto';
import http from 'node:http';

import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  isInitializeRequest,
  ListToolsRequestSchema
} from '@modelcontextprotocol/sdk/types.js';

/** The SDK's InMemoryEventStore loses events stored in one millisecond
 * (docs/INTEROP.md): leave a gap between the events a tool sends. */
const EVENT_GAP_MS = 3;
const MAX_WAIT_MS = 30_000;
const MAX_COUNT = 1000;
/** Sessions kept at most; the oldest is closed beyond that. */
const MAX_SESSIONS = 256;

function usage(why) {
  process.stderr.write(`server.mjs: ${why}\nusage: node server.mjs --port PORT [--mode sse|json] [--retry-ms N]\n`);
  process.exit(2);
}

const opts = { port: undefined, mode: 'sse', retryMs: 150 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--port') opts.port = Number(argv[++i]);
  else if (a === '--mode') opts.mode = argv[++i];
  else if (a === '--retry-ms') opts.retryMs = Number(argv[++i]);
  else usage(`unknown argument ${a}`);
}
if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) usage('--port PORT is required');
if (!['sse', 'json'].includes(opts.mode)) usage(`bad --mode ${opts.mode}`);

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
const obj = (properties, required = []) => ({ type: 'object', properties, required });
const TOOLS = [
  { name: 'echo', description: 'Answers the text.', inputSchema: obj({ text: { type: 'string' } }, ['text']) },
  { name: 'add', description: 'Answers a + b.', inputSchema: obj({ a: { type: 'number' }, b: { type: 'number' } }, ['a', 'b']) },
  {
    name: 'countdown',
    description: 'n progress notifications, then done; close_after K closes the SSE stream after the K-th.',
    inputSchema: obj({ n: { type: 'integer' }, interval_ms: { type: 'integer' }, close_after: { type: 'integer' } }, ['n'])
  },
  { name: 'slow', description: 'Answers after ms.', inputSchema: obj({ ms: { type: 'integer' } }) },
  { name: 'ask_name', description: 'Asks the client for a name (elicitation).', inputSchema: obj({}) },
  { name: 'close_stream', description: 'Closes its SSE stream mid-call, then answers.', inputSchema: obj({ ms: { type: 'integer' } }) }
];

const text = t => ({ content: [{ type: 'text', text: t }] });
const toolError = t => ({ content: [{ type: 'text', text: t }], isError: true });

function intArg(args, key, dflt, max) {
  const v = args?.[key];
  if (v === undefined) {
    if (dflt === undefined) throw new Error(`missing argument ${key}`);
    return dflt;
  }
  if (!Number.isInteger(v) || v < 0 || v > max) throw new Error(`${key} must be an integer in 0..=${max}`);
  return v;
}

function makeServer() {
  const server = new Server({ name: 'mcp-compat-peer-ts-sdk', version: '1.32.2' }, { capabilities: { tools: {}, logging: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    const token = extra._meta?.progressToken;
    try {
      switch (request.params.name) {
        case 'echo':
          if (typeof args.text !== 'string') return toolError('missing string argument text');
          return text(args.text);
        case 'add':
          if (typeof args.a !== 'number' || typeof args.b !== 'number') return toolError('a and b must be numbers');
          return text(String(args.a + args.b));
        case 'countdown': {
          const n = intArg(args, 'n', undefined, MAX_COUNT);
          const interval = Math.max(intArg(args, 'interval_ms', 10, MAX_WAIT_MS), EVENT_GAP_MS);
          const closeAfter = intArg(args, 'close_after', 0, MAX_COUNT);
          for (let i = 1; i <= n; i++) {
            await sleep(interval);
            if (token !== undefined) {
              await extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress: i, total: n }
              });
              await sleep(EVENT_GAP_MS);
            }
            if (i === closeAfter && extra.closeSSEStream) extra.closeSSEStream();
          }
          return text('done');
        }
        case 'slow':
          await sleep(intArg(args, 'ms', 100, MAX_WAIT_MS));
          return text('slept');
        case 'ask_name': {
          const answer = await server.request(
            {
              method: 'elicitation/create',
              params: {
                message: 'What is your name?',
                requestedSchema: obj({ name: { type: 'string' } }, ['name'])
              }
            },
            ElicitResultSchema,
            { relatedRequestId: extra.requestId }
          );
          if (answer.action !== 'accept') return text(`no name (${answer.action})`);
          return text(`hello, ${answer.content?.name}`);
        }
        case 'close_stream': {
          const ms = intArg(args, 'ms', 100, MAX_WAIT_MS);
          const closed = typeof extra.closeSSEStream === 'function';
          if (closed) extra.closeSSEStream();
          await sleep(ms);
          return text(closed ? 'resumed' : 'not closed');
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

const eventStore = opts.mode === 'sse' ? new InMemoryEventStore() : undefined;
const sessions = new Map();

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

const MAX_BODY = 4 * 1024 * 1024;
async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const c of req) {
    size += c.length;
    if (size > MAX_BODY) throw new Error('body too large');
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function handle(req, res) {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname !== '/mcp') return jsonError(res, 404, -32000, `no endpoint at ${url.pathname}`);
  let body;
  if (req.method === 'POST') {
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return jsonError(res, 400, -32700, 'Parse error');
    }
  }
  const sessionId = req.headers['mcp-session-id'];
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
    enableJsonResponse: opts.mode === 'json',
    onsessioninitialized: id => {
      sessions.set(id, transport);
      if (sessions.size > MAX_SESSIONS) sessions.values().next().value?.close();
    },
    onsessionclosed: id => sessions.delete(id)
  });
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
  };
  await makeServer().connect(transport);
  return transport.handleRequest(req, res, body);
}

const httpServer = http.createServer((req, res) => {
  handle(req, res).catch(e => {
    if (!res.headersSent) jsonError(res, 500, -32603, String(e?.message ?? e));
    else res.end();
  });
});
httpServer.headersTimeout = 30_000;
httpServer.requestTimeout = 120_000;
httpServer.listen(opts.port, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${httpServer.address().port}/mcp\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
