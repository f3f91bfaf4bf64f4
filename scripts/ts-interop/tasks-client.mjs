#!/usr/bin/env node
// A TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) client exercising
// 2025-11-25's experimental tasks (SEP-1686) against a server, for the
// interop tests (integration-tests/tests/ts_sdk.rs).
//
// usage: node scripts/ts-interop/tasks-client.mjs URL [--slow-ms N] [--ask TOOL]
//
// Connects declaring `tasks` and `elicitation`, lists tools, then:
//   1. `client.experimental.tasks.callToolStream` of `slow {ms}` (a tool
//      whose `execution.taskSupport` is `optional`): the SDK creates a task,
//      polls `tasks/get` and fetches `tasks/result`;
//   2. a task-augmented `tools/call` of `slow` with a long `ms`, then
//      `tasks/list`, `tasks/cancel`, `tasks/get` (cancelled), and
//      `tasks/cancel` again (refused: terminal);
//   3. with --ask TOOL: `callToolStream` of TOOL, answering its elicitation
//      with {"name": "Ada"} (input mid-task, over `tasks/result`);
//   4. `tasks/get` of an unknown id (refused).
// Prints one JSON summary line on stdout and exits 1 on any failure.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

function parseArgs(argv) {
  const opts = { slowMs: 300 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--slow-ms') opts.slowMs = Number(argv[++i]);
    else if (a === '--ask') opts.ask = argv[++i];
    else if (a.startsWith('--')) {
      process.stderr.write(`tasks-client.mjs: unknown option ${a}\n`);
      process.exit(2);
    } else opts.url = a;
  }
  if (!opts.url) {
    process.stderr.write('usage: node tasks-client.mjs URL [--slow-ms N] [--ask TOOL]\n');
    process.exit(2);
  }
  return opts;
}

async function drain(stream) {
  const out = { types: [], statuses: [], taskId: null, text: null, error: null };
  for await (const m of stream) {
    out.types.push(m.type);
    if (m.type === 'taskCreated') out.taskId = m.task.taskId;
    if (m.type === 'taskStatus') out.statuses.push(m.task.status);
    if (m.type === 'result') out.text = m.result.content?.[0]?.text ?? null;
    if (m.type === 'error') out.error = { code: m.error.code, message: m.error.message };
  }
  return out;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const summary = { ok: false };
  const client = new Client(
    { name: 'ts-tasks-interop', version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {} }, elicitation: {} } }
  );
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params);
    return { action: 'accept', content: { name: 'Ada' } };
  });
  const transport = new StreamableHTTPClientTransport(new URL(opts.url));
  try {
    await client.connect(transport);
    summary.protocolVersion = transport.protocolVersion ?? null;
    summary.tasksCapability = client.getServerCapabilities()?.tasks ?? null;
    const tools = await client.listTools();
    summary.taskSupport = Object.fromEntries(
      tools.tools.map((t) => [t.name, t.execution?.taskSupport ?? null])
    );

    // 1. The SDK's own task flow.
    summary.stream = await drain(
      client.experimental.tasks.callToolStream({ name: 'slow', arguments: { ms: opts.slowMs } })
    );

    // 2. list, cancel, get, cancel again.
    const created = await client.request(
      { method: 'tools/call', params: { name: 'slow', arguments: { ms: 60_000 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema
    );
    const id = created.task.taskId;
    const listed = await client.experimental.tasks.listTasks();
    summary.listed = listed.tasks.map((t) => t.taskId).includes(id);
    const cancelled = await client.experimental.tasks.cancelTask(id);
    summary.cancelStatus = cancelled.status;
    summary.afterCancel = (await client.experimental.tasks.getTask(id)).status;
    try {
      await client.experimental.tasks.cancelTask(id);
      summary.cancelAgain = 'accepted';
    } catch (e) {
      summary.cancelAgain = e.code ?? String(e);
    }

    // 3. Input mid-task.
    if (opts.ask) {
      summary.ask = await drain(
        client.experimental.tasks.callToolStream({ name: opts.ask, arguments: {} }, undefined, { task: {} })
      );
      summary.asked = asked.length;
      summary.askedRelatedTask = asked[0]?._meta?.['io.modelcontextprotocol/related-task']?.taskId ?? null;
    }

    // 4. Unknown id.
    try {
      await client.experimental.tasks.getTask('no-such-task');
      summary.unknown = 'accepted';
    } catch (e) {
      summary.unknown = e.code ?? String(e);
    }
    summary.ok = true;
  } catch (e) {
    summary.error = String(e?.stack ?? e);
  } finally {
    try {
      await transport.terminateSession();
    } catch {}
    await client.close().catch(() => {});
  }
  process.stdout.write(JSON.stringify(summary) + '\n');
  process.exit(summary.ok ? 0 : 1);
}

main();
