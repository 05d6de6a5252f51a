"""Documents a reviewer would rather read than configs, built from the resolved fabric and its lint findings:
one Markdown page per device, a fabric report in one self-contained HTML file (topology picture, class matrix,
headroom, lint), and a validation runbook. Pure: models in, texts out; the `docs` command writes them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabricgen.lint.registry import Finding
from fabricgen.models.device import Fabric
from fabricgen.report.device import device_page
from fabricgen.report.html import fabric_report
from fabricgen.report.runbook import runbook
from fabricgen.report.text import md_table

if TYPE_CHECKING:
    from fabricgen.observe.reportdata import ReportHealth

FABRIC_REPORT = "fabric.html"
RUNBOOK = "runbook.md"
INDEX = "README.md"


def build_docs(fabric: Fabric, findings: list[Finding], waived: int = 0,
               health: ReportHealth | None = None) -> dict[str, str]:
    """{relative path: text} of the whole documentation tree (``waived``/``health``: see fabric_report)."""
    per_device: dict[str, list[Finding]] = {}
    for finding in findings:
        per_device.setdefault(finding.device, []).append(finding)
    files = {f"devices/{name}.md": device_page(device, per_device.get(name, []))
             for name, device in sorted(fabric.devices.items())}
    files[INDEX] = _index(fabric, per_device)
    files[FABRIC_REPORT] = fabric_report(fabric, findings, waived, health)
    files[RUNBOOK] = runbook(fabric)
    return files


def _index(fabric: Fabric, per_device: dict[str, list[Finding]]) -> str:
    rows: list[tuple[object, ...]] = [(f"[{name}](devices/{name}.md)", device.role, device.platform, len(device.ports),
             _count(per_device.get(name, []))) for name, device in sorted(fabric.devices.items())]
    return (f"# {fabric.name}\n\nThe fabric report with its topology picture: [{FABRIC_REPORT}]({FABRIC_REPORT}). "
            f"Validation runbook: [{RUNBOOK}]({RUNBOOK}).\n\n"
            + _devices_table(rows))


def _devices_table(rows: list[tuple[object, ...]]) -> str:
    # Links are Markdown syntax made here from device names (constrained: letters, digits, '.', '_', '-').
    table = md_table(("Role", "Platform", "Ports", "Lint"), [row[1:] for row in rows])
    lines = table.splitlines()
    body = [f"| {row[0]} |" + line[1:] for row, line in zip(rows, lines[2:], strict=True)]
    return "\n".join(["| Device " + lines[0], "|---" + lines[1], *body]) + "\n"


def _count(findings: list[Finding]) -> str:
    levels = [(level, sum(1 for f in findings if f.severity == level)) for level in ("error", "warning", "info")]
    return ", ".join(f"{count} {level}" for level, count in levels if count) or "clean"
