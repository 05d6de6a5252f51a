"""`fabricgen inventory export`: a Nornir SimpleInventory written out as another inventory source."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import click

from fabricgen.load.sources.export import ExportError, export_compact
from fabricgen.models.diagnostics import InputError, folded_lines


def register(main: click.Group, fail: Callable[[str], NoReturn]) -> None:  # noqa: C901 - one command group's closures
    @main.group("inventory")
    def inventory_group() -> None:
        """Move an inventory between its forms: SimpleInventory files, the compact cabling form, Nautobot.

        Every command that takes -i reads any of the three: a SimpleInventory directory (hosts.yaml), a compact
        directory (devices.yaml with port templates and cabling.csv), or a Nautobot (nautobot://HOST, or a
        Nornir config naming NautobotInventory). Each renders the same tree for the same fabric.

        \b
        Examples:
          fabricgen inventory export --to compact -i inventory -o site-compact
          fabricgen inventory export --to nautobot -i inventory --url https://nautobot.example.net
        """

    @inventory_group.command("export")
    @click.option("--to", "target", type=click.Choice(["compact", "nautobot"]), required=True,
                  help="compact: devices.yaml (port templates) + cabling.csv into -o; nautobot: the Nautobot at "
                       "--url (token from NAUTOBOT_TOKEN)")
    @click.option("-i", "--inventory", type=click.Path(path_type=Path, file_okay=False, exists=True),
                  default=Path("inventory"), show_default=True, help="the Nornir SimpleInventory to export")
    @click.option("-o", "--out", type=click.Path(path_type=Path, file_okay=False), default=None,
                  help="--to compact: the directory to write (created; its devices.yaml, cabling.csv, groups.yaml "
                       "and defaults.yaml are replaced)")
    @click.option("--url", default=None, metavar="URL", help="--to nautobot: Nautobot's base URL, e.g. "
                  "https://nautobot.example.net")
    @click.option("--location", default="fabricgen", show_default=True,
                  help="--to nautobot: the Location the devices are created in")
    def export(target: str, inventory: Path, out: Path | None, url: str | None, location: str) -> None:
        """Write a SimpleInventory as another inventory form, which renders the same tree.

        --to compact writes devices.yaml (one port template per distinct port table, runs of ports folded into
        ranges), cabling.csv (one line per cable) and copies groups.yaml and defaults.yaml. --to nautobot
        creates what is missing in the Nautobot at --url and keeps what exists (run it again after a failure);
        its token needs write access and is read from NAUTOBOT_TOKEN only.

        \b
        Examples:
          fabricgen inventory export --to compact -i inventory -o site-compact
          fabricgen inventory export --to nautobot -i inventory --url https://nautobot.example.net
          fabricgen render -i site-compact          # the same configs as from inventory/
          fabricgen render -i nautobots://nautobot.example.net
        """
        if target == "nautobot":
            _to_nautobot(inventory, url, location)
            return
        if out is None:
            fail("--to compact needs -o DIRECTORY")
        if (out / "hosts.yaml").exists():
            fail(f"{out} holds a hosts.yaml: -i would read that, not the compact form; choose another directory")
        try:
            form = export_compact(inventory, out)
        except InputError as exc:
            for line in folded_lines(exc.diagnostics):
                click.echo(line, err=True)
            fail(f"{len(exc.diagnostics)} problem(s) in {inventory}; nothing was exported")
        except ExportError as exc:
            fail(str(exc))
        click.echo(f"{out}: {len(form.devices)} devices, {len(form.templates)} port templates, {len(form.cables)} "
                   "cables (devices.yaml, cabling.csv, groups.yaml, defaults.yaml)")

    def _to_nautobot(inventory: Path, url: str | None, location: str) -> None:
        from fabricgen.load.sources.nautobot_export import export_nautobot

        if not url:
            fail("--to nautobot needs --url, Nautobot's base URL")
        try:
            seeded = export_nautobot(inventory, url, location)
        except ExportError as exc:
            fail(str(exc))
        click.echo(f"{url}: {seeded.devices} devices, {seeded.interfaces} interfaces, {seeded.cables} new cables "
                   f"(location {location})")
