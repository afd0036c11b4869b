#!/usr/bin/env python3
"""MetricFlow compile latency, for the bench's side-by-side with schemabrain.

(a) In process: load the semantic manifest into one MetricFlowEngine (the
    same object `mf` builds, via dbt_metricflow's CLIConfiguration), then time
    `MetricFlowEngine.explain(MetricFlowQueryRequest)` -- parse, validate,
    dataflow plan, SQL plan, rendered SQL; nothing is executed -- for every
    case: one cold call, then WARM timed calls of the identical request.
(b) Whole process: wall time of `mf query --explain ...` (python start-up,
    imports, manifest load, explain) for a few cases, RUNS times each.

Run by regenerate.sh in the built project copy; writes JSON to the path given.

usage: time_explain.py CASES_DIR OUT_JSON [--warm N] [--runs N]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import build_request, cli_args, load_case  # noqa: E402

# By slug (the part after NNN_).
WHOLE_PROCESS_CASES = [
    "revenue_total",
    "two_hop_country",
    "multi_metric_outer_join",
    "cumulative_grain_to_date_month",
    "conversion_rate_by_channel",
]


def pct(samples, p):
    """Nearest-rank percentile."""
    s = sorted(samples)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def ms(x):
    return round(x * 1000.0, 3)


def machine():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": {
            p: version(p)
            for p in ["dbt-metricflow", "metricflow", "dbt-core", "dbt-duckdb", "duckdb", "sqlglot"]
        },
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    # Whole process first: the in-process engine below keeps DuckDB's file lock.
    mf_bin = str(Path(sys.executable).with_name("mf"))
    whole = {}
    for slug in WHOLE_PROCESS_CASES:
        (path,) = sorted(args.cases.glob(f"[0-9][0-9][0-9]_{slug}.yaml"))
        stem = path.stem
        case = load_case(path)
        cmd = [mf_bin, "query", *cli_args(case), "--explain", "--quiet"]
        walls = []
        for _ in range(args.runs):
            s = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            walls.append(time.perf_counter() - s)
        whole[stem] = {
            "command": "mf query " + " ".join(cmd[2:]),
            "runs_ms": [ms(w) for w in walls],
            "median_ms": ms(statistics.median(walls)),
        }
        print(f"whole process {stem}: median {ms(statistics.median(walls))} ms", flush=True)

    t0 = time.perf_counter()
    from dbt_metricflow.cli.cli_configuration import CLIConfiguration

    t_import = time.perf_counter() - t0
    t1 = time.perf_counter()
    cfg = CLIConfiguration()
    cfg.setup(configure_file_logging=False)
    engine = cfg.mf
    t_engine = time.perf_counter() - t1

    per_case = {}
    all_cold, all_warm, refused_warm = [], [], []
    for path in sorted(args.cases.glob("*.yaml")):
        case = load_case(path)
        refused = False
        samples = []
        for i in range(args.warm + 1):
            request = build_request(case)
            s = time.perf_counter()
            try:
                engine.explain(mf_request=request)
            except Exception:
                refused = True
            samples.append(time.perf_counter() - s)
        cold, warm = samples[0], samples[1:]
        per_case[path.stem] = {
            "explain_refused": refused,
            "cold_ms": ms(cold),
            "median_ms": ms(statistics.median(warm)),
            "p99_ms": ms(pct(warm, 99)),
        }
        if refused:
            refused_warm += warm
        else:
            all_cold.append(cold)
            all_warm += warm
        print(f"{path.stem}: cold {ms(cold)} ms, warm median {ms(statistics.median(warm))} ms", flush=True)

    out = {
        "what": (
            "MetricFlow compile (explain: SQL generation, no execution) latency on tests/fixtures/dbt_shop. "
            "in_process: one MetricFlowEngine built once, then per case 1 cold + `warm_runs` timed explain() calls "
            "of the same request (cold = first time the engine sees that request). whole_process: wall time of "
            "`mf query --explain` (includes Python start-up, imports, reading target/semantic_manifest.json, "
            "building the engine, and dbt-metricflow's PyPI update check)."
        ),
        "measured_on": dt.date.today().isoformat(),
        "machine": machine(),
        "in_process": {
            "import_s": round(t_import, 3),
            "engine_setup_s": round(t_engine, 3),
            "warm_runs": args.warm,
            "overall_answered": {
                "cases": len(all_cold),
                "cold_median_ms": ms(statistics.median(all_cold)),
                "cold_p99_ms": ms(pct(all_cold, 99)),
                "warm_median_ms": ms(statistics.median(all_warm)),
                "warm_p99_ms": ms(pct(all_warm, 99)),
            },
            "overall_refused": {
                "cases": sum(1 for v in per_case.values() if v["explain_refused"]),
                "warm_median_ms": ms(statistics.median(refused_warm)) if refused_warm else None,
                "warm_p99_ms": ms(pct(refused_warm, 99)) if refused_warm else None,
            },
            "per_case": per_case,
        },
        "whole_process": {"runs": args.runs, "cases": whole},
    }
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
