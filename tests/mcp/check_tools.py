#!/usr/bin/env python3
"""Drives drive-mcp through the official MCP Python SDK, as an outside MCP client would.

  check_tools.py [--mode auto|legacy|VERSION] --stdio -- CMD ARGS...     (environment passed through)
  check_tools.py [--mode ...] --http URL --token TOKEN                   (Authorization: Bearer TOKEN)
then one of
  --upload PATH               the scenario: every tool once, on one file, which ends deleted for good
  --calls N --tool NAME [--args JSON]   times N calls of one tool: {"p50Ms", "p99Ms", ...}
  (neither)                   only checks the tool listing
or, for the benchmark's peer, the same call straight to the drive's API from this same HTTP client:
  check_tools.py --api URL --token TOKEN --app APP --calls N [--route /get-user-storage-usage]

Every structuredContent is validated against its tool's outputSchema (JSON Schema 2020-12).
Prints one JSON object on stdout; on any failure prints "check_tools: FAIL: ..." on stderr and
exits 1. Runs in the venv `ensure_mcp_clients` (scripts/lib.sh) makes: $DRIVE_MCP_PYTHON.
"""

import argparse
import asyncio
import base64
import json
import math
import os
import sys
import time
import uuid
from datetime import datetime, timezone

import httpx2  # the SDK's own HTTP client (a dependency of `mcp`)
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TOOLS = {"upload_file", "get_download_link", "list_files", "remove_files", "restore_files",
         "set_file_access", "get_storage_usage", "run_template"}


class CheckFailed(Exception):
    pass


def check(cond, message):
    if not cond:
        raise CheckFailed(message)


class Checker:
    def __init__(self, client):
        self.client = client
        self.validators = {}
        self.calls = []  # {"tool", "ms", "isError"} in call order

    async def list_tools(self):
        tools, cursor = [], None
        while True:
            page = await self.client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if cursor is None:
                break
        names = sorted(t.name for t in tools)
        check(set(names) == TOOLS and len(names) == len(TOOLS),
              f"tools/list gave {names}, expected exactly {sorted(TOOLS)}")
        for t in tools:
            check(isinstance(t.input_schema, dict) and t.input_schema.get("type") == "object",
                  f"{t.name}: inputSchema missing or not an object schema: {t.input_schema!r}")
            check(isinstance(t.output_schema, dict), f"{t.name}: no outputSchema")
            for kind, schema in (("inputSchema", t.input_schema), ("outputSchema", t.output_schema)):
                errors = list(Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema))
                check(not errors, f"{t.name}: {kind} is not valid JSON Schema 2020-12: {errors[:1]}")
            self.validators[t.name] = Draft202012Validator(t.output_schema)
        remove = next(t for t in tools if t.name == "remove_files")
        check(remove.annotations is not None and remove.annotations.destructive_hint is True,
              f"remove_files: annotations.destructiveHint is not true: {remove.annotations!r}")
        return names

    async def call(self, tool, args, expect_error=False):
        """Calls a tool and returns its structuredContent (or, with expect_error, its text)."""
        start = time.perf_counter()
        result = await self.client.call_tool(tool, args)
        ms = round((time.perf_counter() - start) * 1000, 3)
        self.calls.append({"tool": tool, "ms": ms, "isError": result.is_error})
        text = " ".join(getattr(c, "text", "") for c in result.content)
        if expect_error:
            check(result.is_error, f"{tool}({args}) should have failed, got {result.structured_content!r}")
            return text
        check(not result.is_error, f"{tool}({args}) failed: {text}")
        data = result.structured_content
        check(data is not None, f"{tool}: result has no structuredContent")
        errors = sorted(self.validators[tool].iter_errors(data), key=lambda e: list(e.absolute_path))
        check(not errors, f"{tool}: structuredContent does not match its outputSchema: "
                          + "; ".join(f"at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:3])
                          + f"\n  structuredContent: {json.dumps(data)[:2000]}")
        return data


def upload_args(path, http):
    if not http:
        return {"path": os.path.abspath(path)}
    with open(path, "rb") as f:
        content = f.read()
    mtime = datetime.fromtimestamp(int(os.stat(path).st_mtime), timezone.utc)
    return {"fileName": os.path.basename(path), "contentBase64": base64.b64encode(content).decode(),
            "modifiedTime": mtime.strftime("%Y-%m-%dT%H:%M:%SZ")}


async def scenario(c, path, http):
    size = os.path.getsize(path)
    args = upload_args(path, http)
    first = await c.call("upload_file", args)
    check(first["status"] in ("uploaded", "resumed", "recovered"),
          f"first upload_file gave status {first['status']!r}; the scenario needs a file the drive does not hold")
    file_id, f = first["file"]["id"], first["file"]
    check(f["fileName"] == os.path.basename(path) and f["fileSize"] == size,
          f"upload_file returned {f['fileName']!r} of {f['fileSize']} bytes, expected "
          f"{os.path.basename(path)!r} of {size}")
    second = await c.call("upload_file", args)
    check(second["status"] == "alreadyStored" and second["file"]["id"] == file_id,
          f"second upload_file gave {second['status']!r} id {second['file']['id']}, "
          f"expected 'alreadyStored' id {file_id}")

    link = await c.call("get_download_link", {"id": file_id})
    check(link["id"] == file_id and isinstance(link["downloadUrl"], str) and link["downloadUrl"],
          f"get_download_link gave no link for {file_id}: {link}")

    page1 = await c.call("list_files", {"limit": 1})
    check(len(page1["files"]) == 1 and page1["files"][0]["id"] == file_id,
          f"list_files limit 1 should give the new file {file_id} first, got {[x['id'] for x in page1['files']]}")
    page2 = None
    if page1["nextCursor"] is not None:
        page2 = await c.call("list_files", {"limit": 1, "cursor": page1["nextCursor"]})
        check(len(page2["files"]) <= 1 and all(x["id"] != file_id for x in page2["files"]),
              f"list_files' second page repeats or overflows: {[x['id'] for x in page2['files']]}")

    public = await c.call("set_file_access", {"id": file_id, "public": True})
    check(public["id"] == file_id and public["isPublic"] is True, f"set_file_access public: {public}")
    private = await c.call("set_file_access", {"id": file_id, "public": False})
    check(private["id"] == file_id and private["isPublic"] is False, f"set_file_access private: {private}")

    before = await c.call("get_storage_usage", {})
    trashed = await c.call("remove_files", {"ids": [file_id]})
    check(trashed["ids"] == [file_id] and trashed["permanently"] is False, f"remove_files (trash): {trashed}")
    restored = await c.call("restore_files", {"ids": [file_id]})
    check(restored["ids"] == [file_id], f"restore_files: {restored}")
    deleted = await c.call("remove_files", {"ids": [file_id], "permanently": True})
    check(deleted["ids"] == [file_id] and deleted["permanently"] is True, f"remove_files (permanently): {deleted}")
    after = await c.call("get_storage_usage", {})
    check(before["usedBytes"] - after["usedBytes"] == size,
          f"usedBytes went {before['usedBytes']} -> {after['usedBytes']} after deleting {size} bytes for good")

    unknown = await c.call("run_template", {"template": "no such template", "text": "x"}, expect_error=True)
    check("no template is named" in unknown, f"run_template of an unknown template: {unknown!r}")

    missing = str(uuid.uuid4())
    text = await c.call("get_download_link", {"id": missing}, expect_error=True)
    check("file_not_found" in text, f"get_download_link of an unknown id: the error text does not name "
                                    f"file_not_found: {text!r}")
    return {
        "uploaded": {"id": file_id, "fileName": f["fileName"], "fileSize": size},
        "statuses": {"first": first["status"], "second": second["status"]},
        "link": {"downloadUrl": link["downloadUrl"], "linkExpiresAt": link["linkExpiresAt"]},
        "pages": [[x["id"] for x in page1["files"]], None if page2 is None else [x["id"] for x in page2["files"]]],
        "usage": {"usedBytesBefore": before["usedBytes"], "usedBytesAfter": after["usedBytes"],
                  "filesBefore": before["files"], "filesAfter": after["files"]},
        "errorText": text,
    }


def percentile(sorted_ms, p):
    return sorted_ms[max(0, math.ceil(p / 100 * len(sorted_ms)) - 1)]


WARM_UP = 5  # calls made before timing by default, on both sides: connections and sessions are set up


def stats(ms, n):
    ms = sorted(ms)
    return {"calls": n, "p50Ms": percentile(ms, 50), "p99Ms": percentile(ms, 99),
            "meanMs": round(sum(ms) / n, 3), "minMs": ms[0], "maxMs": ms[-1]}


async def timing(c, tool, args, n, warm_up):
    check(n > 0, "--calls must be positive")
    for _ in range(warm_up):
        await c.call(tool, args)
    c.calls.clear()
    for _ in range(n):
        await c.call(tool, args)
    return {"tool": tool, **stats([x["ms"] for x in c.calls], n)}


async def api_timing(opts):
    """The peer of a tool call: the drive's own route, called with a session as any client does."""
    check(opts.calls and opts.calls > 0, "--api needs --calls N")
    async with httpx2.AsyncClient(timeout=30) as http:
        grant = await http.post(f"{opts.api}/exchange-token", headers={"Authorization": f"Bearer {opts.token}"})
        check(grant.status_code == 200, f"/exchange-token answered {grant.status_code}: {grant.text}")
        headers = {"Authorization": f"Bearer {grant.json()['gelToken']}", "X-Drive-App": opts.app}

        async def call():
            start = time.perf_counter()
            reply = await http.post(f"{opts.api}{opts.route}", headers=headers)
            ms = round((time.perf_counter() - start) * 1000, 3)
            check(reply.status_code == 200, f"{opts.route} answered {reply.status_code}: {reply.text}")
            return ms

        for _ in range(opts.warm_up):
            await call()
        ms = [await call() for _ in range(opts.calls)]
    return {"route": opts.route, **stats(ms, opts.calls)}


HTTP_ERRORS = []  # the SDK turns an HTTP error into a bare "Server returned an error response"


async def note_http_error(response):
    if response.status_code >= 400:
        HTTP_ERRORS.append(f"HTTP {response.status_code} from {response.request.method} {response.request.url}")


async def run(opts, command):
    if opts.http:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {opts.token}"},
                                  timeout=httpx2.Timeout(30, read=300),
                                  event_hooks={"response": [note_http_error]})
        target = streamable_http_client(opts.http, http_client=http)
    else:
        http = None
        target = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    try:
        async with Client(target, mode=opts.mode, read_timeout_seconds=opts.timeout) as client:
            c = Checker(client)
            out = {"transport": "http" if opts.http else "stdio", "protocolVersion": client.protocol_version}
            start = time.perf_counter()
            out["tools"] = await c.list_tools()
            out["listToolsMs"] = round((time.perf_counter() - start) * 1000, 3)
            if opts.calls:
                out.update(await timing(c, opts.tool, json.loads(opts.args), opts.calls, opts.warm_up))
            elif opts.upload:
                out.update(await scenario(c, opts.upload, bool(opts.http)))
                out["calls"] = c.calls
            return out
    finally:
        if http is not None:
            await http.aclose()


def leaves(exc):
    """The real errors inside anyio's exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in leaves(e)]
    return [exc]


def main():
    argv = sys.argv[1:]
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--stdio", action="store_true", help="run the server command given after --")
    p.add_argument("--http", metavar="URL", help="streamable HTTP endpoint, e.g. http://127.0.0.1:PORT/mcp")
    p.add_argument("--token", help="drive API token, sent as Authorization: Bearer")
    p.add_argument("--mode", default="auto", help="auto (server/discover, falling back to initialize), "
                                                  "legacy (initialize), or a modern protocol version")
    p.add_argument("--timeout", type=float, default=120, help="seconds to wait for one answer")
    p.add_argument("--upload", metavar="PATH")
    p.add_argument("--calls", type=int)
    p.add_argument("--tool", default="get_storage_usage")
    p.add_argument("--args", default="{}", help="JSON arguments for --calls")
    p.add_argument("--warm-up", type=int, default=WARM_UP, help="untimed calls first (0 for an upload)")
    p.add_argument("--api", metavar="URL", help="the drive API's base URL, for the peer timing")
    p.add_argument("--app", default="drive", help="the application id the API is called with")
    p.add_argument("--route", default="/get-user-storage-usage")
    opts = p.parse_args(argv)
    modes = [opts.stdio, bool(opts.http), bool(opts.api)]
    if sum(modes) != 1 or (opts.stdio and not command) or ((opts.http or opts.api) and not opts.token):
        p.error("give one of --stdio -- CMD ARGS..., --http URL --token TOKEN, --api URL --token TOKEN")
    try:
        out = asyncio.run(api_timing(opts) if opts.api else run(opts, command))
    except (Exception, BaseExceptionGroup) as e:  # noqa: BLE001 - every failure ends the same way
        for leaf in leaves(e):
            message = str(leaf) if isinstance(leaf, CheckFailed) else f"{type(leaf).__name__}: {leaf}"
            print(f"check_tools: FAIL: {message}", file=sys.stderr)
        for seen in dict.fromkeys(HTTP_ERRORS):
            print(f"check_tools: (the server answered {seen})", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
