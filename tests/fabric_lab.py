"""The mixed example's whole fabric in the lab: every device of inventory/mixed becomes a lab host (tests/lab.py),
the switches as the device targets of tests/targets (programs that implement each vendor's documented
transactional behaviour; no vendor image runs here), the GPU hosts as the lab's SSH hosts with NIC tool models.

A developer tool too (root, openssh-server): ``python tests/fabric_lab.py up --inputs DIR`` builds it and writes
the intent and inventory to DIR; ``python tests/lab.py --prefix fgmix down`` removes it.

``fabricgen diff|push|rollback`` then run against it exactly as against a real fabric: the inventory written
here is inventory/mixed with each device's management address replaced by its lab host's and the NAPALM
connection options each platform's driver needs (lab key and known_hosts for SSH, the lab CA for HTTPS APIs).
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from lab import MIXED_INTENT, MIXED_INVENTORY, Lab, kind_for, wait_until

CLI_PREFIX = "fgmix"  # `python tests/fabric_lab.py up`: one developer fabric at a time
# inventory/mixed: device -> the lab kind that stands for it (its fabricgen platform).
MIXED_KINDS = {"leaf1": "sonic", "leaf2": "eos", "leaf3": "nvue", "leaf4": "nxos", "spine1": "sonic",
               "spine2": "eos", "oob1": "eos", "node1": "connectx", "node2": "connectx", "node3": "linux-dcb",
               "node4": "linux-dcb"}


def up(prefix: str | None = None, *, owned: bool = True) -> tuple[Lab, dict[str, str]]:
    """The lab of the mixed fabric, and which lab host stands for each device (``owned``: as Lab.up)."""
    names = list(MIXED_KINDS)
    lab = Lab.up(len(names), prefix, owned=owned, kinds=[MIXED_KINDS[name] for name in names])
    try:
        for host in lab.hosts:
            await_target(lab, host)
    except BaseException:
        lab.down()
        raise
    return lab, dict(zip(names, lab.hosts, strict=True))


def await_target(lab: Lab, host: str) -> None:
    """A switch target whose API runs as a daemon answers before it is used (its module's lab_ready)."""
    kind = lab.hosts[host].kind
    ready = getattr(_target_module(kind.module), "lab_ready", None) if kind.target else None
    if ready is not None:
        wait_until(lambda: ready(lab, host), f"{host}'s {kind.platform} target", timeout=60)


def write_inputs(lab: Lab, hosts: dict[str, str], directory: Path) -> tuple[Path, Path]:
    """intent/mixed.yaml and inventory/mixed with every device reachable in the lab."""
    intent = directory / "intent.yaml"
    inventory = directory / "inventory"
    inventory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(MIXED_INTENT, intent)
    for name in ("groups.yaml", "defaults.yaml"):
        shutil.copyfile(MIXED_INVENTORY / name, inventory / name)
    devices: dict[str, Any] = yaml.safe_load((MIXED_INVENTORY / "hosts.yaml").read_text())
    for name, entry in devices.items():
        host = hosts[name]
        # The switch configs keep the management address the intent plans for; Nornir reaches the lab's.
        if lab.hosts[host].kind.target:
            entry.setdefault("data", {}).setdefault("mgmt_address", entry["hostname"])
        entry["hostname"] = lab.address(host)
        entry.update(connection(lab, host))
    header = f"# fabricgen lab {lab.prefix}: inventory/mixed, every device a lab host (tests/fabric_lab.py).\n"
    (inventory / "hosts.yaml").write_text(header + yaml.safe_dump(devices, sort_keys=False))
    return intent, inventory


def connection(lab: Lab, host: str) -> dict[str, Any]:
    """How the device's driver logs in: the target module's own answer for a switch, the lab key for a host."""
    kind = lab.hosts[host].kind
    if kind.target:
        module = _target_module(kind.module)
        return dict(module.lab_connection(lab, host))
    napalm = {"platform": "fabricgen_host",
              "extras": {"optional_args": {"key_file": str(lab.key_file), "known_hosts": str(lab.known_hosts)}}}
    return {"username": "root", "connection_options": {"napalm": napalm}}


def _target_module(name: str) -> Any:
    kind_for(name)  # puts tests/ on sys.path the way the lab imports targets
    return importlib.import_module(f"targets.{name}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/fabric_lab.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["up"])
    parser.add_argument("--prefix", default=CLI_PREFIX, help=f"the lab's name prefix (default {CLI_PREFIX})")
    parser.add_argument("--inputs", type=Path, required=True, help="write the intent and inventory here")
    args = parser.parse_args(argv)
    lab, hosts = up(args.prefix, owned=False)
    intent, inventory = write_inputs(lab, hosts, args.inputs)
    for name, host in hosts.items():
        print(f"{name:8} {lab.hosts[host].platform:10} {lab.address(host)}")
    print(f"fabricgen inputs: {intent} -i {inventory}")
    print(f"remove it with: python tests/lab.py --prefix {args.prefix} down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
