#!/usr/bin/env python3
"""A Python SDK (`mcp` 2.3.0, pinned in requirements.txt) client for the
interop tests (integration-tests/tests/py_sdk.rs): `mcp.Client` over
`streamable_http_client`.

usage: python client.py URL [--mode MODE] [--count N] [--interval-ms N]
                            [--silent-ms N] [--timeout-s N]

Connects (MODE: `legacy`, the initialize handshake, by default; `auto` or
a modern version string as `mcp.Client` takes them), calls
`countdown {n: COUNT, interval_ms: INTERVAL}` with a progress callback,
then `slow {ms: SILENT}` (a tool that sends nothing until it answers), and
closes. Prints one JSON summary line on stdout:

  {"ok": true, "protocolVersion": "...",
   "countdown": {"text": "done", "progress": [1, 2, ...], "resumptions": N},
   "slow": {"text": "...", "resumptions": N},
   "http": [{"method": "POST", "status": 200, "lastEventId": null}, ...]}

"resumptions" counts the GETs with Last-Event-ID sent during that call;
"http" lists every HTTP request the SDK's HTTP client made, recorded with
its event hooks. Exits 1 on any failure (an exception, an error result,
progress that is not exactly 1..COUNT), with "ok" false and "error" saying
why.
"""

import argparse
import json
import sys

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("url")
    p.add_argument("--mode", default="legacy")
    p.add_argument("--count", type=int, default=5)
    p.add_argument("--interval-ms", type=int, default=20)
    p.add_argument("--silent-ms", type=int, default=0)
    p.add_argument("--timeout-s", type=float, default=60.0)
    args = p.parse_args()
    if args.count < 1:
        p.error("--count must be at least 1")
    return args


def text_of(result):
    if result.is_error:
        raise RuntimeError(f"the tool answered an error: {result.content!r}")
    block = result.content[0] if result.content else None
    return getattr(block, "text", None)


async def run(args, summary):
    http_log = summary["http"]

    async def on_request(request):
        http_log.append(
            {
                "method": request.method,
                "status": None,
                "lastEventId": request.headers.get("last-event-id"),
            }
        )
        request.extensions["mcp_interop_index"] = len(http_log) - 1

    async def on_response(response):
        index = response.request.extensions.get("mcp_interop_index")
        if index is not None:
            http_log[index]["status"] = response.status_code

    http = create_mcp_http_client()
    http.event_hooks = {"request": [on_request], "response": [on_response]}

    def resumptions_since(mark):
        return sum(
            1 for r in http_log[mark:] if r["method"] == "GET" and r["lastEventId"] is not None
        )

    async with http:
        transport = streamable_http_client(args.url, http_client=http)
        async with Client(transport, mode=args.mode, read_timeout_seconds=args.timeout_s) as client:
            summary["protocolVersion"] = client.protocol_version

            progress = []

            async def on_progress(value, total, message):
                progress.append(value)

            mark = len(http_log)
            result = await client.call_tool(
                "countdown",
                {"n": args.count, "interval_ms": args.interval_ms},
                progress_callback=on_progress,
            )
            summary["countdown"] = {
                "text": text_of(result),
                "progress": progress,
                "resumptions": resumptions_since(mark),
            }
            want = list(range(1, args.count + 1))
            if [int(p) for p in progress] != want or any(p != int(p) for p in progress):
                raise RuntimeError(f"progress {progress} is not exactly {want}")
            if summary["countdown"]["text"] != "done":
                raise RuntimeError(f"countdown answered {summary['countdown']['text']!r}")

            if args.silent_ms > 0:
                mark = len(http_log)
                result = await client.call_tool("slow", {"ms": args.silent_ms})
                summary["slow"] = {
                    "text": text_of(result),
                    "resumptions": resumptions_since(mark),
                }


async def bounded(args, summary):
    with anyio.fail_after(args.timeout_s * 3):
        await run(args, summary)


def main():
    args = parse_args()
    summary = {"ok": False, "protocolVersion": None, "http": []}
    try:
        anyio.run(bounded, args, summary)
        summary["ok"] = True
    except BaseException as e:  # noqa: BLE001 - every failure is reported
        summary["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(summary), flush=True)
    sys.exit(0 if summary["ok"] else 1)


if __name__ == "__main__":
    main()
