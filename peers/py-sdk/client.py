#!/usr/bin/env python3
"""The Python SDK (`mcp` 2.3.0) client adapter of `mcp-compat matrix --peer
py-sdk` (peers/py-sdk.toml).

usage: python peers/py-sdk/client.py URL SCENARIO MODE

Runs one scenario with `mcp.Client` over `streamable_http_client` and prints
one JSON line (the peer client contract, README "Peers"):
  {"outcome": "pass"|"fail"|"n/a", "reason": "...", "revision": "..."|null,
   "stage": "connect"|"scenario", "resumed": true|false (disconnect only)}
MODE is `mcp.Client`'s: `legacy` (initialize, offering the SDK's latest
handshake version), `auto` (server/discover, falling back to initialize) or
`2026-07-28`; a handshake-era version means `legacy` (the SDK cannot pin one). Scenarios: call (echo + add), progress (countdown, progress
1..3 once each), input (ask_name: elicitation answered "Ada"), disconnect
(countdown 1..4 whose SSE stream the server closes after the 2nd event;
"resumed": whether a GET with Last-Event-ID was sent).
"""

import json
import os
import sys

import anyio
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED, REQUEST_TIMEOUT
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

SCENARIOS = ("call", "progress", "input", "disconnect")


class Done(Exception):
    def __init__(self, outcome, reason, **extra):
        super().__init__(reason)
        self.outcome, self.reason, self.extra = outcome, reason, extra


def text_of(result):
    block = result.content[0] if result.content else None
    return getattr(block, "text", None)


async def run(url, scenario, mode, out):
    http_log = []

    async def on_request(request):
        http_log.append((request.method, request.headers.get("last-event-id")))

    http = create_mcp_http_client()
    http.event_hooks = {"request": [on_request], "response": []}

    async def elicit(context, params):
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    state = {"connected": False}
    try:
        async with http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode, elicitation_callback=elicit, read_timeout_seconds=10) as client:
                if mode not in ("legacy", "auto"):
                    # A pinned modern version is adopted without a probe: the
                    # first request is where a server that does not speak it
                    # refuses, so it counts as the connection.
                    await client.list_tools()
                state["connected"] = True
                out["revision"] = client.protocol_version
                out["stage"] = "scenario"
                verdict = await scenario_of(client, scenario, http_log)
                # The outcome is known: report it now, whatever closing the
                # session does (teardown is not part of any scenario).
                report(out, verdict)
    except Exception as e:
        if not state["connected"]:
            raise Done("fail", f"connect: {type(e).__name__}: {e}", kind="no_mutual_revision") from e
        raise
    raise verdict


async def scenario_of(client, scenario, http_log):
    """The scenario's verdict, a Done (returned, raised by the caller)."""
    if scenario == "call":
        echo = text_of(await client.call_tool("echo", {"text": "hello"}))
        add = text_of(await client.call_tool("add", {"a": 2, "b": 3}))
        if echo != "hello" or add != "5":
            return Done("fail", f"echo answered {echo!r}, add answered {add!r}")
        return Done("pass", "echo and add answered")
    if scenario in ("progress", "disconnect"):
        n = 3 if scenario == "progress" else 4
        args = {"n": n, "interval_ms": 20} if n == 3 else {"n": n, "interval_ms": 40, "close_after": 2}
        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        mark = len(http_log)
        result = await client.call_tool("countdown", args, progress_callback=on_progress)
        resumed = any(m == "GET" and lid is not None for m, lid in http_log[mark:])
        extra = {"resumed": resumed} if scenario == "disconnect" else {}
        if text_of(result) != "done":
            return Done("fail", f"countdown answered {result!r}", **extra)
        if [float(p) for p in progress] != [float(i) for i in range(1, n + 1)]:
            return Done("fail", f"progress {progress}, not 1..{n} once each", **extra)
        how = ", resumed by GET with Last-Event-ID" if resumed else ""
        return Done("pass", f"progress 1..{n} once each{how}", **extra)
    try:
        result = await client.call_tool("ask_name", {})
    except MCPError as e:
        # A JSON-RPC error instead of a question: what a server that cannot
        # send requests answers (a manifest's back_channel = false). Not the
        # SDK's own errors for a timeout or a lost connection.
        if e.error.code in (REQUEST_TIMEOUT, CONNECTION_CLOSED):
            raise
        return Done("fail", f"JSON-RPC error {e.error.code}: {e.error.message}", kind="no_back_channel")
    t = text_of(result)
    if result.is_error:
        return Done("fail", f"tool error: {t}", kind="input_unavailable")
    if not t or "Ada" not in t:
        return Done("fail", f"ask_name answered {result!r}")
    return Done("pass", f"ask_name answered {t!r}")


async def bounded(url, scenario, mode, out):
    with anyio.fail_after(30):
        await run(url, scenario, mode, out)


def main():
    if len(sys.argv) != 4:
        print("usage: client.py URL SCENARIO MODE", file=sys.stderr)
        sys.exit(2)
    url, scenario, mode = sys.argv[1:]
    if mode in HANDSHAKE_PROTOCOL_VERSIONS:
        # The SDK cannot pin a handshake-era version: it offers its latest
        # and accepts the server's counter-offer (what check-client passes).
        mode = "legacy"
    out = {"outcome": "fail", "reason": "", "revision": None, "stage": "connect"}
    if scenario not in SCENARIOS:
        out.update(outcome="n/a", reason=f"unknown scenario {scenario}")
    else:
        try:
            anyio.run(bounded, url, scenario, mode, out)
            out["reason"] = "the scenario ended without an outcome"
        except Done as d:
            out.update(outcome=d.outcome, reason=d.reason, **d.extra)
        except BaseException as e:  # noqa: BLE001 - every failure is reported
            done = find_done(e)
            if done is not None:
                out.update(outcome=done.outcome, reason=done.reason, **done.extra)
            else:
                out.update(outcome="fail", reason=leaves(e))
    print(json.dumps(out), flush=True)


def report(out, done):
    """Prints the outcome line and exits at once."""
    out.update(outcome=done.outcome, reason=done.reason, **done.extra)
    print(json.dumps(out), flush=True)
    os._exit(0)


def leaves(e):
    """The innermost errors of an exception group, as text."""
    inner = getattr(e, "exceptions", None)
    if inner:
        return "; ".join(leaves(i) for i in inner)
    return f"{type(e).__name__}: {e}"


def find_done(e):
    """A Done raised inside a task group arrives wrapped in exception groups."""
    if isinstance(e, Done):
        return e
    for inner in getattr(e, "exceptions", ()) or ():
        d = find_done(inner)
        if d is not None:
            return d
    if e.__cause__ is not None and e.__cause__ is not e:
        return find_done(e.__cause__) if isinstance(e.__cause__, BaseException) else None
    return None


if __name__ == "__main__":
    main()
