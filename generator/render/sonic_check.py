"""`--sonic-yang DIR`: render every switch's config_db.json and validate it with SONiC's YANG models.

Loading the models costs far more than validating one switch, so one validator per
model directory serves every switch and every call in the process.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from generator.plan.model import FabricPlan
from generator.render.sonic import SonicDataError, render_config_db
from generator.render.sonic_yang import SonicYangUnavailable, YangIssue, YangValidator


@cache
def _validator(yang_dir: Path) -> YangValidator:
    return YangValidator(yang_dir)


def validator(yang_dir: str | Path) -> YangValidator:
    """The shared validator of yang_dir (raises SonicYangUnavailable with a fix when it cannot load)."""
    return _validator(Path(yang_dir).resolve())


def issue_line(issue: YangIssue) -> str:
    table = issue.table or "-"
    key = issue.key or "-"
    return f"{issue.device}: table {table}, key {key}: {issue.message}"


def config_findings(config_db: dict, device: str, yang_dir: str | Path) -> list[str]:
    """One line per YANG problem of one config_db document."""
    return [issue_line(i) for i in validator(yang_dir).validate(config_db, device)]


def yang_findings(plan: FabricPlan, yang_dir: str | Path) -> list[str]:
    """One line per problem over every switch: device, table, key and the validator's reason."""
    try:
        check = validator(yang_dir)
    except SonicYangUnavailable as exc:
        return [f"SONiC YANG validation unavailable: {exc}"]
    lines: list[str] = []
    for sw in plan.switches:
        try:
            # validate the rendered bytes, not the dict behind them: what is checked is what is written
            config_db = json.loads(render_config_db(plan, sw))
        except SonicDataError as exc:
            lines.append(f"{sw.name}: cannot render config_db.json: {exc}")
            continue
        lines.extend(issue_line(i) for i in check.validate(config_db, sw.name))
    return lines


__all__ = ["config_findings", "issue_line", "validator", "yang_findings"]
