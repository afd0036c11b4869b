#!/usr/bin/env python3
"""Copies dbt's target/manifest.json and target/semantic_manifest.json into
tests/fixtures/dbt_shop_target/, with the values that change on every run
replaced by fixed ones so that regenerating gives byte-identical files:

- metadata.generated_at / invocation_started_at / run_started_at -> 1970-01-01T00:00:00Z
- metadata.invocation_id -> 00000000-0000-0000-0000-000000000000
- every "created_at" (a Unix time per node) -> 0.0
- the absolute path of the temporary project copy -> /tmp/dbt_shop

Nothing else is touched; both files keep dbt's own compact JSON layout
(json.dumps with default separators, key order as written by dbt).

usage: normalize_manifest.py PROJECT_DIR OUT_DIR
"""
import json
import sys
from pathlib import Path

FIXED_TIME = "1970-01-01T00:00:00Z"
FIXED_ID = "00000000-0000-0000-0000-000000000000"
FIXED_ROOT = "/tmp/dbt_shop"


def scrub(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "created_at" and isinstance(v, (int, float)):
                obj[k] = 0.0
            else:
                scrub(v)
    elif isinstance(obj, list):
        for v in obj:
            scrub(v)


def main() -> None:
    project = Path(sys.argv[1]).resolve()
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name in ("manifest.json", "semantic_manifest.json"):
        text = (project / "target" / name).read_text()
        text = text.replace(str(project), FIXED_ROOT)
        data = json.loads(text)
        meta = data.get("metadata")
        if name == "manifest.json":
            for k in ("generated_at", "invocation_started_at", "run_started_at"):
                if k in meta:
                    meta[k] = FIXED_TIME
            meta["invocation_id"] = FIXED_ID
            scrub(data)
        (out / name).write_text(json.dumps(data) + "\n")
        print(f"wrote {out / name}")


if __name__ == "__main__":
    main()
