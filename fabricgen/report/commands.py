"""`fabricgen docs`: the documentation tree of a fabric, written like a render (atomically, with a manifest, and
only over a tree fabricgen wrote)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from fabricgen.lint import lint
from fabricgen.model import Fabric
from fabricgen.output import OutputError, build_manifest, write_output
from fabricgen.report import FABRIC_REPORT, INDEX, RUNBOOK, build_docs

DEFAULT_DOCS = Path("fabric-docs")
EXIT_OUTPUT = 3


def register(main: click.Group, load_and_resolve: Callable[[Path, Path], tuple[Any, Fabric]],
             input_options: Callable[[Any], Any], fail: Callable[..., NoReturn]) -> None:
    @main.command("docs")
    @input_options
    @click.option("-o", "--out", type=click.Path(path_type=Path, file_okay=False), default=DEFAULT_DOCS,
                  show_default=True, help="the documentation tree (replaced whole; only a tree fabricgen wrote)")
    def docs_cmd(intent: Path, inventory: Path, out: Path) -> None:
        """Write the fabric's documentation: one Markdown page per device (interfaces with speed, peer, cable,
        MTU, PFC priorities, headroom required and who configures it, ECN thresholds; the QoS matrix DSCP →
        class → priority → TC → queue → PFC → ECN → scheduler and how the platform spells each part), a
        self-contained HTML fabric report (topology picture with links coloured by lint findings, class matrix
        across platforms, headroom per port, lint summary) and a validation runbook (perftest and NCCL commands
        from the intent, per-platform counters and what healthy looks like). Lint findings are shown, not
        enforced: documentation of a fabric with errors is still written.

        \b
        Examples:
          fabricgen docs                                   # the bundled example, into fabric-docs/
          fabricgen docs intent/mixed.yaml -i inventory/mixed -o docs-mixed
          xdg-open fabric-docs/fabric.html                 # the report: one file, nothing fetched
        """
        loaded, fabric = load_and_resolve(intent, inventory)
        files = build_docs(fabric, lint(fabric).findings)
        try:
            write_output(out, files, build_manifest(files, loaded.input_hashes, {"kind": "docs"}))
        except (OutputError, OSError) as exc:
            fail(f"cannot write {out}: {exc}; the previous documentation (if any) is unchanged", EXIT_OUTPUT)
        pages = sum(1 for name in files if name.startswith("devices/"))
        click.echo(f"{out}/: {pages} device pages ({out}/{INDEX}), {out}/{FABRIC_REPORT}, {out}/{RUNBOOK}",
                   file=sys.stdout)
