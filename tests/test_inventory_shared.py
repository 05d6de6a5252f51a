"""A Nornir SimpleInventory that other automation shares: fabricgen's keys under `data.fabricgen` (or flat, as
before), other tools' keys beside them ignored, hosts that are not fabricgen's skipped with a note, DNS names as
`hostname`, and what a platform needs reported at load."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from nornir import InitNornir

from fabricgen.api import dump_device
from fabricgen.cli import main
from fabricgen.load.fabric import FabricInput, load
from fabricgen.models.diagnostics import DEVICE_FACT_MISSING, InputError
from fabricgen.resolve import resolve

from conftest import ROOT

ROUTER = {"hostname": "core1.example.net", "platform": "ios",
          "data": {"site": "ams1", "role": "core-router", "ntp": ["192.0.2.123"]}}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "intent" / "fabric.yaml", tmp_path / "fabric.yaml")
    shutil.copytree(ROOT / "inventory", tmp_path / "inventory")
    return tmp_path


def read(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def write(path: Path, data: Any) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def namespaced(entries: dict[str, Any], others: dict[str, Any] | None = None) -> dict[str, Any]:
    """Each entry's `data` moved under `data.fabricgen`, with ``others`` (another tool's keys) beside it."""
    return {name: {**entry, "data": {**(others or {}), "fabricgen": entry["data"]}} if "data" in entry else entry
            for name, entry in entries.items()}


def to_namespace_layout(inventory: Path, others: dict[str, Any] | None = None) -> None:
    for name in ("hosts.yaml", "groups.yaml"):
        write(inventory / name, namespaced(read(inventory / name), others))


def problems(workspace: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load(workspace / "fabric.yaml", workspace / "inventory", note=lambda line: None)
    return [str(d) for d in caught.value.diagnostics]


def line_of(path: Path, needle: str) -> int:
    """The line ``needle`` is on (one that starts with a line break: the line after it)."""
    text = path.read_text()
    return text[:text.index(needle)].count("\n") + 1 + needle.startswith("\n")


def resolved(loaded: FabricInput) -> dict[str, str]:
    fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    return {name: dump_device(model, "json") for name, model in fabric.devices.items()}


# --- the namespace ------------------------------------------------------------------------------------------

def test_the_namespace_layout_resolves_exactly_as_the_flat_one(workspace: Path, example_input: FabricInput) -> None:
    to_namespace_layout(workspace / "inventory", others={"site": "ams1", "rack": {"row": 4}})
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    assert resolved(loaded) == resolved(example_input)


def test_other_automation_still_reads_its_keys_and_fabricgens_through_nornir(workspace: Path) -> None:
    inventory = workspace / "inventory"
    to_namespace_layout(inventory, others={"site": "ams1"})
    nornir = InitNornir(runner={"plugin": "serial"}, logging={"enabled": False}, inventory={
        "plugin": "SimpleInventory", "options": {
            "host_file": str(inventory / "hosts.yaml"), "group_file": str(inventory / "groups.yaml"),
            "defaults_file": str(inventory / "defaults.yaml")}})
    leaf1 = nornir.inventory.hosts["leaf1"]
    assert leaf1["site"] == "ams1"
    assert "Ethernet0" in leaf1["fabricgen"]["ports"]


def test_a_key_inside_the_namespace_inherits_key_by_key_from_groups(workspace: Path) -> None:
    """Nornir replaces `data.fabricgen` whole; fabricgen merges inside it, so moving keys under the namespace
    keeps what a host inherits (here: role and hardware from the group, ports from the host)."""
    to_namespace_layout(workspace / "inventory")
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    leaf1 = loaded.inventory.devices["leaf1"]
    assert (leaf1.role, leaf1.data.hardware, "Ethernet0" in leaf1.data.ports) == ("leaf", "ACS-MSN4700", True)


def test_a_typo_inside_the_namespace_is_an_error_at_its_line(workspace: Path) -> None:
    inventory = workspace / "inventory"
    to_namespace_layout(inventory, others={"prots": "another tool's key: ignored"})
    hosts = read(inventory / "hosts.yaml")
    hosts["spine1"]["data"]["fabricgen"]["prots"] = hosts["spine1"]["data"]["fabricgen"].pop("ports")
    write(inventory / "hosts.yaml", hosts)
    line = line_of(inventory / "hosts.yaml", "      prots:")  # spine1's, under fabricgen (the others are beside it)
    found = problems(workspace)
    assert f"{inventory / 'hosts.yaml'}:{line}:7: spine1.data.fabricgen.prots: unknown key 'prots' (did you mean " \
           "'ports'?)" in found
    assert not any(".data.prots" in message for message in found)  # the same key beside the namespace: ignored


def test_a_typo_in_the_flat_layout_is_still_an_error(workspace: Path) -> None:
    hosts_file = workspace / "inventory" / "hosts.yaml"
    hosts_file.write_text(hosts_file.read_text().replace("  data:\n    ports:", "  data:\n    prots:", 1))
    assert any(message.endswith("leaf1.data.prots: unknown key 'prots' (did you mean 'ports'?)")
               for message in problems(workspace))


def test_both_layouts_in_one_host_name_both_paths(workspace: Path) -> None:
    inventory = workspace / "inventory"
    groups = read(inventory / "groups.yaml")
    groups["spines"]["data"] = {"fabricgen": groups["spines"]["data"]}  # the group moved; the host's ports did not
    write(inventory / "groups.yaml", groups)
    hosts = inventory / "hosts.yaml"
    group_line = line_of(inventory / "groups.yaml", "fabricgen:")
    ports_line = line_of(hosts, "\nspine1:") + 4
    messages = [message for message in problems(workspace) if "fabricgen's keys are both" in message]
    assert f"{hosts}:{ports_line}:5: spine1.data.ports: fabricgen's keys are both directly " \
           f"under data (data.ports, hosts.yaml) and under data.fabricgen (groups.yaml:{group_line}); fabricgen " \
           "cannot tell which layout is meant (keep one layout for the host and its groups: move data.ports into " \
           "data.fabricgen)" in messages
    assert len(messages) == 2  # spine1 and spine2


def test_the_namespace_must_be_a_mapping(workspace: Path) -> None:
    inventory = workspace / "inventory"
    hosts = read(inventory / "hosts.yaml")
    hosts["spine1"]["data"] = {"fabricgen": ["role", "spine"]}
    write(inventory / "hosts.yaml", hosts)
    assert any("spine1.data.fabricgen: data.fabricgen must be a mapping of fabricgen's keys" in message
               for message in problems(workspace))


# --- hosts that are not fabricgen's ------------------------------------------------------------------------

def test_a_host_without_a_fabricgen_role_is_skipped_with_one_note(workspace: Path) -> None:
    """`data: {fabricgen: {}}` in defaults.yaml puts every host in the namespace layout: the router's `role` is
    then another tool's key, and the router, with no `data.fabricgen` of its own, is not fabricgen's."""
    inventory = workspace / "inventory"
    to_namespace_layout(inventory)
    write(inventory / "defaults.yaml", {"data": {"fabricgen": {}}})
    write(inventory / "hosts.yaml", {**read(inventory / "hosts.yaml"), "core1": ROUTER, "console1": {}})
    notes: list[str] = []
    loaded = load(workspace / "fabric.yaml", inventory, note=notes.append)
    assert notes == ["note: 2 inventory host(s) skipped, not fabricgen's: console1 (no fabricgen role), "
                     "core1 (no fabricgen role)"]
    assert loaded.skipped == {"core1": "no fabricgen role", "console1": "no fabricgen role"}
    assert "core1" not in loaded.inventory.devices and len(loaded.inventory.devices) == 9


def test_an_inventory_of_which_no_host_is_fabricgens_is_an_input_error(workspace: Path) -> None:
    """Every host skipped (a shared group lost its role, say) leaves nothing to render: said at the inventory, with
    the first host's reason, as an input problem (the render stopped with an internal error before)."""
    inventory = workspace / "inventory"
    write(inventory / "hosts.yaml", {"core1": {**ROUTER, "data": {"site": "ams1"}}, "console1": {}})
    hosts = inventory / "hosts.yaml"
    assert problems(workspace) == [
        f"{hosts}:1:1: <root>: none of the inventory's hosts is fabricgen's: each was skipped (console1: no "
        "fabricgen role and 1 more) (give each device fabricgen manages its role (data.role, on the host or one of "
        "its groups); a host without one belongs to other automation)"]
    rendered = CliRunner().invoke(main, ["render", str(workspace / "fabric.yaml"), "-i", str(inventory), "-o",
                                         str(workspace / "out"), "--jobs", "2"])
    assert rendered.exit_code == 2 and "internal error" not in rendered.output
    assert not (workspace / "out").exists()


def test_flat_layout_other_hosts_are_skipped_too(workspace: Path) -> None:
    """In the flat layout a host is another tool's when it has no fabricgen key of its own at all."""
    inventory = workspace / "inventory"
    router = {**ROUTER, "data": {"site": "ams1"}}
    write(inventory / "hosts.yaml", {**read(inventory / "hosts.yaml"), "core1": router})
    loaded = load(workspace / "fabric.yaml", inventory, note=lambda line: None)
    assert loaded.skipped == {"core1": "no fabricgen role"}


def test_in_the_flat_layout_a_role_key_is_fabricgens(workspace: Path) -> None:
    """Without the namespace anywhere the router inherits from, its `role` can only be read as fabricgen's: a
    role fabricgen does not know is an error (and the namespace in defaults.yaml is the way out, above)."""
    inventory = workspace / "inventory"
    write(inventory / "hosts.yaml", {**read(inventory / "hosts.yaml"), "core1": ROUTER})
    assert any("core1.data.role: Input should be 'leaf', 'spine', 'oob' or 'gpu-host'" in message
               for message in problems(workspace))


def test_defaults_alone_do_not_make_a_host_fabricgens(workspace: Path) -> None:
    inventory = workspace / "inventory"
    to_namespace_layout(inventory)
    write(inventory / "defaults.yaml", {"data": {"fabricgen": {"sonic_release": "202411"}}})
    write(inventory / "hosts.yaml", {**read(inventory / "hosts.yaml"), "core1": ROUTER})
    loaded = load(workspace / "fabric.yaml", inventory, note=lambda line: None)
    assert list(loaded.skipped) == ["core1"]
    assert loaded.inventory.devices["leaf1"].data.sonic_release == "202411"


@pytest.mark.parametrize("opt_out", [None, False])
def test_fabricgen_null_or_false_opts_a_host_out_even_in_a_fabricgen_group(workspace: Path, opt_out: Any) -> None:
    inventory = workspace / "inventory"
    hosts = read(inventory / "hosts.yaml")
    hosts["oob-lab"] = {"hostname": "192.0.2.99", "groups": ["oob"], "data": {"fabricgen": opt_out}}
    write(inventory / "hosts.yaml", hosts)
    loaded = load(workspace / "fabric.yaml", inventory, note=lambda line: None)
    word = "null" if opt_out is None else "false"
    assert loaded.skipped == {"oob-lab": f"data.fabricgen: {word} in hosts.yaml"}


def test_a_host_with_fabricgen_keys_but_no_role_is_an_error_not_skipped(workspace: Path) -> None:
    inventory = workspace / "inventory"
    hosts = read(inventory / "hosts.yaml")
    hosts["spine1"]["groups"] = []
    hosts["spine1"]["platform"] = "eos"
    write(inventory / "hosts.yaml", hosts)
    assert any("spine1.data.role: missing required key 'role'" in message for message in problems(workspace))


def test_a_peer_that_names_a_skipped_host_says_so(workspace: Path) -> None:
    inventory = workspace / "inventory"
    hosts = read(inventory / "hosts.yaml")
    hosts["core1"] = ROUTER | {"data": {"site": "ams1"}}
    hosts["leaf1"]["data"]["ports"]["Ethernet32"] = {"speed": "100G", "lanes": "32,33,34,35", "peer": "core1:Gi0/1"}
    write(inventory / "hosts.yaml", hosts)
    [message] = problems(workspace)
    assert ("leaf1.data.ports.Ethernet32.peer: peer device 'core1' is in the inventory but not one "
                            "fabricgen configures (it has no fabricgen role, so it was skipped) (give core1 a "
                            "fabricgen role (data.fabricgen.role or data.role), or remove this peer)") in message


def test_the_cli_prints_the_note_on_stderr_and_renders_the_rest(workspace: Path) -> None:
    inventory = workspace / "inventory"
    write(inventory / "hosts.yaml", {**read(inventory / "hosts.yaml"), "core1": ROUTER | {"data": {"site": "x"}}})
    result = CliRunner().invoke(main, ["render", str(workspace / "fabric.yaml"), "-i", str(inventory), "-o",
                                       str(workspace / "out"), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "note: 1 inventory host(s) skipped, not fabricgen's: core1 (no fabricgen role)\n" in result.stderr
    assert "core1" not in result.stdout
    assert not (workspace / "out" / "core1").exists() and (workspace / "out" / "leaf1").is_dir()


# --- hostname: an address or a DNS name ---------------------------------------------------------------------

def test_a_gpu_host_may_be_reached_by_dns_name(workspace: Path) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    data = read(hosts)
    data["node1"]["hostname"] = "node1.gpu.example.net"
    write(hosts, data)
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    assert loaded.inventory.devices["node1"].hostname == "node1.gpu.example.net"
    resolve(loaded.intent, loaded.inventory, loaded.locate)  # no management-subnet check on a name


@pytest.mark.parametrize("hostname", ["leaf 1.example.net", "leaf1.example.net\nshutdown", "-leaf1.example.net",
                                      "leaf1..example.net", "leaf1.example.net;reboot", "a" * 64 + ".net"])
def test_a_hostname_that_is_no_dns_name_is_refused(workspace: Path, hostname: str) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    data = read(hosts)
    data["node1"]["hostname"] = hostname
    write(hosts, data)
    assert any("node1.hostname:" in message and "(write the management address" in message
               for message in problems(workspace))


def test_a_switch_named_by_dns_takes_its_config_address_from_mgmt_address(workspace: Path) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    data = read(hosts)
    data["spine1"]["hostname"] = "spine1.mgmt.example.net"
    write(hosts, data)
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    with pytest.raises(InputError) as caught:
        resolve(loaded.intent, loaded.inventory, loaded.locate)
    [message] = map(str, caught.value.diagnostics)
    assert message.endswith("spine1.hostname: switch spine1's hostname 'spine1.mgmt.example.net' is a DNS name, "
                            "and its config needs its management address (set data.mgmt_address to its address in "
                            "192.0.2.0/24)")
    data["spine1"]["data"]["mgmt_address"] = "192.0.2.21"
    write(hosts, data)
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    mgmt = fabric.devices["spine1"].mgmt
    assert mgmt is not None and mgmt.address == "192.0.2.21/24"


def test_mgmt_address_is_checked_against_the_management_subnet(workspace: Path) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    data = read(hosts)
    data["spine1"]["hostname"] = "spine1.mgmt.example.net"
    data["spine1"]["data"]["mgmt_address"] = "198.51.100.21"
    write(hosts, data)
    loaded = load(workspace / "fabric.yaml", workspace / "inventory")
    with pytest.raises(InputError) as caught:
        resolve(loaded.intent, loaded.inventory, loaded.locate)
    [message] = map(str, caught.value.diagnostics)
    assert message.startswith(f"{hosts}:{line_of(hosts, 'mgmt_address')}:")
    assert "spine1.data.mgmt_address: management address 198.51.100.21 is outside management subnet" in message


# --- what a platform needs ------------------------------------------------------------------------------------

def test_a_sonic_port_without_lanes_is_a_load_problem_naming_device_key_and_fix(workspace: Path) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    hosts.write_text(hosts.read_text().replace('Ethernet8: {speed: 400G, lanes: "8,9,10,11,12,13,14,15", fec: rs}',
                                               "Ethernet8: {speed: 400G, fec: rs}", 1))
    with pytest.raises(InputError) as caught:
        load(workspace / "fabric.yaml", workspace / "inventory")
    [diagnostic] = caught.value.diagnostics
    assert str(diagnostic) == (
        f"{hosts}:{line_of(hosts, 'Ethernet8: {speed: 400G, fec: rs}')}:7: leaf1.data.ports.Ethernet8.lanes: port "
        "leaf1:Ethernet8 has no lanes: SONiC's PORT table needs each port's lanes (sonic-port.yang: `leaf lanes` is "
        "mandatory except on chassis and VOQ systems) (add lanes: the port's hardware lanes as the SKU's "
        'port_config.ini lists them, e.g. "0,1,2,3")')
    assert diagnostic.rule == DEVICE_FACT_MISSING


def test_the_sonic_management_port_needs_no_lanes(example_input: FabricInput) -> None:
    leaf1 = example_input.inventory.devices["leaf1"]
    assert leaf1.data.ports["eth0"].lanes is None  # loaded without a problem: eth0 is the management port


def test_the_namespaced_spelling_shows_in_load_problems(workspace: Path) -> None:
    inventory = workspace / "inventory"
    to_namespace_layout(inventory)
    hosts = read(inventory / "hosts.yaml")
    del hosts["leaf1"]["data"]["fabricgen"]["ports"]["Ethernet8"]["lanes"]
    write(inventory / "hosts.yaml", hosts)
    [message] = problems(workspace)
    assert ": leaf1.data.fabricgen.ports.Ethernet8.lanes: port leaf1:Ethernet8 has no lanes" in message


def test_a_misspelt_nornir_key_of_a_fabricgen_host_is_an_error(workspace: Path) -> None:
    """Nornir ignores keys it does not read, so `hostnme` would only surface as a missing hostname (or not at all
    when a group gives one)."""
    hosts = workspace / "inventory" / "hosts.yaml"
    hosts.write_text(hosts.read_text().replace("  hostname: 192.0.2.21\n", "  hostnme: 192.0.2.21\n", 1))
    assert f"{hosts}:{line_of(hosts, 'hostnme')}:3: spine1.hostnme: unknown key 'hostnme' (Nornir reads hostname, " \
           "platform, groups, data, port, username, password, connection_options) (did you mean 'hostname'?)" in \
           problems(workspace)


def test_another_automations_host_may_carry_keys_nornir_ignores(workspace: Path) -> None:
    inventory = workspace / "inventory"
    write(inventory / "hosts.yaml", {**read(inventory / "hosts.yaml"),
                                     "core1": {"hostname": "core1", "rack": 4, "data": {"site": "ams1"}}})
    assert list(load(workspace / "fabric.yaml", inventory, note=lambda line: None).skipped) == ["core1"]


def test_the_readmes_shared_inventory_renders_as_it_says(tmp_path: Path) -> None:
    """README's "Sharing the inventory" example, split into its three files, renders leaf1 and skips core1."""
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("```yaml\n# hosts.yaml\n") + len("```yaml\n"):]
    block = block[:block.index("```")]
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    for part in re.split(r"^# ", block, flags=re.MULTILINE)[1:]:  # each file starts at a `# <name>` line
        name, _, text = part.partition("\n")
        (inventory / name.split(":")[0].strip()).write_text(text)
    (tmp_path / "intent.yaml").write_text((ROOT / "intent" / "minimal.yaml").read_text())
    result = CliRunner().invoke(main, ["render", str(tmp_path / "intent.yaml"), "-i", str(inventory), "-o",
                                       str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "note: 1 inventory host(s) skipped, not fabricgen's: core1 (no fabricgen role)\n" in result.stderr
    assert '"eth0|192.0.2.11/24"' in (tmp_path / "out" / "leaf1" / "config_db.json").read_text()
