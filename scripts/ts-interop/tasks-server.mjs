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

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import { serveSessions } from '../../peers/ts-sdk/shared.mjs';

const taskStore = new InMemoryTaskStore();
const taskMessageQueue = new InMemoryTaskMessageQueue();

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

serveSessions({
  Transport: StreamableHTTPServerTransport,
  isInitializeRequest,
  makeServer,
  log,
  onRequest: (req, _res, { body }) => log({ event: 'request', method: req.method, body: body ?? null })
});
