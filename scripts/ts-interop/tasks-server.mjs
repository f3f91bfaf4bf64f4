#!/usr/bin/env node
// A TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) server with
// 2025-11-25 experimental task tools, for the interop tests
// (integration-tests/tests/ts_sdk.rs): our client against the SDK's tasks.
//
// usage: node scripts/ts-interop/tasks-server.mjs
//
// - Listens on 127.0.0.1, a free port; the first stdout line is
//   `listening on http://127.0.0.1:PORT/mcp`.
// - Session-based (one StreamableHTTPServerTransport and one McpServer per
//   session), sharing the SDK's InMemoryTaskStore and InMemoryTaskMessageQueue;
//   declares `tasks.requests.tools.call`, `tasks.list`, `tasks.cancel`.
// - Task tools (`server.experimental.tasks.registerToolTask`):
//     delay {ms}     completes with "Completed <ms> ms" after ms
//     collect {}     asks the client for a name (`elicitInputStream` with
//                    `relatedTask`, so it is queued for `tasks/result`),
//                    completes with "Hello, <name>"
// - stderr: one JSON object per line: {"event":"request","method","body"}.

import { randomUUID } from 'node:crypto';
import http from 'node:http';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const PATH = '/mcp';
const taskStore = new InMemoryTaskStore();
const taskMessageQueue = new InMemoryTaskMessageQueue();
const sessions = new Map();

function log(event) {
  process.stderr.write(JSON.stringify(event) + '\n');
}

function makeServer() {
  const server = new McpServer(
    { name: 'ts-tasks-interop-server', version: '1.0.0' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue
    }
  );
  const getters = {
    async getTask(_args, { taskId, taskStore: s }) {
      return await s.getTask(taskId);
    },
    async getTaskResult(_args, { taskId, taskStore: s }) {
      return await s.getTaskResult(taskId);
    }
  };
  server.experimental.tasks.registerToolTask(
    'delay',
    { description: 'Completes after ms milliseconds', inputSchema: { ms: z.number().default(100) } },
    {
      async createTask({ ms }, { taskStore: s, taskRequestedTtl }) {
        const task = await s.createTask({ ttl: taskRequestedTtl });
        setTimeout(() => {
          taskStore
            .storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `Completed ${ms} ms` }] })
            .catch(e => log({ event: 'error', message: String(e) }));
        }, ms);
        return { task };
      },
      ...getters
    }
  );
  server.experimental.tasks.registerToolTask(
    'collect',
    { description: 'Asks the client for a name, then greets it', inputSchema: {} },
    {
      async createTask(_args, { taskStore: s, taskRequestedTtl }) {
        const task = await s.createTask({ ttl: taskRequestedTtl });
        (async () => {
          try {
            // Related to the task, so the SDK queues it for delivery on
            // `tasks/result` (without `relatedTask` it goes to the
            // standalone GET stream, as in the SDK's example server).
            const stream = server.server.experimental.tasks.elicitInputStream(
              {
                mode: 'form',
                message: 'What is your name?',
                requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }
              },
              { relatedTask: { taskId: task.taskId } }
            );
            let answer;
            for await (const m of stream) {
              if (m.type === 'result') answer = m.result;
              else if (m.type === 'error') throw m.error;
            }
            await taskStore.storeTaskResult(task.taskId, 'completed', {
              content: [{ type: 'text', text: `Hello, ${answer?.content?.name}` }]
            });
          } catch (e) {
            log({ event: 'error', message: String(e?.stack ?? e) });
            await taskStore.storeTaskResult(task.taskId, 'failed', {
              content: [{ type: 'text', text: String(e) }],
              isError: true
            });
          }
        })();
        return { task };
      },
      ...getters
    }
  );
  return server;
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function handle(req, res) {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname !== PATH) return jsonError(res, 404, -32000, `no endpoint at ${url.pathname}`);
  const sessionId = req.headers['mcp-session-id'];
  let body;
  if (req.method === 'POST') {
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return jsonError(res, 400, -32700, 'Parse error: Invalid JSON');
    }
  }
  log({ event: 'request', method: req.method, body: body ?? null });
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
    onsessioninitialized: id => sessions.set(id, transport)
  });
  transport.onclose = () => {
    if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
  };
  const server = makeServer();
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
