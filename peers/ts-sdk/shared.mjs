// What the TypeScript SDK programs share: the peer adapters of
// `mcp-compat matrix --peer ts-sdk` (peers/ts-sdk/server.mjs, client.mjs)
// and the interop scripts (scripts/ts-interop/*.mjs, driven by
// integration-tests/tests/ts_sdk.rs).
//
// It imports nothing from the SDK: the two install it in different folders
// (.cache/peer-ts-sdk, .cache/ts-sdk), and a module resolves packages from
// its own folder, so the callers hand in the SDK classes they imported.
//
// Server side: `serveSessions`, the session-based Streamable HTTP plumbing
// (one SDK transport and one SDK server per session, bounded), and the
// tool helpers. Client side: a `fetch` that records every HTTP request the
// transport makes, and `offerVersion`, which makes the SDK client offer
// another protocol version in `initialize`.
import { randomUUID } from 'node:crypto';
import http from 'node:http';

/** The SDK's InMemoryEventStore orders event ids
 * `${streamId}_${Date.now()}_${random}` as strings: events stored in one
 * millisecond replay in random order (docs/INTEROP.md), so a tool leaves
 * this gap between the events it sends. */
export const EVENT_GAP_MS = 3;
/** The longest wait a tool argument may ask for. */
export const MAX_WAIT_MS = 30_000;
/** The most events a tool argument may ask for. */
export const MAX_COUNT = 1000;
/** The largest request body read. */
export const MAX_BODY = 4 * 1024 * 1024;
/** Sessions kept at most; the oldest is closed beyond that. */
export const MAX_SESSIONS = 256;

export const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

/** An object schema. */
export const obj = (properties, required = []) => ({ type: 'object', properties, required });

/** A tool result of one text block. */
export const text = t => ({ content: [{ type: 'text', text: t }] });

/** A tool execution error (`isError`) of one text block. */
export const toolError = t => ({ content: [{ type: 'text', text: t }], isError: true });

/** Integer argument `key` in 0..=max (`dflt` when absent; required when
 * `dflt` is undefined); throws with the reason otherwise. */
export function intArg(args, key, dflt, max) {
  const v = args?.[key];
  if (v === undefined) {
    if (dflt === undefined) throw new Error(`missing argument ${key}`);
    return dflt;
  }
  if (!Number.isInteger(v) || v < 0 || v > max) throw new Error(`${key} must be an integer in 0..=${max}`);
  return v;
}

/** Runs the tool body `run`; an exception becomes a tool error. */
export async function toolErrors(run) {
  try {
    return await run();
  } catch (e) {
    return toolError(e instanceof Error ? e.message : String(e));
  }
}

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

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

/**
 * A session-based Streamable HTTP server on 127.0.0.1:`port` (0: a free
 * one) at `path`; prints `listening on http://127.0.0.1:PORT/mcp` once
 * listening, and closes every session on SIGTERM/SIGINT.
 *
 * - `Transport`, `isInitializeRequest`: the SDK's
 *   StreamableHTTPServerTransport and type guard;
 * - `transportOptions`: more options for each session's transport
 *   (`eventStore`, `retryInterval`, `enableJsonResponse`);
 * - `makeServer(transport)`: the session's SDK server (it is connected to
 *   `transport` here);
 * - `log(event)`: observed events (`session-initialized`,
 *   `session-deleted`, `transport-closed`, `error`), default none;
 * - `onRequest(req, res, { sessionId, body })`: called for each request
 *   to `path` once its body is read.
 */
export function serveSessions({
  port = 0,
  path = '/mcp',
  Transport,
  isInitializeRequest,
  transportOptions = {},
  makeServer,
  log = () => {},
  onRequest = () => {}
}) {
  /** session id -> transport */
  const sessions = new Map();

  async function handle(req, res) {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== path) return jsonError(res, 404, -32000, `no endpoint at ${url.pathname}`);
    const sessionId = req.headers['mcp-session-id'];
    let body;
    if (req.method === 'POST') {
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        return jsonError(res, 400, -32700, 'Parse error: Invalid JSON');
      }
    }
    onRequest(req, res, { sessionId, body });
    if (sessionId !== undefined) {
      const transport = sessions.get(sessionId);
      if (!transport) return jsonError(res, 404, -32001, 'Session not found');
      return transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return jsonError(res, 400, -32000, 'Bad Request: no Mcp-Session-Id and not an initialize request');
    }
    const transport = new Transport({
      ...transportOptions,
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: id => {
        sessions.set(id, transport);
        log({ event: 'session-initialized', session: id, requested: body.params?.protocolVersion ?? null });
        if (sessions.size > MAX_SESSIONS) sessions.values().next().value?.close();
      },
      onsessionclosed: id => {
        sessions.delete(id);
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
  httpServer.headersTimeout = 30_000;
  httpServer.requestTimeout = 120_000;
  httpServer.listen(port, '127.0.0.1', () => {
    process.stdout.write(`listening on http://127.0.0.1:${httpServer.address().port}${path}\n`);
  });
  const stop = () => {
    for (const t of sessions.values()) t.close().catch(() => {});
    httpServer.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return httpServer;
}

/**
 * A `fetch` for the SDK client transport that records each HTTP request
 * it makes in `log`: `{method, status, lastEventId, protocolVersion}`
 * (`status` once the response came).
 */
export function recordingFetch(log) {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    const entry = {
      method: init?.method ?? 'GET',
      status: null,
      lastEventId: headers.get('last-event-id'),
      protocolVersion: headers.get('mcp-protocol-version')
    };
    log.push(entry);
    const response = await fetch(input, init);
    entry.status = response.status;
    return response;
  };
}

/** How many GETs with Last-Event-ID (resumptions) `log` holds from index
 * `start` on. */
export const resumptionsSince = (log, start) =>
  log.slice(start).filter(e => e.method === 'GET' && e.lastEventId !== null).length;

/**
 * Makes the SDK client transport offer `revision` in `initialize`: the
 * SDK's Client always offers its latest version and has no option for
 * another, so the outgoing request is rewritten (what a client built on an
 * older SDK sends).
 */
export function offerVersion(transport, revision) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message?.method === 'initialize' && message.params) {
      message = { ...message, params: { ...message.params, protocolVersion: revision } };
    }
    return send(message, options);
  };
}

/** The text of a tool result's first content block, if it is text. */
export const firstText = r => (r?.content?.[0]?.type === 'text' ? r.content[0].text : undefined);

/** Whether `got` is exactly 1, 2, …, n. */
export const isOneToN = (got, n) => got.length === n && got.every((p, i) => p === i + 1);
