"""The compact inventory (devices.yaml with port templates + cabling.csv): the same fabric as the SimpleInventory
it was exported from, byte for byte, and every mistake reported at its FILE:LINE."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.load.fabric import load
from fabricgen.load.sources.export import compress, export_compact
from fabricgen.models.diagnostics import InputError

from conftest import ROOT


def render(intent: Path, inventory: Path, out: Path) -> None:
    result = CliRunner().invoke(main, ["render", str(intent), "-i", str(inventory), "-o", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output


def tree(out: Path) -> dict[str, bytes]:
    return {str(path.relative_to(out)): path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()}


@pytest.mark.parametrize(("intent", "inventory"), [("fabric", "inventory"), ("mixed", "inventory/mixed")])
def test_the_compact_form_renders_the_same_tree(tmp_path: Path, intent: str, inventory: str) -> None:
    export_compact(ROOT / inventory, tmp_path / "compact")
    render(ROOT / "intent" / f"{intent}.yaml", ROOT / inventory, tmp_path / "from-files")
    render(ROOT / "intent" / f"{intent}.yaml", tmp_path / "compact", tmp_path / "from-compact")
    files, compact = tree(tmp_path / "from-files"), tree(tmp_path / "from-compact")
    assert files.keys() == compact.keys()
    assert [name for name in files if files[name] != compact[name]] == ["manifest.json"]
    # The manifests differ only in the input files they record.
    before, after = (json.loads(files["manifest.json"]), json.loads(compact["manifest.json"]))
    assert {k: v for k, v in before.items() if k != "inputs"} == {k: v for k, v in after.items() if k != "inputs"}
    assert sorted(name for name in after["inputs"] if name.startswith("inventory/")) == [
        "inventory/cabling.csv", "inventory/defaults.yaml", "inventory/devices.yaml", "inventory/groups.yaml"]


def test_export_command_writes_the_compact_form(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["inventory", "export", "--to", "compact", "-i", str(ROOT / "inventory"),
                                       "-o", str(tmp_path / "compact")])
    assert result.exit_code == 0, result.output
    assert "9 devices, 4 port templates, 24 cables" in result.output
    cabling = (tmp_path / "compact" / "cabling.csv").read_text().splitlines()
    assert cabling[0] == "a_device,a_port,b_device,b_port,cable_m,media"
    assert "leaf1,Ethernet224,spine1,Ethernet1/1,30,optic" in cabling
    devices = (tmp_path / "compact" / "devices.yaml").read_text()
    assert "'Ethernet{0..24..8}': {speed: 400G, lanes: '{n}..{n+7}', fec: rs}" in devices
    assert "leaf1: {hostname: 192.0.2.11, groups: [leaves], template: leaves}" in devices


def test_ranges_fold_runs_and_keep_the_rest() -> None:
    ports = [("eth0", {"speed": "1G"})] + [(f"Ethernet{n}/1", {"speed": "400G"}) for n in range(1, 5)] + [
        ("Ethernet9/1", {"speed": "100G"})]
    assert compress(ports) == [("eth0", {"speed": "1G"}), ("Ethernet{1..4}/1", {"speed": "400G"}),
                               ("Ethernet9/1", {"speed": "100G"})]


# --- mistakes, each at its file and line ---------------------------------------------------------------------

@pytest.fixture
def compact(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "intent" / "fabric.yaml", tmp_path / "fabric.yaml")
    export_compact(ROOT / "inventory", tmp_path / "inventory")
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"fixture text not found: {old!r}"
    path.write_text(text.replace(old, new, 1))


def problems(workspace: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load(workspace / "fabric.yaml", workspace / "inventory")
    return [str(problem) for problem in caught.value.diagnostics]


def test_unknown_device_in_the_table_names_its_line_and_column(compact: Path) -> None:
    table = compact / "inventory" / "cabling.csv"
    edit(table, "leaf1,Ethernet224,spine1,", "leaf1,Ethernet224,spine9,")
    assert problems(compact) == [f"{table}:2:19: line 2.b_device: unknown device 'spine9' (did you mean 'spine2'?)"]


def test_a_field_with_spaces_around_it_is_found_where_it_starts(compact: Path) -> None:
    table = compact / "inventory" / "cabling.csv"
    edit(table, "leaf1,Ethernet224,spine1,", "leaf1 , Ethernet224 , spine9 ,")
    assert problems(compact) == [f"{table}:2:23: line 2.b_device: unknown device 'spine9' (did you mean 'spine2'?)"]


def test_a_port_cabled_twice_names_both_lines(compact: Path) -> None:
    table = compact / "inventory" / "cabling.csv"
    edit(table, "leaf2,Ethernet224,spine1,Ethernet3/1", "leaf2,Ethernet224,spine1,Ethernet1/1")
    [found] = problems(compact)
    assert found.startswith(f"{table}:6:26: line 6.b_port: port spine1:Ethernet1/1 is cabled twice (first at line 2)")


def test_a_port_the_template_lacks(compact: Path) -> None:
    table = compact / "inventory" / "cabling.csv"
    edit(table, "leaf1,Ethernet224,", "leaf1,Ethernet225,")
    [found] = problems(compact)
    assert found.startswith(f"{table}:2:7: line 2.a_port: leaf1 has no port 'Ethernet225' (did you mean")


def test_a_bad_cable_length_is_the_schemas_error_at_the_row(compact: Path) -> None:
    table = compact / "inventory" / "cabling.csv"
    edit(table, "leaf1,Ethernet224,spine1,Ethernet1/1,30,optic", "leaf1,Ethernet224,spine1,Ethernet1/1,0,optic")
    found = problems(compact)[0]  # (the cables of a device that does not load are then reported as unknown)
    assert found.startswith(f"{table}:2:38: leaf1.data.ports.Ethernet224.cable_m: Input should be greater than")


def test_a_length_in_other_digits_than_ascii_is_refused(compact: Path) -> None:
    """Python's int() reads full-width digits (a spreadsheet's IME input) as a number; the table takes ASCII only."""
    table = compact / "inventory" / "cabling.csv"
    edit(table, "leaf1,Ethernet224,spine1,Ethernet1/1,30,optic", "leaf1,Ethernet224,spine1,Ethernet1/1,３０,optic")
    [found] = problems(compact)
    assert found.startswith(f"{table}:2:38: leaf1.data.ports.Ethernet224.cable_m: Input should be a valid integer")


def test_a_bad_port_setting_points_into_the_template(compact: Path) -> None:
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "Management1: {speed: 1G}", "Management1: {speed: 1G, colour: blue}")
    line = devices.read_text().splitlines().index("    Management1: {speed: 1G, colour: blue}") + 1
    found = problems(compact)
    assert any(p.startswith(f"{devices}:{line}:30: spine1.data.ports.Management1.colour: unknown key 'colour'")
               for p in found)


def test_an_unknown_template_and_a_cable_in_a_template(compact: Path) -> None:
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "groups: [spines], template: spines}", "groups: [spines], template: spine}")
    edit(devices, "eth0: {speed: 1G}", "eth0: {speed: 1G, peer: 'oob1:Ethernet5'}")
    found = problems(compact)
    assert any(f"{devices}:" in p and "templates.leaves.eth0.peer: peer in a port template (a cable belongs in "
               "cabling.csv" in p for p in found)
    assert any("devices.spine1.template: unknown template 'spine' (did you mean 'spines'?)" in p for p in found)


def test_a_bad_range_is_refused_where_it_is_written(compact: Path) -> None:
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "'Ethernet{1..8}'", "'Ethernet{8..1}'")
    found = problems(compact)
    assert any("templates.oob.Ethernet{8..1}: range {8..1..1} makes 0 ports" in p for p in found)


@pytest.mark.parametrize(("range_key", "bound"), [("Ethernet{01..08}", "01"), ("Ethernet{1..010}", "010")])
def test_a_range_bound_with_a_leading_zero_is_refused(compact: Path, range_key: str, bound: str) -> None:
    """bash pads such a range (Ethernet01 ...); no switch fabricgen renders for pads its port numbers, so neither
    reading is right for all: refused, with the range to write instead."""
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "'Ethernet{1..8}'", f"'{range_key}'")
    [found] = problems(compact)
    last = int(range_key.split("..")[1].rstrip("}"))
    assert found == (f"{devices}:11:5: templates.oob.{range_key}: '{range_key}': the bound '{bound}' has a leading "
                     f"zero, which bash's brace expansion reads as zero-padding (Ethernet{bound}, ...); no switch "
                     "fabricgen renders for pads its port numbers (write the bounds without leading zeros, e.g. "
                     f"Ethernet{{1..{last}}})")


def test_a_lone_zero_is_a_bound_not_padding(compact: Path) -> None:
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "'Ethernet{1..8}'", "'Ethernet{0..8}'")  # bash too: {0..10} is 0 1 ... 10
    oob = load(compact / "fabric.yaml", compact / "inventory").inventory.devices["oob1"]
    assert list(oob.data.ports) == [f"Ethernet{number}" for number in range(9)]


def test_a_range_in_other_digits_than_ascii_is_not_a_range(compact: Path) -> None:
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "'Ethernet{1..8}'", "'Ethernet{\u0661..\u0668}'")  # Arabic-Indic 1..8: int() would read them
    [found] = problems(compact)
    assert found.startswith(f"{devices}:11:5: templates.oob.'Ethernet{{\u0661..\u0668}}': 'Ethernet{{\u0661..\u0668}}' "
                            "is not a port range")


@pytest.mark.parametrize("misspelt", ["templat", "tempalte", "TEMPLATE"])
def test_a_misspelt_template_key_is_said_to_be_one(compact: Path, misspelt: str) -> None:
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "groups: [leaves], template: leaves}", f"groups: [leaves], {misspelt}: leaves}}")  # 6 cables
    column = devices.read_text().splitlines()[17].index(f"{misspelt}:") + 1
    assert problems(compact) == [f"{devices}:18:{column}: devices.leaf1.{misspelt}: unknown key {misspelt!r} (a device "
                                 "of devices.yaml takes `template` and Nornir's host keys) (did you mean 'template'?)"]


@pytest.mark.parametrize("key", ["state", "plate", "temp"])
def test_a_key_merely_like_template_is_not_called_one(compact: Path, key: str) -> None:
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "leaf1: {hostname: 192.0.2.11, groups: [leaves], template: leaves}",
         f"leaf1: {{hostname: 192.0.2.11, groups: [leaves], template: leaves, {key}: x}}")
    [found] = problems(compact)
    assert f"leaf1.{key}: unknown key {key!r} (Nornir reads" in found and "'template'" not in found, found


@pytest.mark.parametrize(("header", "column", "found"), [
    ("from,a_port,b_device,b_port,cable_m,media", 1, "column 1 is 'from', expected 'a_device'"),
    ("a_device,a_port,b_device,b_prot,cable_m,media", 26, "column 4 is 'b_prot', expected 'b_port'"),
    ("a_device, a_port, b_device,  b_prot, cable_m, media", 30, "column 4 is 'b_prot', expected 'b_port'"),
    ("a_device,a_port,b_device,b_port,cable_m", 41, "5 columns: media missing"),
    ("a_device,a_port,b_device,b_port,cable_m,media,notes", 47, "7 columns: 'notes' not one of them"),
    ("a_device;a_port;b_device;b_port;cable_m;media", 1,
     "column 1 is 'a_device;a_port;b_device;b_port;cable_m;media'"
     ", expected 'a_device' (the columns are separated by `;`: save the table with commas)"),
])
def test_the_header_must_name_the_columns(compact: Path, header: str, column: int, found: str) -> None:
    table = compact / "inventory" / "cabling.csv"
    edit(table, "a_device,a_port,b_device,b_port,cable_m,media\n", header + "\n")
    assert problems(compact) == [f"{table}:1:{column}: <header>: the header must be "
                                 f"a_device,a_port,b_device,b_port,cable_m,media: {found} (put that line first, then "
                                 "one cable a line)"]


def test_a_byte_order_mark_before_the_header_is_not_part_of_it(compact: Path) -> None:
    """Excel saves "CSV UTF-8" with a byte-order mark first: the table reads as without it."""
    table = compact / "inventory" / "cabling.csv"
    plain = load(compact / "fabric.yaml", compact / "inventory").inventory
    table.write_bytes(b"\xef\xbb\xbf" + table.read_bytes())
    assert load(compact / "fabric.yaml", compact / "inventory").inventory == plain


@pytest.mark.parametrize("written", ["peer: 'spine2:Ethernet4/1'", "cable_m: 3", "media: dac"])
def test_a_cable_on_a_devices_own_port_is_refused(compact: Path, written: str) -> None:
    """Cables belong to the table: one on a device's own port would be a cable nobody sees in cabling.csv."""
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "leaf1: {hostname: 192.0.2.11, groups: [leaves], template: leaves}",
         "leaf1: {hostname: 192.0.2.11, groups: [leaves], template: leaves, data: {ports: {Ethernet24: "
         f"{{speed: 400G, lanes: '24..31', {written}}}}}}}}}")
    key = written.split(":")[0]
    assert problems(compact) == [f"{devices}:18:{devices.read_text().splitlines()[17].index(written) + 1}: "
                                 f"devices.leaf1.data.ports.Ethernet24.{key}: {key} on a device's own port (a cable "
                                 "belongs in cabling.csv, one line per cable, with its cable_m and media)"]


@pytest.mark.parametrize(("data", "path", "message"), [
    ("data: {ports: [{name: Ethernet24, speed: 100G}]}", "devices.leaf1.data.ports",
     "ports must be a mapping: port name → its settings"),
    ("data: oops", "devices.leaf1.data", "data must be a mapping of fabricgen's keys"),
])
def test_own_ports_the_template_cannot_take_are_refused_not_dropped(compact: Path, data: str, path: str,
                                                                   message: str) -> None:
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "leaf1: {hostname: 192.0.2.11, groups: [leaves], template: leaves}",
         f"leaf1: {{hostname: 192.0.2.11, groups: [leaves], template: leaves, {data}}}")
    [found] = problems(compact)  # and not one more for each of leaf1's cables
    assert found.startswith(f"{devices}:18:") and f": {path}: {message} (" in found


def test_a_devices_mistake_is_said_once_not_once_per_cable(compact: Path) -> None:
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "groups: [leaves], template: leaves}", "groups: [leaves], template: leafs}")  # leaf1: 6 cables
    column = devices.read_text().splitlines()[17].index("template:") + 1
    assert problems(compact) == [f"{devices}:18:{column}: devices.leaf1.template: unknown template 'leafs' (did you "
                                 "mean 'leaves'?)"]
    edit(devices, "template: leafs}", "template: leaves}")
    edit(devices, "'Ethernet{224..248..8}'", "'Ethernet{248..224..8}'")  # both leaves' uplinks
    [found] = problems(compact)
    assert "templates.leaves.Ethernet{248..224..8}: range {248..224..8} makes 0 ports" in found


def test_a_device_without_ports_is_one_problem(compact: Path) -> None:
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "leaf1: {hostname: 192.0.2.11, groups: [leaves], template: leaves}", "leaf1:")
    assert problems(compact) == [f"{devices}:18:3: devices.leaf1: leaf1 has no ports, and cabling.csv cables it "
                                 "(first at line 2) (name its port table with `template:`, or list its ports in "
                                 "data.ports)"]


def test_a_hosts_problem_names_the_file_it_is_in(compact: Path) -> None:
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "leaf1: {hostname: 192.0.2.11, groups: [leaves], template: leaves}",
         "leaf1: {hostname: 192.0.2.11, groups: [leaves], template: leaves, data: {fabricgen: {}}}")
    [found] = problems(compact)
    assert "(data.role, groups.yaml) and under data.fabricgen (devices.yaml:18)" in found, found


def test_the_cli_reports_and_writes_nothing(compact: Path) -> None:
    edit(compact / "inventory" / "cabling.csv", "leaf1,Ethernet224,spine1,", "leaf1,Ethernet224,spine9,")
    done = subprocess.run([sys.executable, "-m", "fabricgen", "render", str(compact / "fabric.yaml"), "-i",
                           str(compact / "inventory"), "-o", str(compact / "out")], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 2
    assert "cabling.csv:2:19: line 2.b_device: unknown device 'spine9'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (compact / "out").exists()


def test_a_finding_about_a_cable_points_at_its_line_in_the_table(compact: Path) -> None:
    table = compact / "inventory" / "cabling.csv"
    edit(table, "leaf1,Ethernet224,spine1,Ethernet1/1,30,optic", "leaf1,Ethernet224,spine1,Ethernet1/1,30,dac")
    result = CliRunner().invoke(main, ["lint", str(compact / "fabric.yaml"), "-i", str(compact / "inventory")])
    assert result.exit_code == 1
    assert f"{table}:2: FG-PHY-004 error leaf1:Ethernet224 ↔ spine1:Ethernet1/1: 30 m DAC at 400G" in result.output


def test_one_template_mistake_is_printed_once_for_every_device_that_uses_it(compact: Path) -> None:
    """A lane range one port too wide gives every lane to two ports, on each leaf the template makes: the CLI prints
    it once, with where else it holds (JSON and SARIF keep every problem)."""
    devices = compact / "inventory" / "devices.yaml"
    edit(devices, "'Ethernet{0..24..8}': {speed: 400G, lanes: '{n}..{n+7}'",
         "'Ethernet{0..24..8}': {speed: 400G, lanes: '{n}..{n+15}'")
    result = CliRunner().invoke(main, ["lint", str(compact / "fabric.yaml"), "-i", str(compact / "inventory")])
    assert result.exit_code == 2
    line = next(i for i, text in enumerate(devices.read_text().splitlines()) if "{n+15}" in text)
    assert result.output.splitlines()[:1] == [
        f"{devices}:{line + 1}:41: leaf1.data.ports.Ethernet8.lanes: port Ethernet8's lanes "
        "8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23 include lanes of Ethernet0; 2 more of its ports share lanes "
        "too (give each hardware lane to one port, once, as the SKU's port_config.ini lists them) [the same at this "
        "line for 1 more: leaf2]"]
    assert "2 problem(s) in the input" in result.output
