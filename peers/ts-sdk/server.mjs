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
// and prints `listening on http://127.0.0.1:PORT/mcp` (the HTTP plumbing is
// shared.mjs's, shared with scripts/ts-interop).
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
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  isInitializeRequest,
  ListToolsRequestSchema
} from '@modelcontextprotocol/sdk/types.js';

import { EVENT_GAP_MS, MAX_COUNT, MAX_WAIT_MS, intArg, obj, serveSessions, sleep, text, toolError, toolErrors } from './shared.mjs';

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

function makeServer() {
  const server = new Server({ name: 'mcp-compat-peer-ts-sdk', version: '1.32.2' }, { capabilities: { tools: {}, logging: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    const token = extra._meta?.progressToken;
    return toolErrors(async () => {
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
    });
  });
  return server;
}

serveSessions({
  port: opts.port,
  Transport: StreamableHTTPServerTransport,
  isInitializeRequest,
  transportOptions: {
    eventStore: opts.mode === 'sse' ? new InMemoryEventStore() : undefined,
    retryInterval: opts.retryMs,
    enableJsonResponse: opts.mode === 'json'
  },
  makeServer
});
