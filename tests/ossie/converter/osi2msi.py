# ossie-dbt's own osi-to-msi, serialized with pydantic v1's API: its CLI calls
# model_dump_json, which the manifest (a pydantic.v1 model in metricflow
# 0.211 and 0.213) does not have.
import sys, yaml
from pathlib import Path
from ossie.models import OSIDocument
from ossie_dbt.osi_to_msi import OSIToMSIConverter
doc = OSIDocument.model_validate(yaml.safe_load(Path(sys.argv[1]).read_text()))
result = OSIToMSIConverter().convert(doc)
for issue in getattr(result, "issues", []) or []:
    print(f"[issue] {issue.issue_type.value}: {issue.element_name}", file=sys.stderr)
Path(sys.argv[2]).write_text(result.output.json(by_alias=True, exclude_none=True, indent=2))
