#!/usr/bin/env python3
"""Runs every request in tests/dbt/cases through real MetricFlow and records
the answers in tests/dbt/expected.

Run by regenerate.sh inside the dbt venv, with the current directory set to a
built copy of the dbt_shop project (DBT_PROJECT_DIR / DBT_PROFILES_DIR set).

How an answer is obtained: exactly as `mf query` does it. The CLI builds a
`MetricFlowQueryRequest.create(...)` from its options and hands it to the
`MetricFlowEngine` of its `CLIConfiguration`; this script does the same in one
process (so values keep their Python types: int, float, Decimal, datetime,
None) and, run again with --cli-check (a second process: DuckDB allows one
writer process per file), runs the real `mf query --csv` command for each case
and checks that the CSV it writes matches the recorded rows cell for cell (cases whose group-by items contain a comma, i.e. object-form names
such as "TimeDimension('metric_time', 'week')", cannot be passed through the
CLI's comma-separated --group-by option and are only run in process).

Output file per case NNN_slug.yaml -> NNN_slug.json:

  answered: {"columns": [...], "column_types": [...], "row_order": "metricflow" | "sorted",
             "rows": [[...], ...], "sql": "<mf query --explain SQL>"}
  refused:  {"refused": "<message>", "error_type": "<exception class>",
             "stage": "compile" | "execution", "sql": "<only for execution>"}

row_order is "metricflow" when the request has an order_by (rows are in the
order MetricFlow returned them) and "sorted" when it has none (MetricFlow,
i.e. DuckDB, returns groups in no defined order; the recorder then sorts rows
by all columns left to right, NULL first, so the file is deterministic).
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import decimal
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import yaml

CASE_KEYS = {"metrics", "group_by", "where", "order_by", "limit", "note", "saved_query"}


def load_case(path: Path) -> Dict[str, Any]:
    with open(path) as f:
        case = yaml.safe_load(f)
    unknown = set(case) - CASE_KEYS
    if unknown:
        raise SystemExit(f"{path}: unknown keys {sorted(unknown)}")
    if "saved_query" in case and "metrics" in case:
        raise SystemExit(f"{path}: saved_query and metrics are exclusive")
    if "saved_query" not in case and not case.get("metrics"):
        raise SystemExit(f"{path}: needs metrics or saved_query")
    return case


def build_request(case: Dict[str, Any]):
    from metricflow.engine.metricflow_engine import MetricFlowQueryRequest

    # Same call as dbt_metricflow.cli.main.query.
    return MetricFlowQueryRequest.create(
        saved_query_name=case.get("saved_query"),
        metric_names=case.get("metrics"),
        group_by_names=case.get("group_by"),
        limit=case.get("limit"),
        time_constraint_start=None,
        time_constraint_end=None,
        where_constraints=case.get("where") or None,
        order_by_names=case.get("order_by"),
    )


# ------------------------------------------------------------------ encoding
def type_name(t: Any) -> str:
    return getattr(t, "__name__", str(t))


def encode_value(v: Any) -> str:
    """One JSON token for a cell value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return json.dumps(repr(v))
        return repr(v)
    if isinstance(v, decimal.Decimal):
        if not v.is_finite():
            return json.dumps(str(v))
        return str(v)
    if isinstance(v, dt.datetime):
        return json.dumps(v.isoformat())
    if isinstance(v, dt.date):
        return json.dumps(v.isoformat())
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    raise TypeError(f"cannot encode {type(v)}: {v!r}")


def sort_key(row: Tuple[Any, ...]):
    return tuple((v is not None, v) for v in row)


def render_answer(columns, column_types, rows, ordered: bool, sql: str) -> str:
    lines = ["{"]
    lines.append(f'  "columns": {json.dumps(list(columns))},')
    lines.append(f'  "column_types": {json.dumps(list(column_types))},')
    lines.append(f'  "row_order": {json.dumps("metricflow" if ordered else "sorted")},')
    if rows:
        lines.append('  "rows": [')
        body = ["    [" + ", ".join(encode_value(v) for v in r) + "]" for r in rows]
        lines.append(",\n".join(body))
        lines.append("  ],")
    else:
        lines.append('  "rows": [],')
    lines.append(f'  "sql": {json.dumps(sql, ensure_ascii=False)}')
    lines.append("}")
    return "\n".join(lines) + "\n"


def trim_message(msg: str) -> str:
    msg = msg.strip()
    # Drop trailing whitespace on each line; keep MetricFlow's wording intact.
    return "\n".join(line.rstrip() for line in msg.splitlines())


def render_refusal(msg: str, error_type: str, sql: Optional[str]) -> str:
    """stage "compile": MetricFlow refused the request (no SQL). stage "execution":
    MetricFlow generated SQL (recorded) that DuckDB then rejected."""
    d = {"refused": trim_message(msg), "error_type": error_type, "stage": "compile" if sql is None else "execution"}
    if sql is not None:
        d["sql"] = sql
    return json.dumps(d, indent=2, ensure_ascii=False) + "\n"


# ------------------------------------------------------------------ CLI check
def csv_row(values) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(values)
    return buf.getvalue()


def cli_args(case: Dict[str, Any]) -> Optional[List[str]]:
    args: List[str] = []
    if "saved_query" in case:
        args += ["--saved-query", case["saved_query"]]
    else:
        args += ["--metrics", ",".join(case["metrics"])]
    gb = case.get("group_by") or []
    if any("," in g for g in gb):
        return None
    if gb:
        args += ["--group-by", ",".join(gb)]
    for w in case.get("where") or []:
        args += ["--where", w]
    ob = case.get("order_by") or []
    if any("," in o for o in ob):
        return None
    if ob:
        args += ["--order", ",".join(ob)]
    if case.get("limit") is not None:
        args += ["--limit", str(case["limit"])]
    return args


def run_cli(mf_bin: str, case: Dict[str, Any]) -> Tuple[str, Optional[str]]:
    """Returns ("skipped"|"answered"|"empty"|"refused", csv text or error line)."""
    args = cli_args(case)
    if args is None:
        return "skipped", None
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "out.csv"
        proc = subprocess.run(
            [mf_bin, "query", *args, "--csv", str(out)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        text = proc.stdout + proc.stderr
        m = re.search(r"^ERROR: (.*)$", text, re.M)
        # (without --quiet, so that an empty result is announced rather than silent)
        if m:
            return "refused", m.group(1)
        if out.exists():
            return "answered", out.read_text()
        if "empty result set" in text:
            return "empty", None
        return "unknown", text[-2000:]


# ------------------------------------------------------------------ main
def record(case_files: List[Path], expected: Path) -> int:
    from dbt_metricflow.cli.cli_configuration import CLIConfiguration

    cfg = CLIConfiguration()
    cfg.setup(configure_file_logging=False)
    engine = cfg.mf

    expected.mkdir(parents=True, exist_ok=True)
    n_ok = n_refused = 0
    for path in case_files:
        case = load_case(path)
        request = build_request(case)
        ordered = is_ordered(case)
        sql = None
        try:
            explain = engine.explain(mf_request=request)
            sql = explain.sql_statement.without_descriptions.sql
            result = engine.query(mf_request=request)
            df = result.result_df
            columns = list(df.column_names)
            column_types = [type_name(c.column_type) for c in df.column_descriptions]
            rows = [tuple(r) for r in df.rows]
            recorded_rows = rows if ordered else sorted(rows, key=sort_key)
            text = render_answer(columns, column_types, recorded_rows, ordered, sql)
            status = f"{len(rows)} rows"
            n_ok += 1
        except Exception as e:  # MetricFlow refusals are exceptions
            text = render_refusal(str(e), type(e).__name__, sql)
            status = f"refused ({type(e).__name__}{', at execution' if sql is not None else ''})"
            n_refused += 1
        (expected / (path.stem + ".json")).write_text(text)
        print(f"{path.name}: {status}", flush=True)
    print(f"\n{n_ok} answered, {n_refused} refused, {len(case_files)} cases")
    return 0


def cell_text(v: Any, t: str) -> str:
    """What csv.writer wrote for the Python value MetricFlow returned."""
    if v is None:
        return ""
    if t == "datetime":
        return str(dt.datetime.fromisoformat(v))
    if t == "date":
        return str(dt.date.fromisoformat(v))
    return str(v)


def cli_check(case_files: List[Path], expected: Path) -> int:
    """Runs the real `mf query --csv` per case (a separate process, so after
    record() has released DuckDB's file lock) and compares with the recording."""
    mf_bin = str(Path(sys.executable).with_name("mf"))
    stats = {"matched": 0, "skipped": 0}
    problems: List[str] = []
    for path in case_files:
        case = load_case(path)
        rec = json.loads((expected / (path.stem + ".json")).read_text())
        kind, payload = run_cli(mf_bin, case)
        answered = "refused" not in rec
        if kind == "skipped":
            stats["skipped"] += 1
            status = "skipped (a comma inside a group-by or order-by item)"
        elif answered and kind == "answered":
            types = rec["column_types"]
            mine = [csv_row(rec["columns"])] + [csv_row([cell_text(v, t) for v, t in zip(r, types)]) for r in rec["rows"]]
            theirs = [line for line in payload.splitlines()]
            if rec["row_order"] == "sorted":
                same = mine[:1] == theirs[:1] and sorted(mine[1:]) == sorted(theirs[1:])
            else:
                same = mine == theirs
            if same:
                stats["matched"] += 1
                status = "same csv"
            else:
                status = "DIFFERENT"
                problems.append(f"{path.name}: mf query --csv differs:\n{payload}\nvs recorded\n" + "\n".join(mine))
        elif answered and kind == "empty" and not rec["rows"]:
            stats["matched"] += 1
            status = "empty result too"
        elif not answered and kind == "refused":
            stats["matched"] += 1
            status = "refused too"
        else:
            status = "DIFFERENT"
            problems.append(f"{path.name}: recorded {'an answer' if answered else 'a refusal'}, mf query: {kind}: {payload}")
        print(f"{path.name}: mf query --csv: {status}", flush=True)
    print(f"\nmf query cross-check: {stats['matched']} matched, {stats['skipped']} skipped, {len(problems)} different")
    for p in problems:
        print("PROBLEM:", p, file=sys.stderr)
    return 1 if problems else 0


def is_ordered(case: Dict[str, Any]) -> bool:
    if case.get("order_by"):
        return True
    return "saved_query" in case and _saved_query_has_order(case["saved_query"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", required=True, type=Path)
    ap.add_argument("--expected", required=True, type=Path)
    ap.add_argument("--cli-check", action="store_true", help="only compare recorded answers with `mf query --csv`")
    ap.add_argument("--only", default=None, help="regex on case file names")
    args = ap.parse_args()
    case_files = sorted(args.cases.glob("*.yaml"))
    if args.only:
        case_files = [p for p in case_files if re.search(args.only, p.name)]
    if args.cli_check:
        return cli_check(case_files, args.expected)
    return record(case_files, args.expected)


def _saved_query_has_order(name: str) -> bool:
    with open(Path("target") / "semantic_manifest.json") as f:
        manifest = json.load(f)
    for sq in manifest.get("saved_queries", []):
        if sq["name"] == name:
            return bool(sq["query_params"].get("order_by"))
    return False  # MetricFlow will refuse the request


if __name__ == "__main__":
    sys.exit(main())
