"""Independent MCP client against an authenticated `schemabrain serve --http`
(issue 37): the Python `mcp` SDK connects with a bearer token in both
protocol eras; without a token the server answers 401 with the Protected
Resource Metadata URL (RFC 9728), which the client can read; every bad
token is refused; an API key is a bearer credential too.

Usage: python auth_http.py RESOURCE_URL VALID_TOKEN API_KEY [BAD_TOKEN ...]
Prints one JSON line per mode and `ALL OK` at the end; exits 1 on any failure.
"""

import asyncio
import json
import re
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

URL, TOKEN, API_KEY, BAD = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "auth-test", "version": "1"}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


async def unauthenticated():
    async with httpx2.AsyncClient(timeout=30) as h:
        r = await h.post(URL, json=INIT, headers=HEADERS)
        check(r.status_code == 401, f"no token: {r.status_code} {r.text}")
        challenge = r.headers.get("www-authenticate", "")
        m = re.search(r'resource_metadata="([^"]+)"', challenge)
        check(challenge.startswith("Bearer ") and m, f"challenge: {challenge!r}")
        meta = await h.get(m.group(1))
        check(meta.status_code == 200, f"metadata: {meta.status_code}")
        doc = meta.json()
        check(doc["resource"] == URL, f"metadata resource: {doc}")
        check(doc.get("authorization_servers"), f"metadata names the issuer: {doc}")
        for i, bad in enumerate(BAD):
            r = await h.post(URL, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {bad}"})
            check(r.status_code == 401, f"bad token #{i}: {r.status_code}")
            check('error="invalid_token"' in r.headers.get("www-authenticate", ""), f"bad token #{i}: {r.headers}")
    print(json.dumps({"unauthenticated": "401", "bad_tokens_refused": len(BAD)}))


async def run(mode, credential):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {credential}"})
    async with http:
        async with Client(streamable_http_client(URL, http_client=http), mode=mode) as c:
            check(str(c.protocol_version) == ("2025-11-25" if mode == "legacy" else mode), f"{mode}: negotiated {c.protocol_version}")
            tools = (await c.list_tools()).tools
            check(len(tools) == 12, f"{mode}: twelve tools, got {len(tools)}")
            r = await c.call_tool("get_metric", {"name": "order_count", "group_by": ["store.name"], "order_by": [{"column": "order_count", "direction": "desc"}], "limit": 3})
            env = r.structured_content
            check(env is not None and env["status"] == "success", f"{mode}: get_metric {env}")
            r = await c.call_tool("list_metrics", {})
            check(r.structured_content["status"] == "success", f"{mode}: list_metrics")
    print(json.dumps({"mode": mode, "calls": 2}))


async def main():
    await unauthenticated()
    await run("legacy", TOKEN)
    await run("2026-07-28", TOKEN)
    await run("2026-07-28", API_KEY)
    print("ALL OK")


try:
    asyncio.run(main())
except Exception as e:  # noqa: BLE001 - report any failure as exit 1
    import traceback
    traceback.print_exc()
    print(f"FAILED: {e}", file=sys.stderr)
    sys.exit(1)
