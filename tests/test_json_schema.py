"""The exported JSON Schemas (`fabricgen schema intent|inventory`, and defaults.yaml's) accept what the loader
accepts: every bundled input, every input the lint fixtures and the SSH lab build, a fabric from bench/, and both
inventory layouts, checked with the `jsonschema` library; and a mistake the loader refuses within one file is
refused by the schema too. What depends on inheritance or on other keys is the loader's alone (jsonschema.py)."""

from __future__ import annotations

import ipaddress
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from test_inventory_shared import to_namespace_layout
from test_lint_cases import CASES_DIR, merge

from fabricgen.load.fabric import load
from fabricgen.models.diagnostics import InputError
from fabricgen.models.jsonschema import defaults_schema, intent_schema, inventory_schema

from conftest import EXAMPLE_INVENTORY, ROOT
from lab import Lab, plan_hosts

INTENT = jsonschema.Draft202012Validator(intent_schema())
HOSTS_OR_GROUPS = jsonschema.Draft202012Validator(inventory_schema())
DEFAULTS = jsonschema.Draft202012Validator(defaults_schema())
MANAGEMENT = {"vlan": 100, "subnet": "192.0.2.0/24", "gateway": "192.0.2.1"}


def schema_errors(intent: Path, inventory: Path) -> list[str]:
    """Every place the files break their schema, as `file: key.path: message`."""
    checks = [(intent, INTENT), (inventory / "hosts.yaml", HOSTS_OR_GROUPS), (inventory / "groups.yaml",
              HOSTS_OR_GROUPS), (inventory / "defaults.yaml", DEFAULTS)]
    found = []
    for path, validator in checks:
        if path.exists():
            for error in validator.iter_errors(yaml.safe_load(path.read_text())):
                found.append(f"{path.name}: {'.'.join(map(str, error.absolute_path))}: {error.message[:200]}")
    return found


def loads(intent: Path, inventory: Path) -> bool:
    try:
        load(intent, inventory, note=lambda line: None)
    except InputError:
        return False
    return True


# --- the inputs ------------------------------------------------------------------------------------------------

def lint_case_inputs() -> Iterator[Any]:
    """(id, intent data, hosts.yaml data, example) of every lint fixture, failing and passing, as tests/
    test_lint_cases.py builds them."""
    for path in sorted(CASES_DIR.glob("FG-*.yaml")):
        spec = yaml.safe_load(path.read_text())
        for kind in ("fail", "pass"):
            for index, case in enumerate(spec.get(kind) or []):
                if "intent" in case or "inventory" in case:
                    yield pytest.param(case, id=f"{path.stem}-{kind}-{index}")


def write_case(case: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    example = case.get("example", "fabric")
    source = ROOT / EXAMPLE_INVENTORY[example]
    inventory = directory / "inventory"
    inventory.mkdir()
    for name in ("groups.yaml", "defaults.yaml"):
        (inventory / name).write_text((source / name).read_text())
    hosts = yaml.safe_load((source / "hosts.yaml").read_text())
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(merge(hosts, case.get("inventory", {}))))
    intent = yaml.safe_load((ROOT / "intent" / f"{example}.yaml").read_text())
    (directory / "intent.yaml").write_text(yaml.safe_dump(merge(intent, case.get("intent", {}))))
    return directory / "intent.yaml", inventory


@pytest.mark.parametrize("example", sorted(EXAMPLE_INVENTORY))
def test_the_bundled_examples_are_valid(example: str) -> None:
    assert schema_errors(ROOT / "intent" / f"{example}.yaml", ROOT / EXAMPLE_INVENTORY[example]) == []


@pytest.mark.parametrize("case", list(lint_case_inputs()))
def test_every_lint_fixture_the_loader_accepts_is_valid(case: dict[str, Any], tmp_path: Path) -> None:
    intent, inventory = write_case(case, tmp_path)
    if loads(intent, inventory):
        assert schema_errors(intent, inventory) == []


def test_the_lint_fixtures_are_loaded_at_all(tmp_path: Path) -> None:
    """The test above is not vacuous: nearly every fixture loads (a few fail at load on purpose)."""
    cases = [param.values[0] for param in lint_case_inputs()]
    loaded = 0
    for index, case in enumerate(cases):
        directory = tmp_path / str(index)
        directory.mkdir()
        loaded += loads(*write_case(case, directory))
    assert loaded >= len(cases) * 0.9 and len(cases) > 50


def test_the_ssh_labs_inventory_is_valid(tmp_path: Path) -> None:
    """tests/lab.py's inputs (nothing is built: only the inventory a lab of 6 hosts would write)."""
    block = ipaddress.IPv4Network("198.18.7.0/24")
    lab = Lab(prefix="fgschema", block=block, hosts=plan_hosts("fgschema", block, 6), anchors={}, children={})
    intent, inventory = lab.write_inputs(tmp_path)
    assert loads(intent, inventory)
    assert schema_errors(intent, inventory) == []


def test_a_bench_fabric_is_valid(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_fabric.py"), "--gpus", "64", "-o", str(tmp_path)],
                   check=True, capture_output=True)
    assert loads(tmp_path / "intent.yaml", tmp_path / "inventory")
    assert schema_errors(tmp_path / "intent.yaml", tmp_path / "inventory") == []


def test_the_namespace_layout_with_other_automations_keys_is_valid(tmp_path: Path) -> None:
    intent = ROOT / "intent" / "fabric.yaml"
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    for name in ("hosts.yaml", "groups.yaml", "defaults.yaml"):
        (inventory / name).write_text((ROOT / "inventory" / name).read_text())
    to_namespace_layout(inventory, others={"site": "ams1", "netbox_id": 4711})
    hosts = yaml.safe_load((inventory / "hosts.yaml").read_text())
    hosts["core1"] = {"hostname": "core1.example.net", "platform": "ios", "rack": 4, "data": {"site": "ams1"}}
    hosts["node1"]["hostname"] = "node1.gpu.example.net"
    hosts["oob-lab"] = {"hostname": "192.0.2.99", "groups": ["oob"], "data": {"fabricgen": None}}
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    assert loads(intent, inventory)
    assert schema_errors(intent, inventory) == []


# --- intents the profile completes -------------------------------------------------------------------------

PROFILE_INTENTS = {
    "the profile alone": {},
    "one ECN threshold changed": {"qos": {"classes": {"rdma": {"ecn": {"min": "300KB"}}}}},
    "a single DSCP written as a number": {"qos": {"classes": {"rdma": {"dscp": 26}}}},
    "rdma keys overridden": {"rdma": {"gid_index": 1, "path_mtu": 1024}},
    # units spelt as documented (KB, MiB: `kb` is refused, tests/test_messages.py), a space allowed
    "sizes and speeds as the loader reads them": {"qos": {"classes": {"rdma": {"ecn": {"min": "150 KB",
                                                                                       "max": "1.5MiB"}}}}},
}


@pytest.mark.parametrize("override", PROFILE_INTENTS.values(), ids=PROFILE_INTENTS.keys())
def test_profile_roce_without_qos_or_rdma_is_valid(override: dict[str, Any], tmp_path: Path) -> None:
    data = {"fabric": "minimal", "profile": "roce", "management": MANAGEMENT, **override}
    (tmp_path / "intent.yaml").write_text(yaml.safe_dump(data))
    assert loads(tmp_path / "intent.yaml", ROOT / "inventory")
    assert list(INTENT.iter_errors(data)) == []


# --- mistakes within one file: refused by both -------------------------------------------------------------

REFUSED_INTENTS = {
    "no profile and no qos": {"fabric": "x", "management": MANAGEMENT},
    "a misspelt key under the profile": {"fabric": "x", "profile": "roce", "management": MANAGEMENT,
                                         "qos": {"classes": {"rdma": {"ecn": {"mn": "10KB"}}}}},
    "an unknown profile": {"fabric": "x", "profile": "rocev3", "management": MANAGEMENT},
    "a DSCP out of range": {"fabric": "x", "profile": "roce", "management": MANAGEMENT,
                            "qos": {"classes": {"rdma": {"dscp": [64]}}}},
    "a speed-like size": {"fabric": "x", "profile": "roce", "management": MANAGEMENT,
                          "qos": {"classes": {"rdma": {"ecn": {"min": "10 furlongs"}}}}},
}


@pytest.mark.parametrize("data", REFUSED_INTENTS.values(), ids=REFUSED_INTENTS.keys())
def test_an_intent_the_loader_refuses_the_schema_refuses(data: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "intent.yaml").write_text(yaml.safe_dump(data))
    assert not loads(tmp_path / "intent.yaml", ROOT / "inventory")
    assert list(INTENT.iter_errors(data)) != []


REFUSED_HOSTS = {
    "a misspelt flat key": {"data": {"prots": {}, "hardware": "X"}},
    "a misspelt key in the namespace": {"data": {"fabricgen": {"prots": {}}}},
    "a flat key beside the namespace": {"data": {"fabricgen": {"role": "spine"}, "ports": {}}},
    "the namespace as a list": {"data": {"fabricgen": ["role"]}},
    "a hostname with a space": {"hostname": "spine 1.example.net"},
    "a misspelt Nornir key": {"hostnme": "192.0.2.21"},
    "an unknown role": {"data": {"role": "core"}},
    "a port speed without unit": {"data": {"ports": {"Ethernet1/1": {"speed": "400"}}}},
}


@pytest.mark.parametrize("change", REFUSED_HOSTS.values(), ids=REFUSED_HOSTS.keys())
def test_a_host_the_loader_refuses_the_schema_refuses(change: dict[str, Any], tmp_path: Path) -> None:
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    for name in ("groups.yaml", "defaults.yaml"):
        (inventory / name).write_text((ROOT / "inventory" / name).read_text())
    hosts = yaml.safe_load((ROOT / "inventory" / "hosts.yaml").read_text())
    hosts["spine1"] = {**hosts["spine1"], **change}
    (inventory / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    assert not loads(ROOT / "intent" / "fabric.yaml", inventory)
    assert list(HOSTS_OR_GROUPS.iter_errors(hosts)) != []


def test_the_committed_intent_schema_is_the_generated_one() -> None:
    """intent/fabricgen-intent.schema.json is what `fabricgen schema` prints (tests/test_cli.py too)."""
    from click.testing import CliRunner

    from fabricgen.cli import main
    output = CliRunner().invoke(main, ["schema"]).output
    assert output == (ROOT / "intent" / "fabricgen-intent.schema.json").read_text()
