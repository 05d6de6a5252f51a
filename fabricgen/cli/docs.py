"""`fabricgen docs`: the documentation tree of a fabric, written like a render (atomically, with a manifest, and
only over a tree fabricgen wrote)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from fabricgen.build.output import OutputError, build_manifest, write_output
from fabricgen.lint import Finding, lint
from fabricgen.load.selection import filter_option, selected_or_fail
from fabricgen.models.device import Fabric
from fabricgen.observe.reportdata import ReportHealth, load_report_health
from fabricgen.observe.store import StoreError
from fabricgen.report import FABRIC_REPORT, INDEX, RUNBOOK, build_docs

DEFAULT_DOCS = Path("fabric-docs")
EXIT_OUTPUT = 3


def register(main: click.Group, load_and_resolve: Callable[[Path, Path], tuple[Any, Fabric]],
             input_options: Callable[[Any], Any], fail: Callable[..., NoReturn]) -> None:
    @main.command("docs")
    @input_options
    @click.option("-o", "--out", type=click.Path(path_type=Path, file_okay=False), default=DEFAULT_DOCS,
                  show_default=True, help="the documentation tree (replaced whole; only a tree fabricgen wrote)")
    @filter_option("device pages of these devices only (the fabric report and runbook stay whole-fabric)")
    @click.option("--history", "history_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
                  help="counter history for the report's health and trends [default: observe.sqlite, if present]")
    def docs_cmd(intent: Path, inventory: Path, out: Path, filter_expr: str | None, history_file: Path | None) -> None:
        """Write per-device Markdown pages, an HTML fabric report and a validation runbook.

        The documentation tree holds one Markdown page per device (interfaces with speed, peer, cable,
        MTU, PFC priorities, headroom required and who configures it, ECN thresholds; the QoS matrix DSCP →
        class → priority → TC → queue → PFC → ECN → scheduler and how the platform spells each part), a
        self-contained HTML fabric report (topology picture with links coloured by lint findings, class matrix
        across platforms, headroom per port, lint summary) and a validation runbook (perftest and NCCL commands
        from the intent, per-platform counters and what healthy looks like). Lint findings are shown, not
        enforced: documentation of a fabric with errors is still written. With --filter the tree holds the
        pages (and an index) of the selected devices only; the fabric report and the runbook still show the
        whole fabric, since a link or a host pair has two ends.

        \b
        Examples:
          fabricgen docs                                   # the bundled example, into fabric-docs/
          fabricgen docs intent/mixed.yaml -i inventory/mixed -o docs-mixed
          fabricgen docs --filter 'role=leaf' -o leaf-docs   # the leaves' pages, the whole-fabric report
          xdg-open fabric-docs/fabric.html                 # the report: one file, nothing fetched
        """
        loaded, fabric = load_and_resolve(intent, inventory)
        selected = selected_or_fail(loaded.inventory, filter_expr, fail)
        report = lint(fabric)
        try:  # the latest counter health and trends, when `fabricgen observe` has kept a history (observe's)
            health = load_report_health(fabric, history_file)
        except StoreError as exc:
            fail(str(exc))
        files = _docs(fabric, report.findings, selected, len(report.waived), health)
        extra: dict[str, Any] = {"kind": "docs"}
        if selected is not None:
            extra["filter"] = {"expression": filter_expr, "devices": len(selected)}
        try:
            write_output(out, files, build_manifest(files, loaded.input_hashes, extra))
        except (OutputError, OSError) as exc:
            fail(f"cannot write {out}: {exc}; the previous documentation (if any) is unchanged", EXIT_OUTPUT)
        pages = sum(1 for name in files if name.startswith("devices/"))
        click.echo(f"{out}/: {pages} device pages ({out}/{INDEX}), {out}/{FABRIC_REPORT}, {out}/{RUNBOOK}",
                   file=sys.stdout)


def _docs(fabric: Fabric, findings: list[Finding], selected: list[str] | None, waived: int = 0,
          health: ReportHealth | None = None) -> dict[str, str]:
    """The documentation tree; with a selection, the pages and the index of the selected devices beside the
    whole fabric's report and runbook."""
    files = build_docs(fabric, findings, waived, health)
    if selected is None:
        return files
    wanted = set(selected)
    subset = fabric.model_copy(update={"devices": {name: fabric.devices[name] for name in selected}})
    pages = build_docs(subset, [finding for finding in findings if finding.device in wanted])
    return {**{name: text for name, text in pages.items() if name not in (FABRIC_REPORT, RUNBOOK)},
            FABRIC_REPORT: files[FABRIC_REPORT], RUNBOOK: files[RUNBOOK]}
