#!/usr/bin/env python3
"""The Python SDK (`mcp` 2.3.0) server adapter of `mcp-compat matrix --peer
py-sdk` (peers/py-sdk.toml).

usage: python peers/py-sdk/server.py --port PORT [--mode sse|json|stateless] [--retry-ms N]

`MCPServer.streamable_http_app` on 127.0.0.1:PORT, path /mcp; prints
`listening on http://127.0.0.1:PORT/mcp` once it accepts. `sse`: session
server with SSE answers and an in-memory event store (SEP-1699 priming and
`retry` on 2025-11-25 sessions); `json`: JSON answers, no event store;
`stateless`: `stateless_http` (no sessions), SSE answers. The SDK serves
the 2026-07-28 requests on the same endpoint in every mode.

Reference tools: echo {text}, add {a, b}, countdown {n, interval_ms,
close_after} (progress 1..n; `ctx.close_sse_stream()` after the
close_after-th, which the SDK does only with an event store), slow {ms},
ask_name {} (elicits a name through a resolver, answers "hello, NAME"), close_stream {ms}.
"""

import argparse
import asyncio
import itertools
from collections import OrderedDict
from typing import Annotated

import uvicorn
from pydantic import BaseModel

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.streamable_http import EventMessage, EventStore

MAX_WAIT_MS = 30_000
MAX_EVENTS = 10_000


class MemoryEventStore(EventStore):
    """Events in arrival order, ids from one counter, bounded (oldest dropped)."""

    def __init__(self):
        self.events = OrderedDict()  # id -> (stream_id, message)
        self.counter = itertools.count(1)

    async def store_event(self, stream_id, message):
        event_id = str(next(self.counter))
        self.events[event_id] = (stream_id, message)
        while len(self.events) > MAX_EVENTS:
            self.events.popitem(last=False)
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        if last_event_id not in self.events:
            return None
        stream_id = self.events[last_event_id][0]
        found = False
        for event_id, (sid, message) in list(self.events.items()):
            if found and sid == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
            if event_id == last_event_id:
                found = True
        return stream_id


class Name(BaseModel):
    name: str


def build() -> MCPServer:
    mcp = MCPServer("mcp-compat-peer-py-sdk")

    @mcp.tool()
    def echo(text: str) -> str:
        """Answers the text."""
        return text

    @mcp.tool()
    def add(a: float, b: float) -> str:
        """Answers a + b."""
        s = a + b
        return str(int(s)) if s == int(s) else str(s)

    @mcp.tool()
    async def countdown(n: int, ctx: Context, interval_ms: int = 10, close_after: int = 0) -> str:
        """n progress notifications, then done; close_after K closes the SSE stream after the K-th."""
        for i in range(1, min(n, 1000) + 1):
            await asyncio.sleep(min(interval_ms, MAX_WAIT_MS) / 1000)
            await ctx.report_progress(i, n)
            if i == close_after:
                await ctx.close_sse_stream()
        return "done"

    @mcp.tool()
    async def slow(ms: int = 100) -> str:
        """Answers after ms."""
        await asyncio.sleep(min(ms, MAX_WAIT_MS) / 1000)
        return "slept"

    def ask() -> Elicit[Name]:
        return Elicit("What is your name?", Name)

    @mcp.tool()
    async def ask_name(who: Annotated[Name, Resolve(ask)]) -> str:
        """Asks the client for a name: elicitation mid-call up to 2025-11-25,
        an InputRequiredResult round on 2026-07-28 (the SDK's resolvers)."""
        return f"hello, {who.name}"

    @mcp.tool()
    async def close_stream(ctx: Context, ms: int = 100) -> str:
        """Closes its SSE stream mid-call, then answers."""
        await ctx.close_sse_stream()
        await asyncio.sleep(min(ms, MAX_WAIT_MS) / 1000)
        return "resumed"

    return mcp


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--mode", choices=["sse", "json", "stateless"], default="sse")
    p.add_argument("--retry-ms", type=int, default=150)
    args = p.parse_args()
    app = build().streamable_http_app(
        json_response=args.mode == "json",
        stateless_http=args.mode == "stateless",
        event_store=MemoryEventStore() if args.mode == "sse" else None,
        retry_interval=args.retry_ms,
    )
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning")
    server = uvicorn.Server(config)

    async def serve():
        task = asyncio.create_task(server.serve())
        while not server.started:
            if task.done():
                return await task
            await asyncio.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()
