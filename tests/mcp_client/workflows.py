"""Independent MCP client: the Python `mcp` SDK (PyPI) drives `schemabrain serve`
over real stdio in every protocol mode, runs the charter's canonical workflows,
and validates every structured result against the tool's outputSchema (the SDK
validates non-error results itself; this script validates all of them,
errors included).

Usage: python workflows.py SCHEMABRAIN_BINARY PROJECT_DIR SOURCE_URL WRITABLE_SOURCE_URL
(the provider toolset runs on the writable copy, with `--allow-writes scratch`).
Prints one JSON line per mode and `ALL OK` at the end; exits 1 on any failure.
"""

import asyncio
import json
import sys

import jsonschema
from mcp import Client, StdioServerParameters

BINARY, PROJECT, SOURCE, WRITABLE = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
MODES = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28", "auto": "2026-07-28"}


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


async def run(mode):
    params = StdioServerParameters(command=BINARY, args=["serve", "--project", PROJECT, "--source", SOURCE])
    calls = 0
    async with Client(params, mode=mode) as c:
        check(str(c.protocol_version) == MODES[mode], f"{mode}: negotiated {c.protocol_version}")
        tools, cursor = [], None
        while True:
            page = await c.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if cursor is None:
                break
        by_name = {t.name: t for t in tools}
        check(len(by_name) == 12, f"{mode}: twelve tools, got {sorted(by_name)}")
        # The whole surface must fit an agent's context: 6,000 tokens at 4 bytes each.
        listed = json.dumps({"tools": [t.model_dump(by_alias=True, exclude_none=True) for t in tools]}, separators=(",", ":"))
        check(len(listed) / 4 <= 6000, f"{mode}: tools/list is {len(listed) // 4} tokens, over the 6,000 budget")
        print(json.dumps({"mode": mode, "tools_list_tokens": len(listed) // 4}), file=sys.stderr)
        for t in tools:
            check(t.annotations is not None and t.annotations.read_only_hint is True, f"{t.name}: read-only annotation")
            check(t.output_schema and t.output_schema.get("type") == "object", f"{t.name}: object outputSchema")
            check(t.description.startswith("Use this when"), f"{t.name}: charter description")

        async def call(name, args, want=None):
            nonlocal calls
            calls += 1
            r = await c.call_tool(name, args)
            env = r.structured_content
            check(env is not None, f"{name}: structured content")
            jsonschema.validate(env, by_name[name].output_schema)
            check(json.loads(r.content[0].text) == env, f"{name}: text mirror equals structured content")
            check(bool(r.is_error) == (env["status"] in ("error", "refused")), f"{name}: isError follows status")
            if want is not None:
                check(env["status"] in want, f"{name}({args}): status {env['status']}, wanted {want}: {env.get('error')}")
            return env

        ok = ("success",)
        # "What's in this database?"
        env = await call("find_relevant_tables", {"query": "*"}, ok)
        first = env["data"]["hits"][0]["qualified_name"]
        # "Tell me about a domain": search, describe the top hit, drill into a column.
        env = await call("find_relevant_tables", {"query": "marketing spend per channel"}, ok)
        top = env["data"]["hits"][0]["qualified_name"]
        check(top == "main.campaign_spend", f"top hit {top}")
        env = await call("describe_table", {"qualified_name": top, "response_format": "detailed"}, ok)
        col = env["data"]["columns"][1]["name"]
        await call("describe_column", {"qualified_name": f"{top}.{col}"}, ok)
        # "How do these tables relate?"
        env = await call("suggest_joins", {"tables": ["main.order_items", "main.regions"]}, ok)
        check(env["data"]["paths"][0]["hops"] >= 2, "a multi-hop path")
        await call("describe_table", {"qualified_name": first}, ok)
        # "I want to aggregate something": list_metrics → describe_entity → get_metric.
        env = await call("list_metrics", {}, ok)
        metric = next(m for m in env["data"]["items"] if m["name"] == "revenue")
        await call("describe_entity", {"name": metric["entity"]}, ok)
        env = await call("get_metric", {"name": "revenue", "group_by": ["customer.country"], "order_by": [{"column": "revenue", "direction": "desc"}], "limit": 5}, ok)
        check(len(env["data"]["rows"]) == 5, "five rows")
        await call("get_metric", {"name": "revenue", "time_grain": "month", "dry_run": True}, ok)
        # "Show me how to ask about this table": the examples are calls that answer.
        env = await call("get_example_queries", {"qualified_name": "main.orders"}, ok)
        example = env["data"]["queries"][0]
        await call(example["tool"], example["arguments"], ok + ("degraded",))
        # Semantic search, joins.
        env = await call("find_relevant_entities", {"query": "shops"}, ok)
        check(env["data"]["hits"][0]["name"] == "store", "shops → store")
        await call("list_entities", {}, ok)
        await call("list_joins", {}, ok)
        await call("resolve_join", {"entity_a": "order", "entity_b": "store"}, ok)
        # Errors are in-band envelopes whose recovery is a call that answers.
        env = await call("get_metric", {"name": "revenue", "group_by": ["region.name"]}, ("error",))
        check(env["error"]["kind"] == "ambiguous_path", env["error"]["kind"])
        rec = env["error"]["recovery"]
        # The recovery keeps the question and only adds the path's joins.
        kept = rec["suggested_args"] or {}
        check(rec["suggested_tool"] == "get_metric" and kept.get("name", (kept.get("names") or [None])[0]) == "revenue"
              and kept.get("group_by") == ["region.name"] and kept.get("via"), f"the path recovery keeps the question: {rec}")
        await call(rec["suggested_tool"], kept, ok)
        env = await call("get_metric", {"name": "revenue", "grain": "month"}, ("error",))
        check("grain" in env["error"]["message"], "unknown argument named")
        env = await call("describe_entity", {"name": "custmer"}, ("error",))
        check("customer" in env["error"]["recovery"]["fuzzy_matches"], "fuzzy match")
        # Seed 004, scripted as a stubborn agent: the same failing call again
        # and again is first to be fixed (must_obey), then escalated, then
        # refused by the circuit breaker; following next_action recovers.
        # A misspelt entity with one correction (customer.country), so the
        # recovery is a correction to obey; the filter (its value per mode)
        # is part of the question the correction keeps.
        bad = {"name": "revenue", "group_by": ["custmer.country"],
               "filters": [{"column": "customer.country", "op": "ne", "value": f"nowhere_{mode}"}]}
        seen = [await call("get_metric", bad, ("error",)) for _ in range(8)]
        kinds = [e["error"]["kind"] for e in seen]
        check(kinds[:6] == ["unknown_name"] * 6 and kinds[6:] == ["cost_cap_exceeded"] * 2, f"escalation then breaker: {kinds}")
        check([e["next_action"]["must_obey"] for e in seen[:2]] == [True, True], "the first fixes are to be obeyed")
        check(all(e["next_action"]["must_obey"] is False for e in seen[2:]), "escalated: autonomy")
        fix = seen[0]["error"]["recovery"]["suggested_args"]
        check(fix["group_by"] == ["customer.country"] and fix["filters"] == bad["filters"], f"the correction keeps the question: {fix}")
        check("Circuit open" in seen[7]["error"]["message"], seen[7]["error"]["message"])
        nxt = seen[7]["next_action"]
        await call(nxt["tool"], nxt.get("arguments") or {}, ok)
        env = await call("get_metric", {"name": "revenue", "group_by": ["customer.country"], "order_by": [{"column": "revenue", "direction": "desc"}], "limit": 3}, ok)
        check(isinstance(env.get("fingerprint"), str) and env["next_action"]["must_obey"] is False, "an answer: fingerprint, next action to consider")
    return {"mode": mode, "protocol": MODES[mode], "tools": 12, "calls": calls}


PROVIDER_TOOLS = {
    "list_schemas", "list_tables", "get_table_schema", "query_sql", "explain_sql", "sample_table", "get_stats", "profile_table", "detect_pii",
    "preview_masked", "materialize_sql", "create_view", "query_plan",
}


async def run_provider(mode):
    """`serve --toolsets all --allow-writes scratch`: the provider tools (writes included), resources, prompts and completion."""
    from mcp.types import PromptReference

    params = StdioServerParameters(command=BINARY, args=["serve", "--project", PROJECT, "--source", WRITABLE, "--toolsets", "all", "--allow-writes", "scratch"])
    calls = 0
    async with Client(params, mode=mode) as c:
        check(str(c.protocol_version) == MODES[mode], f"{mode}: negotiated {c.protocol_version}")
        tools = (await c.list_tools()).tools
        by_name = {t.name: t for t in tools}
        check(PROVIDER_TOOLS <= set(by_name) and len(by_name) == 12 + len(PROVIDER_TOOLS), f"{mode}: provider tools listed, got {sorted(by_name)}")

        async def call(name, args, want):
            nonlocal calls
            calls += 1
            r = await c.call_tool(name, args)
            env = r.structured_content
            jsonschema.validate(env, by_name[name].output_schema)
            check(json.loads(r.content[0].text) == env, f"{name}: text mirror")
            check(env["status"] in want, f"{name}({args}): status {env['status']}, wanted {want}: {env.get('error')}")
            return env

        ok = ("success",)
        env = await call("list_schemas", {}, ok)
        schema = env["data"]["items"][0]["name"]
        env = await call("list_tables", {"schema": schema}, ok)
        check(env["data"]["count"] == 9, "nine tables")
        await call("get_table_schema", {"qualified_name": "main.orders"}, ok)
        for tool in ("sample_table", "get_stats", "profile_table", "detect_pii"):
            await call(tool, {"qualified_name": "main.regions"}, ok)
        await call("explain_sql", {"sql": "SELECT count(*) FROM main.orders"}, ok)
        # Paging by tokens: every row once.
        sql = "SELECT id FROM main.orders WHERE id <= 250"
        args, ids = {"sql": sql, "page_size": 100}, []
        while True:
            env = await call("query_sql", args, ok)
            ids += [r[0] for r in env["data"]["rows"]]
            token = env["data"].get("page_token")
            if token is None:
                break
            args = {"sql": sql, "page_size": 100, "page_token": token}
        check(sorted(ids) == list(range(1, 251)), f"paging returned {len(ids)} rows")
        env = await call("query_sql", {"sql": "SELECT email FROM main.customers"}, ("refused",))
        check(env["error"]["kind"] == "pii_blocked", env["error"]["kind"])
        env = await call("query_sql", {"sql": sql, "page_token": "forged.00"}, ("error",))
        check(env["error"]["code"] == "INVALID_INPUT", env["error"]["code"])
        # A period through the table's time dimension.
        env = await call("query_sql", {"sql": "SELECT count(*) FROM main.orders", "time_range": {"start": "2024-03-01", "end": "2024-04-01"}}, ok)
        check(env["data"]["time_range"]["restricted"] == [{"table": "main.orders", "column": "ordered_at"}], f"time_range {env['data'].get('time_range')}")
        # A Substrait plan (written by the Rust test with DataFusion's producer) runs as its SQL.
        with open(f"{PROJECT}/plan.json") as f:
            plan = json.load(f)
        env = await call("query_plan", {"substrait": plan}, ok)
        check(env["data"]["from"] == "substrait" and sum(int(r[1]) for r in env["data"]["rows"]) == 120000, f"query_plan {env['data'].get('rows')}")
        env = await call("preview_masked", {"qualified_name": "main.customers", "rows": 3}, ok)
        check(len(env["data"]["rows"]) == 3 and env["data"]["policy_applied"]["withheld"], "preview withholds the unmasked PII")
        # Writes, marked destructive, only into the allowed schema.
        for name in ("materialize_sql", "create_view"):
            a = by_name[name].annotations
            check(a.read_only_hint is False and a.destructive_hint is True, f"{name}: destructive annotation")
        table = f"by_status_{mode.replace('-', '_')}"
        env = await call("materialize_sql", {"sql": "SELECT status, count(*) AS n FROM main.orders GROUP BY status", "table": table}, ok)
        check(env["data"]["qualified_name"] == f"scratch.{table}", env["data"]["qualified_name"])
        env = await call("query_sql", {"sql": f"SELECT sum(n) FROM scratch.{table}"}, ok)
        check(int(env["data"]["rows"][0][0]) == 120000, f"materialized {env['data']['rows']}")
        await call("create_view", {"sql": "SELECT segment, count(*) AS n FROM main.customers GROUP BY segment", "view": f"segments_{mode.replace('-', '_')}"}, ok)
        env = await call("materialize_sql", {"sql": "SELECT 1 AS x", "table": "main.evil"}, ("refused",))
        check(env["error"]["kind"] == "policy_blocked", env["error"]["kind"])

        resources = (await c.list_resources()).resources
        check({str(r.uri) for r in resources} == {"res://catalogs", "res://capabilities"}, f"resources {resources}")
        templates = (await c.list_resource_templates()).resource_templates
        check(len(templates) == 5, f"templates {templates}")
        for uri in ("res://catalogs", "res://capabilities", "res://table/default/main/orders", "res://lineage/default/main/orders"):
            r = await c.read_resource(uri)
            body = json.loads(r.contents[0].text)
            check("etag" in body, f"{uri}: etag")
        prompts = (await c.list_prompts()).prompts
        check(len(prompts) == 4, f"prompts {[p.name for p in prompts]}")
        r = await c.get_prompt("ask_for_sensitive_columns_ack", {"table": "main.customers"})
        check("contact" in r.messages[0].content.text, "the ack names the blocked category")
        done = await c.complete(PromptReference(type="ref/prompt", name="ask_for_sensitive_columns_ack"), {"name": "table", "value": "main.cust"})
        check(done.completion.values == ["main.customers"], f"completion {done.completion.values}")
    return {"mode": mode, "toolsets": "all", "calls": calls}


async def main():
    failed = False
    for mode in MODES:
        try:
            print(json.dumps(await run(mode)), flush=True)
            print(json.dumps(await run_provider(mode)), flush=True)
        except Exception as e:  # report every mode, then fail
            failed = True
            # The SDK wraps failures in exception groups: report the leaves.
            leaves, todo = [], [e]
            while todo:
                x = todo.pop()
                if isinstance(x, BaseExceptionGroup):
                    todo.extend(x.exceptions)
                else:
                    leaves.append(f"{type(x).__name__}: {x}")
            print(json.dumps({"mode": mode, "error": "; ".join(leaves)}), flush=True)
    if failed:
        sys.exit(1)
    print("ALL OK", flush=True)


asyncio.run(main())
