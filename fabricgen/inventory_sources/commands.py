"""`fabricgen inventory export`: a Nornir SimpleInventory written out as another inventory source."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import click

from fabricgen.diagnostics import InputError
from fabricgen.inventory_sources.export import ExportError, export_compact


def register(main: click.Group, fail: Callable[[str], NoReturn]) -> None:
    @main.group("inventory")
    def inventory_group() -> None:
        """Move an inventory between its forms: SimpleInventory files, the compact cabling form, Nautobot."""

    @inventory_group.command("export")
    @click.option("--to", "target", type=click.Choice(["compact"]), required=True,
                  help="compact: devices.yaml (port templates) + cabling.csv")
    @click.option("-i", "--inventory", type=click.Path(path_type=Path, file_okay=False, exists=True),
                  default=Path("inventory"), show_default=True, help="the Nornir SimpleInventory to export")
    @click.option("-o", "--out", type=click.Path(path_type=Path, file_okay=False), required=True,
                  help="directory for the compact form (created; its devices.yaml, cabling.csv, groups.yaml and "
                       "defaults.yaml are replaced)")
    def export(target: str, inventory: Path, out: Path) -> None:
        """Write a SimpleInventory as another inventory form, which renders the same tree.

        \b
        Examples:
          fabricgen inventory export --to compact -i inventory -o site-compact
          fabricgen render -i site-compact          # the same configs as from inventory/
        """
        if (out / "hosts.yaml").exists():
            fail(f"{out} holds a hosts.yaml: -i would read that, not the compact form; choose another directory")
        try:
            form = export_compact(inventory, out)
        except InputError as exc:
            for diagnostic in exc.diagnostics:
                click.echo(str(diagnostic), err=True)
            fail(f"{len(exc.diagnostics)} problem(s) in {inventory}; nothing was exported")
        except ExportError as exc:
            fail(str(exc))
        click.echo(f"{out}: {len(form.devices)} devices, {len(form.templates)} port templates, {len(form.cables)} "
                   "cables (devices.yaml, cabling.csv, groups.yaml, defaults.yaml)")
