"""No config-line injection through any value (issue 12).

A payload list — every line-break code point, other controls, separators, quotes, ``$( )``, backticks, ``;``, CLI
keywords, range and path syntax — goes through every string-typed field of the intent and the inventory of the
mixed-vendor example (all six platforms). Each case is either refused (InputError, every diagnostic one line
naming the field's key path) or rendered so that every artifact is the baseline's, line for line, with the value
in place of the original: nothing else was added, split or dropped. Host scripts also pass ``bash -n`` and every
platform reader reads every device back to the model it was rendered from.
"""

from __future__ import annotations

import copy
import functools
import shutil
import subprocess
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from fabricgen.api import generate, render_device
from fabricgen.cli import main
from fabricgen.load.fabric import load
from fabricgen.models.common import LINE_BREAKS, Hostname, IpAddress, IpNetwork, PortName, Text
from fabricgen.models.device import Fabric
from fabricgen.models.diagnostics import Diagnostic, InputError
from fabricgen.platforms import get_platform
from fabricgen.platforms.common.hostscript import nic_function
from fabricgen.resolve import resolve

from conftest import ROOT

INTENT = ROOT / "intent" / "mixed.yaml"
INVENTORY = ROOT / "inventory" / "mixed"
INVENTORY_FILES = ("hosts.yaml", "groups.yaml", "defaults.yaml")

PAYLOADS: tuple[str, ...] = (
    *(f"{c}hostname pwned" for c in LINE_BREAKS),  # LF VT FF CR FS GS RS NEL LS PS
    "\x00", "\t", "\x1b[31m", "\x7f", "\u200b", "\u202e", "\ufeff",  # NUL, tab, ESC, DEL, zero-width, bidi, BOM
    " ", " shutdown", "; reboot", "&& reboot", "| reboot", "$(reboot)", "`reboot`", "${IFS}", "'", '"', "\\",
    "#", "!", "{", "}", ",", ":", "=", "*", "%x", "-64", "/../../etc", "/", "..", " end", "\nend\ninterface Ethernet1",
)


@dataclass(frozen=True)
class Field:
    """A string-typed field of the input: the key path its diagnostics name, the value it has, and how to put
    another value there (in the files as data: "intent" and the inventory's file names)."""

    key_path: str
    original: str
    put: Callable[[dict[str, dict[str, Any]], str], None]
    rename: bool = False  # a mapping key (a name): its references move with it
    named: str = ""  # the key path diagnostics name, where it is not key_path (a value inherited from a group)
    rendered: bool = True  # False: deploy's (credentials), never in a rendered file, so any text is accepted

    @property
    def diagnosed_at(self) -> str:
        return self.named or self.key_path


Put = Callable[[dict[str, dict[str, Any]], str], None]


def _set(*path: str | int) -> Put:
    def put(files: dict[str, dict[str, Any]], value: str) -> None:
        node: Any = files
        for part in path[:-1]:
            node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
        node[path[-1]] = value
    return put


def _rename_port(device: str, port: str) -> Put:
    """A port renamed, with every `peer` naming it: the only change is the name."""
    def put(files: dict[str, dict[str, Any]], value: str) -> None:
        hosts = files["hosts.yaml"]
        ports = hosts[device]["data"]["ports"]
        ports[value] = ports.pop(port)
        for host in hosts.values():
            for spec in host["data"]["ports"].values():
                if spec and spec.get("peer") == f"{device}:{port}":
                    spec["peer"] = f"{device}:{value}"
    return put


def _rename_frontend(group: str, port: str) -> Put:
    """The front-end interface renamed on the group and on its hosts."""
    def put(files: dict[str, dict[str, Any]], value: str) -> None:
        files["groups.yaml"][group]["data"]["frontend_interface"] = value
        for host in files["hosts.yaml"].values():
            if group in host.get("groups", []):
                _rename_port_of(host, port, value)
    return put


def _rename_port_of(host: dict[str, Any], port: str, value: str) -> None:
    ports = host["data"]["ports"]
    ports[value] = ports.pop(port)


def _rename_class(name: str) -> Put:
    def put(files: dict[str, dict[str, Any]], value: str) -> None:
        intent = files["intent"]
        intent["qos"]["classes"][value] = intent["qos"]["classes"].pop(name)
        intent["rdma"] = {k: (value if v == name else v) for k, v in intent["rdma"].items()}
    return put


FIELDS: tuple[Field, ...] = (
    Field("fabric", "mixed-vendor", _set("intent", "fabric")),
    Field("description", "the bundled recipe", _set("intent", "description")),
    Field("qos.classes", "management", _rename_class("management"), rename=True),
    Field("rdma.cnp_class", "cnp", _set("intent", "rdma", "cnp_class")),
    Field("management.subnet", "192.0.2.0/24", _set("intent", "management", "subnet")),
    Field("management.gateway", "192.0.2.1", _set("intent", "management", "gateway")),
    Field("management.vrf", "mgmt", _set("intent", "management", "vrf")),
    Field("data_subnets.[0]", "10.0.0.0/8", _set("intent", "data_subnets", 0)),
    Field("lint.waive.[0].reason", "kept until the congestion test", _set("intent", "lint", "waive", 0, "reason")),
    Field("lint.waive.[0].device", "leaf1", _set("intent", "lint", "waive", 0, "device")),
    Field("lint.waive.[0].port", "Ethernet0", _set("intent", "lint", "waive", 0, "port")),
    Field("leaf1.hostname", "192.0.2.11", _set("hosts.yaml", "leaf1", "hostname")),
    Field("node1.hostname", "198.51.100.11", _set("hosts.yaml", "node1", "hostname")),
    Field("leaf1.username", "admin", _set("hosts.yaml", "leaf1", "username"), rendered=False),
    Field("leaf1.password", "s3cret", _set("hosts.yaml", "leaf1", "password"), rendered=False),
    Field("leaf1.platform", "sonic", _set("hosts.yaml", "leaf1", "platform")),
    # Nornir skips a group it does not know: the host then lacks what the group gave it.
    Field("leaf1.groups.[0]", "sonic_leaf", _set("hosts.yaml", "leaf1", "groups", 0), named="leaf1."),
    Field("leaf1.data.ports", "Ethernet0", _rename_port("leaf1", "Ethernet0"), rename=True),
    Field("leaf2.data.ports", "Ethernet1/1", _rename_port("leaf2", "Ethernet1/1"), rename=True),
    Field("leaf3.data.ports", "swp1", _rename_port("leaf3", "swp1"), rename=True),
    Field("leaf4.data.ports", "Ethernet1/1", _rename_port("leaf4", "Ethernet1/1"), rename=True),
    Field("node1.data.ports", "bmc", _rename_port("node1", "bmc"), rename=True),
    Field("node3.data.ports", "bmc", _rename_port("node3", "bmc"), rename=True),
    Field("leaf1.data.ports.Ethernet224.peer", "spine1:Ethernet0",
          _set("hosts.yaml", "leaf1", "data", "ports", "Ethernet224", "peer")),
    Field("leaf1.data.ports.Ethernet0.lanes", "0,1,2,3,4,5,6,7",
          _set("hosts.yaml", "leaf1", "data", "ports", "Ethernet0", "lanes")),
    Field("node1.data.ports.ens1f0np0.rdma_device", "mlx5_0",
          _set("hosts.yaml", "node1", "data", "ports", "ens1f0np0", "rdma_device")),
    Field("node1.data.hardware", "ConnectX-7", _set("hosts.yaml", "node1", "data", "hardware")),
    Field("leaf1.data.asic", "spectrum3", _set("hosts.yaml", "leaf1", "data", "asic")),
    Field("leaf1.data.sonic_release", "202411", _set("hosts.yaml", "leaf1", "data", "sonic_release")),
    Field("sonic_leaf.data.mgmt_interface", "eth0", _set("groups.yaml", "sonic_leaf", "data", "mgmt_interface"),
          named="leaf1.data.mgmt_interface"),
    Field("cx_nodes.data.frontend_interface", "eno1", _rename_frontend("cx_nodes", "eno1"),
          rename=True, named="node1.data."),
)


@functools.cache
def _sources() -> dict[str, dict[str, Any]]:
    """The example's files as data, with the optional fields FIELDS reach set to their originals."""
    files = {"intent": yaml.safe_load(INTENT.read_text())}
    files |= {name: yaml.safe_load((INVENTORY / name).read_text()) or {} for name in INVENTORY_FILES
              if (INVENTORY / name).exists()}
    files["intent"]["data_subnets"] = ["10.0.0.0/8"]
    files["intent"]["lint"]["waive"][0] |= {"reason": "kept until the congestion test", "device": "leaf1",
                                            "port": "Ethernet0"}
    files["intent"]["description"] = "the bundled recipe"
    files["hosts.yaml"]["leaf1"] |= {"username": "admin", "password": "s3cret"}
    return files


def _render(files: dict[str, dict[str, Any]], workdir: Path) -> tuple[Fabric, dict[str, str]]:
    """Write the files as YAML (every code point escaped, so each reaches the loader as written), load, resolve,
    render. Raises InputError as the CLI sees it."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "inventory").mkdir(exist_ok=True)
    for name, data in files.items():
        path = workdir / "fabric.yaml" if name == "intent" else workdir / "inventory" / name
        path.write_text(yaml.safe_dump(data, allow_unicode=False, sort_keys=False))
    loaded = load(workdir / "fabric.yaml", workdir / "inventory")
    fabric = resolve(loaded.intent, loaded.inventory, loaded.locate)
    return fabric, generate(fabric)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _render(copy.deepcopy(_sources()), tmp_path_factory.mktemp("baseline"))[1]


def _lines(text: str, value: str, original: str) -> Counter[str]:
    """The file's lines with ``value`` written back as ``original`` (also as upper case: class names become
    ``FG_<NAME>`` map names), as a multiset (a renamed port may sort elsewhere)."""
    text = text.replace(value, original).replace(value.upper(), original.upper())
    return Counter(text.split("\n"))


def _assert_one_line_diagnostics(diagnostics: Sequence[Diagnostic]) -> None:
    for diagnostic in diagnostics:
        text = str(diagnostic)
        assert text.isprintable() and not any(c in text for c in LINE_BREAKS), repr(text)


def _assert_same_lines(files: dict[str, str], baseline: dict[str, str], value: str, original: str) -> None:
    assert sorted(files) == sorted(baseline)
    for name, text in files.items():
        assert _lines(text, value, original) == _lines(baseline[name], original, original), name


def _assert_reads_back(fabric: Fabric) -> None:
    for device in fabric.devices.values():
        platform = get_platform(device.platform)
        assert platform.read is not None and platform.owned is not None
        assert platform.owned(platform.read(device, render_device(device))) == platform.owned(device), device.name


def _assert_bash_parses(files: dict[str, str], workdir: Path) -> None:
    for name, text in files.items():
        if name.endswith(".sh"):
            script = workdir / "check.sh"
            script.write_text(text)
            result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
            assert result.returncode == 0, (name, result.stderr)


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.key_path)
def test_payload_is_refused_or_changes_only_its_own_value(field: Field, baseline: dict[str, str],
                                                          tmp_path: Path) -> None:
    accepted: list[str] = []
    for number, payload in enumerate(PAYLOADS):
        value = field.original + payload
        files = copy.deepcopy(_sources())
        field.put(files, value)
        try:
            fabric, rendered = _render(files, tmp_path / str(number))
        except InputError as refused:
            _assert_one_line_diagnostics(refused.diagnostics)
            assert any(d.key_path.startswith(field.diagnosed_at) for d in refused.diagnostics), \
                (payload, [str(d) for d in refused.diagnostics])
            continue
        accepted.append(payload)
        assert not field.rendered or not any(c in value for c in LINE_BREAKS), "a line break was accepted"
        _assert_same_lines(rendered, baseline, value, field.original)
        if field.rename:
            _assert_reads_back(fabric)
            _assert_bash_parses(rendered, tmp_path)
    # Names, addresses and keywords accept none of the payloads but `-64` (a name's dash) and, on a host, a DNS
    # name's; free text takes the printable ones; credentials (never rendered) take anything.
    if field.rendered:
        assert not any(p[:1] in LINE_BREAKS or not p.isprintable() for p in accepted), accepted


def test_baseline_host_scripts_parse_and_every_device_reads_back(tmp_path: Path) -> None:
    fabric, rendered = _render(copy.deepcopy(_sources()), tmp_path)
    assert any(name.endswith(".sh") for name in rendered)
    _assert_bash_parses(rendered, tmp_path)
    _assert_reads_back(fabric)


# --- the findings, one by one -------------------------------------------------------------------

def _refusals(tmp_path: Path, edit: Callable[[dict[str, dict[str, Any]]], None]) -> list[str]:
    files = copy.deepcopy(_sources())
    edit(files)
    with pytest.raises(InputError) as refused:
        _render(files, tmp_path)
    _assert_one_line_diagnostics(refused.value.diagnostics)
    return [str(d) for d in refused.value.diagnostics]


def test_gateway_with_scope_id_and_a_second_line_is_refused(tmp_path: Path) -> None:
    found = _refusals(tmp_path, lambda f: f["intent"]["management"].update(
        subnet="2001:db8::/64", gateway="2001:db8::21%x\nusername pwned privilege 15"))
    assert any(f"{tmp_path / 'fabric.yaml'}:" in m and ": management.gateway: an IPv6 scope id ('%...') is not "
               "allowed here (drop the '%' and what follows it" in m for m in found), found


def test_hostname_with_scope_id_is_refused(tmp_path: Path) -> None:
    found = _refusals(tmp_path, lambda f: f["hosts.yaml"]["leaf1"].update(hostname="2001:db8::21%x\nreload now"))
    assert any(": leaf1.hostname: an IPv6 scope id ('%...') is not allowed here" in m for m in found), found


@pytest.mark.parametrize(("device", "port", "platform"), [
    ("leaf1", "Ethernet1-64", "SONiC"), ("leaf2", "Ethernet1-64", "EOS"), ("leaf2", "Ethernet1/1-64", "EOS"),
    ("leaf3", "swp1-64", "NVUE"), ("leaf4", "Ethernet1/1-64", "NX-OS"),
])
def test_port_named_like_a_range_is_refused_per_platform(tmp_path: Path, device: str, port: str,
                                                         platform: str) -> None:
    found = _refusals(tmp_path, lambda f: f["hosts.yaml"][device]["data"]["ports"].update({port: {"speed": "400G"}}))
    assert any(f": {device}.data.ports.{port}: port name {port!r} reads as a range of ports: {platform}" in m
               for m in found), found


@pytest.mark.parametrize("key", ["mgmt_interface", "frontend_interface"])
def test_an_interface_named_like_a_range_outside_the_ports_is_refused(tmp_path: Path, key: str) -> None:
    found = _refusals(tmp_path, lambda f: f["hosts.yaml"]["leaf1"]["data"].update({key: "eth0-1"}))
    assert any(f": leaf1.data.{key}: port name 'eth0-1' reads as a range of ports: SONiC" in m for m in found), found


def test_a_dash_between_letters_is_not_a_range(tmp_path: Path) -> None:
    files = copy.deepcopy(_sources())
    files["hosts.yaml"]["leaf2"]["data"]["ports"]["Port-Channel1"] = {}
    _render(files, tmp_path)  # loads: `Port-Channel1` names one interface


@pytest.mark.parametrize("port", ["a/../../../etc/x", "..", "eth0/", "ens1f0np0/..", "a//b"])
def test_port_named_like_a_path_is_refused(tmp_path: Path, port: str) -> None:
    found = _refusals(tmp_path, lambda f: f["hosts.yaml"]["leaf2"]["data"]["ports"].update({port: {}}))
    assert any("leaf2.data.ports" in m for m in found), found


@pytest.mark.parametrize("port", ["eth0/1", "ens1f0np0-very-long", "x:1"])
def test_host_port_must_be_a_linux_interface_name(tmp_path: Path, port: str) -> None:
    """A `/` is a switch port's slot separator, but a host's names are Linux netdevs (dev_valid_name)."""
    found = _refusals(tmp_path, lambda f: f["hosts.yaml"]["node1"]["data"]["ports"].update({port: {}}))
    assert any("node1.data.ports" in m for m in found), found


@pytest.mark.parametrize(("first", "twin"), [
    ("ens1f0.1", "ens1f0_1"), ("ens1f0.1", "ens1f0-1"), ("ens1f0-1", "ens1f0_1"), ("eth_0", "eth.0"),
])
def test_host_ports_sharing_a_shell_function_are_refused(tmp_path: Path, first: str, twin: str) -> None:
    """Two NICs whose names differ only in '.', '-', '_' (or '/') would share one bash function: one NIC never
    configured while --check says "match"."""
    assert nic_function(first) == nic_function(twin)
    files = copy.deepcopy(_sources())
    ports = files["hosts.yaml"]["node1"]["data"]["ports"]
    ports[first] = {"rdma_device": "mlx5_8"}
    ports[twin] = {"rdma_device": "mlx5_9"}
    with pytest.raises(InputError) as refused:
        _render(files, tmp_path)
    assert [str(d).split(": ", 1)[1] for d in refused.value.diagnostics] == [
        f"node1.data.ports.{twin}: ports {first!r} and {twin!r} differ only in '.', '-', '_' or '/': the host script "
        "would configure both in one shell function (rename one of them)"]


def test_host_ports_with_distinct_shell_functions_load(tmp_path: Path) -> None:
    files = copy.deepcopy(_sources())
    files["hosts.yaml"]["node1"]["data"]["ports"] |= {"ens1f0.1": {}, "ens1f0.10": {}, "ens1f01": {}}
    fabric, _ = _render(files, tmp_path)
    assert "ens1f0.10" in {port.name for port in fabric.devices["node1"].ports}


def test_key_path_of_a_refused_key_is_quoted(tmp_path: Path) -> None:
    found = _refusals(tmp_path, lambda f: f["hosts.yaml"]["leaf1"]["data"]["ports"].update(
        {"Ethernet9\n shutdown": {}}))
    assert any(": leaf1.data.ports.'Ethernet9\\n shutdown': " in m for m in found), found


def test_cli_exits_2_naming_the_field(tmp_path: Path) -> None:
    shutil.copytree(INVENTORY, tmp_path / "inventory")
    intent = tmp_path / "fabric.yaml"
    intent.write_text(INTENT.read_text().replace("  gateway: 192.0.2.1", '  gateway: "192.0.2.1\\u2028end"'))
    result = CliRunner().invoke(main, ["render", str(intent), "-i", str(tmp_path / "inventory"),
                                       "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    line = next(n for n, text in enumerate(intent.read_text().splitlines(), 1) if "gateway:" in text)
    assert f"{intent}:{line}:3: management.gateway: Input is not a valid IPv4 address" in result.output
    assert not (tmp_path / "out").exists()


# --- the types themselves, over arbitrary text --------------------------------------------------------------

def _refused_or(adapter: TypeAdapter[Any], text: str) -> str | None:
    try:
        return str(adapter.validate_python(text))
    except ValidationError:
        return None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_text_types_never_hold_a_line_break_or_control(text: str) -> None:
    for adapter in (TypeAdapter(Text), TypeAdapter(PortName), TypeAdapter(Hostname)):
        value = _refused_or(adapter, text)
        if value is not None:
            assert not any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in value), repr(value)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.ip_addresses().map(str), st.ip_addresses(v=6).map(lambda a: f"{a}%{'x'}"),
                 st.text(alphabet="0123456789abcdef:.%/\n", max_size=40)))
def test_addresses_print_only_address_characters(text: str) -> None:
    for adapter in (TypeAdapter(IpAddress), TypeAdapter(IpNetwork)):
        value = _refused_or(adapter, text)
        if value is not None:
            assert set(value) <= set("0123456789abcdef:./"), value
