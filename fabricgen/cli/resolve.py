"""fabricgen resolve and schema: the resolved device models, and the JSON Schema of the inputs."""

from __future__ import annotations

import json
from pathlib import Path

import click

from fabricgen.api import dump_fabric
from fabricgen.cli.common import fail, input_options, load_and_resolve
from fabricgen.load.selection import filter_option, selected_or_fail


@click.command("resolve")
@input_options
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
@click.option("--device", "devices", multiple=True, help="only these devices (repeatable)")
@filter_option("only these devices (with --device: the devices either names)")
def resolve_cmd(intent: Path, inventory: Path, fmt: str, devices: tuple[str, ...], filter_expr: str | None) -> None:
    """Print the resolved device models: every decision fabricgen made, before any vendor syntax.

    Loads and checks the intent and inventory as render does, then prints what every renderer reads: per
    device its port roles, speeds, MTUs, PFC priorities, headroom, ECN thresholds, DSCP and scheduler maps and
    management address, and per GPU host its NICs' settings and NCCL environment. When a rendered line
    surprises you, the decision behind it is here. Input errors exit 2, as in render.

    \b
    Examples:
      fabricgen resolve --device leaf1                 # one switch's decisions, as YAML
      fabricgen resolve --device node1 --device spine1 intent/minimal.yaml
      fabricgen resolve --format json | jq '.devices.node1.host.nccl_env'
      fabricgen resolve --filter 'role=spine,group=gpu_nodes'  # the spines and group gpu_nodes' members
    """
    loaded, fabric = load_and_resolve(intent, inventory)
    unknown = sorted(set(devices) - set(fabric.devices))
    if unknown:
        fail(f"no such device: {', '.join(unknown)}")
    filtered = selected_or_fail(loaded.inventory, filter_expr, fail)
    if devices or filtered is not None:
        wanted = [*devices, *(name for name in filtered or () if name not in devices)]
        fabric = fabric.model_copy(update={"devices": {n: fabric.devices[n] for n in wanted}})
    click.echo(dump_fabric(fabric, fmt), nl=False)


@click.command()
@click.argument("kind", type=click.Choice(["intent", "inventory"]), default="intent")
def schema(kind: str) -> None:
    """Print the JSON Schema of an intent file or of an inventory host (for editors' YAML language server).

    KIND is `intent` (the intent file, e.g. intent/fabric.yaml) or `inventory` (the Nornir SimpleInventory's
    hosts.yaml or groups.yaml). An editor with a YAML language server then completes keys, shows each key's
    description and underlines a misspelt key or a wrong type as you type, before `fabricgen lint` runs.

    \b
    Examples:
      fabricgen schema > intent/fabricgen-intent.schema.json
      fabricgen schema inventory > inventory/fabricgen-inventory.schema.json
      # then, as the first line of intent/fabric.yaml (hosts.yaml alike):
      # yaml-language-server: $schema=fabricgen-intent.schema.json
    """
    from fabricgen.models.jsonschema import intent_schema, inventory_schema

    click.echo(json.dumps(intent_schema() if kind == "intent" else inventory_schema(), indent=2,
                          sort_keys=True))
