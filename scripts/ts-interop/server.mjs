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
// The HTTP plumbing and the tool helpers are peers/ts-sdk/shared.mjs's (the
// matrix's TypeScript peer adapters use them too).

import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema
} from '@modelcontextprotocol/sdk/types.js';

import {
  EVENT_GAP_MS,
  MAX_COUNT,
  MAX_WAIT_MS,
  intArg,
  serveSessions,
  sleep,
  text,
  toolError,
  toolErrors
} from '../../peers/ts-sdk/shared.mjs';

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
    return toolErrors(async () => {
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
    });
  });
  return server;
}

serveSessions({
  Transport: StreamableHTTPServerTransport,
  isInitializeRequest,
  transportOptions: { eventStore: new InMemoryEventStore(), retryInterval: opts.retryMs },
  makeServer,
  log,
  onRequest: (req, res, { sessionId }) => {
    log({
      event: 'request',
      method: req.method,
      session: sessionId ?? null,
      lastEventId: req.headers['last-event-id'] ?? null,
      protocolVersion: req.headers['mcp-protocol-version'] ?? null
    });
    res.on('close', () => log({ event: 'response', method: req.method, session: sessionId ?? null, status: res.statusCode }));
  }
});
