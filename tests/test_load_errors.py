"""Bad input is reported as FILE:LINE:COL: key.path: message (hint) — all problems at once, exit 2, no
traceback, nothing written. One test per kind of mistake people make in fabric files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.load.fabric import load
from fabricgen.models.diagnostics import InputError
from fabricgen.resolve import resolve

from conftest import ROOT


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "intent" / "fabric.yaml", tmp_path / "fabric.yaml")
    shutil.copytree(ROOT / "inventory", tmp_path / "inventory")
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"fixture text not found: {old!r}"
    path.write_text(text.replace(old, new, 1))


def line_of(path: Path, needle: str, nth: int = 1) -> int:
    hits = [i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line]
    return hits[nth - 1]


def problems(workspace: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        loaded = load(workspace / "fabric.yaml", workspace / "inventory")
        resolve(loaded.intent, loaded.inventory, loaded.locate)
    return [str(d) for d in caught.value.diagnostics]


def test_yaml_syntax_error_names_line(workspace: Path) -> None:
    intent = workspace / "fabric.yaml"
    edit(intent, "  vlan: 100", "  vlan: [100")
    [message] = problems(workspace)
    assert message.startswith(f"{intent}:{line_of(intent, 'vlan: [100') + 1}:")
    assert "YAML syntax error" in message


def test_duplicate_key_is_an_error(workspace: Path) -> None:
    intent = workspace / "fabric.yaml"
    edit(intent, "      priority: 6\n", "      priority: 6\n      priority: 7\n")
    [message] = problems(workspace)
    line = line_of(intent, "priority: 7")
    assert message == (f"{intent}:{line}:7: qos.classes.cnp.priority: duplicate key 'priority' (first defined "
                       f"at line {line - 1}) (YAML keeps only the last one; merge the two entries)")


def test_unknown_key_suggests_the_right_one(workspace: Path) -> None:
    intent = workspace / "fabric.yaml"
    edit(intent, "      lossless: true", "      loseless: true")
    [message] = problems(workspace)
    assert message == (f"{intent}:{line_of(intent, 'loseless')}:7: qos.classes.rdma.loseless: unknown key "
                       "'loseless' (did you mean 'lossless'?)")


def test_values_out_of_range_are_all_reported(workspace: Path) -> None:
    intent = workspace / "fabric.yaml"
    edit(intent, "      dscp: [26]", "      dscp: [64]")
    edit(intent, "      priority: 6", "      priority: 9")
    edit(intent, "ecn: {min: 5KB,", "ecn: {min: 5XB,")
    found = problems(workspace)
    assert len(found) == 3
    assert any(f":{line_of(intent, 'dscp: [64]')}:" in m and "qos.classes.rdma.dscp: 64 is not a DSCP value (0-63)"
               in m for m in found)
    assert any("qos.classes.cnp.priority" in m and "less than or equal to 7" in m for m in found)
    assert any("qos.classes.rdma.ecn.min" in m and "'5XB' is not a size" in m for m in found)


def test_missing_required_key(workspace: Path) -> None:
    intent = workspace / "fabric.yaml"
    edit(intent, "  gateway: 192.0.2.1\n", "")
    [message] = problems(workspace)
    assert "management.gateway: missing required key 'gateway'" in message
    top_level = [i for i, line in enumerate(intent.read_text().splitlines(), 1) if line == "management:"]
    assert message.startswith(f"{intent}:{top_level[0]}:1:")


def test_cross_field_rules_of_the_intent(workspace: Path) -> None:
    intent = workspace / "fabric.yaml"
    edit(intent, "      dscp: [16]", "      dscp: [16, 26]")
    edit(intent, "scheduling: {dwrr: 10}", "scheduling: {dwrr: 20}")
    found = problems(workspace)
    assert any("qos.classes.rdma.dscp: DSCP 26 is already in class 'management'" in m for m in found)
    assert any("DWRR weights sum to 110, not 100" in m and "mlnx_qos --tcbw" in m for m in found)


def test_unknown_peer_device_and_port(workspace: Path) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    edit(hosts, 'peer: "leaf1:Ethernet0"', 'peer: "lefa1:Ethernet0"')
    edit(hosts, 'peer: "leaf2:Ethernet8"', 'peer: "leaf2:Ethernet9"')
    found = problems(workspace)
    assert f"{hosts}:{line_of(hosts, 'lefa1')}:" in found[0] or any(
        f"{hosts}:{line_of(hosts, 'lefa1')}:" in m for m in found)
    assert any("node1.data.ports.ens1f0np0.peer: unknown peer device 'lefa1' (did you mean 'leaf1'?)" in m
               for m in found)
    assert any("leaf2 has no port 'Ethernet9'" in m for m in found)


def test_port_used_twice(workspace: Path) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    edit(hosts, 'peer: "leaf2:Ethernet8"', 'peer: "leaf2:Ethernet0"')
    found = problems(workspace)
    assert any("port leaf2:Ethernet0 is used twice: cabled to node1:ens2f0np0 and to node2:ens2f0np0" in m
               for m in found)


def test_peer_of_peer_mismatch(workspace: Path) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    edit(hosts, "      Ethernet8: {speed: 400G,", '      Ethernet8: {peer: "node3:ens1f0np0", speed: 400G,')
    found = problems(workspace)
    assert any("leaf1:Ethernet8 says its peer is node3:ens1f0np0, but that port says its peer is "
               "leaf1:Ethernet16" in m for m in found)


def test_cable_length_disagreement(workspace: Path) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    edit(hosts, '      Ethernet1/1: {speed: 400G, fec: rs}',
         '      Ethernet1/1: {speed: 400G, fec: rs, peer: "leaf1:Ethernet224", cable_m: 50}')
    found = problems(workspace)
    assert any("disagree on cable_m: 30 vs 50" in m for m in found)


def test_error_inherited_from_groups_points_into_groups_yaml(workspace: Path) -> None:
    groups = workspace / "inventory" / "groups.yaml"
    edit(groups, "    role: spine", "    role: spline")
    found = problems(workspace)
    assert any(m.startswith(f"{groups}:{line_of(groups, 'role: spline')}:") and "spine1.data.role" in m
               for m in found)


def test_unknown_platform(workspace: Path) -> None:
    groups = workspace / "inventory" / "groups.yaml"
    edit(groups, "  platform: sonic", "  platform: sonix")
    found = problems(workspace)
    assert any("unknown platform 'sonix' (one of: connectx, eos, linux-dcb, nvue, nxos, sonic)" in m for m in found)


def test_resolve_errors_have_locations_too(workspace: Path) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    intent = workspace / "fabric.yaml"
    edit(hosts, "  hostname: 192.0.2.21", "  hostname: 10.9.9.9")
    edit(intent, "  fabric: 9100", "  fabric: 9216")
    found = problems(workspace)
    assert any(m.startswith(f"{hosts}:{line_of(hosts, '10.9.9.9')}:") and
               "outside management subnet 192.0.2.0/24" in m for m in found)
    assert any("MTU 9216 exceeds the maximum of platform eos (9214)" in m for m in found)


def test_a_management_mtu_sonic_refuses_is_refused_at_resolve(workspace: Path) -> None:
    """sonic-mgmt_port.yang ranges MGMT_PORT mtu 1500..9216: a config_db.json with 1280 is refused by the switch."""
    intent = workspace / "fabric.yaml"
    edit(intent, "  management: 1500", "  management: 1280")
    found = problems(workspace)
    expected = ("mtu.management: management MTU 1280 is outside what platform sonic takes for its management port "
                "(1500..9216) (set mtu.management to 1500..9216)")
    assert any(m.startswith(f"{intent}:") and expected in m for m in found), found


def test_a_lane_a_port_lists_twice_is_refused(workspace: Path) -> None:
    hosts = workspace / "inventory" / "hosts.yaml"
    edit(hosts, 'lanes: "0,1,2,3,4,5,6,7"', 'lanes: "0,1,2,3,4,5,6,6"')
    found = problems(workspace)
    assert any(m.startswith(f"{hosts}:") and "leaf1.data.ports.Ethernet0.lanes: port Ethernet0's lanes 0,1,2,3,4,5,6,6 "
               "list lane 6 twice" in m for m in found), found


def test_problem_in_profile_value_points_at_profile(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "inventory", tmp_path / "inventory")
    intent = tmp_path / "fabric.yaml"
    intent.write_text("fabric: tiny\nprofile: roce\nqos:\n  classes:\n    rdma: {priority: 6}\n"
                      "management: {vlan: 100, subnet: 192.0.2.0/24, gateway: 192.0.2.1}\n")
    found = problems(tmp_path)
    # The clash is with a value the user never wrote: it is reported at `profile: roce` (line 2).
    assert f"{intent}:2:1: qos.classes.cnp.priority: priority 6 is also used by class 'rdma' " \
           "(give each class its own priority)" in found


def test_cli_exits_2_without_traceback_and_writes_nothing(workspace: Path) -> None:
    edit(workspace / "fabric.yaml", "      lossless: true", "      loseless: true")
    out = workspace / "out"
    result = CliRunner().invoke(main, ["render", str(workspace / "fabric.yaml"), "-i",
                                       str(workspace / "inventory"), "-o", str(out)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "unknown key 'loseless'" in result.output
    assert "nothing was written" in result.output
    assert not out.exists()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_resolve_problems_print_as_resolve_reports_them(workspace: Path, jobs: str) -> None:
    """With --jobs 2, render resolves in chunks while workers render the chunks before: the problems are the
    same, in the same order, and neither the output nor a staging tree is left behind."""
    edit(workspace / "inventory" / "hosts.yaml", "  hostname: 192.0.2.21", "  hostname: 10.9.9.9")
    edit(workspace / "fabric.yaml", "  fabric: 9100", "  fabric: 9216")
    expected = problems(workspace)
    out = workspace / "out"
    result = CliRunner().invoke(main, ["render", str(workspace / "fabric.yaml"), "-i",
                                       str(workspace / "inventory"), "-o", str(out), "--jobs", jobs])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.splitlines()[:len(expected)] == expected
    assert f"{len(expected)} problem(s) in the input; nothing was written" in result.output
    assert sorted(p.name for p in workspace.iterdir()) == ["fabric.yaml", "inventory"]


@pytest.mark.parametrize(("old", "new", "key"), [
    ("      Ethernet0: {speed: 400G,", '      "Ethernet0\\n   shutdown": {speed: 400G,', "leaf1.data.ports"),
    ("    hardware: ConnectX-7", '    hardware: "ConnectX-7\\nhostname pwned"', "node1.data.hardware"),
])
def test_strings_cannot_inject_config_lines(workspace: Path, old: str, new: str, key: str) -> None:
    """Names and free text end up in configs; control characters are refused at load time."""
    target = workspace / "inventory" / ("hosts.yaml" if "Ethernet0" in old else "groups.yaml")
    edit(target, old, new)
    found = problems(workspace)
    assert any(key in m and "should match pattern" in m for m in found), found


def test_platform_cannot_express_watchdog_action(workspace: Path) -> None:
    """An intent feature a platform cannot express is an error naming the platform, never dropped."""
    intent = workspace / "fabric.yaml"
    edit(intent, "action: drop}", "action: forward}")
    found = problems(workspace)
    assert any(f"{intent}:{line_of(intent, 'action: forward')}:" in m and
               "platform eos has no PFC watchdog action 'forward' (use one of: drop, alert)" in m for m in found)


def test_watchdog_timer_a_platform_cannot_count_in_polls(tmp_path: Path) -> None:
    """NX-OS and NVUE set detection as a whole number of polls: 250 ms with a 100 ms poll is refused for both."""
    shutil.copytree(ROOT / "inventory" / "mixed", tmp_path / "inventory")
    intent = tmp_path / "fabric.yaml"
    intent.write_text((ROOT / "intent" / "mixed.yaml").read_text().replace("detection_ms: 200", "detection_ms: 250"))
    found = problems(tmp_path)
    assert any("platform nxos" in m and "multiple of poll_ms (100 ms)" in m for m in found)
    assert any("platform nvue sets the PFC watchdog's detection as a multiple of poll_ms" in m for m in found)


def test_scope_id_in_a_switch_hostname_is_refused_with_the_fix(workspace: Path) -> None:
    """`ipaddress` accepts `addr%<anything>`, line breaks included; the loader names the key and the fix."""
    hosts = workspace / "inventory" / "hosts.yaml"
    edit(hosts, "  hostname: 192.0.2.21", '  hostname: "2001:db8::21%x\\nreload now"')
    found = problems(workspace)  # and the cables to spine1, now unknown
    assert f"{hosts}:{line_of(hosts, '2001:db8::21%x')}:3: spine1.hostname: an IPv6 scope id ('%...') is not " \
           "allowed here (drop the '%' and what follows it: configs name the interface elsewhere)" in found


def test_waiver_port_cannot_be_a_path(workspace: Path) -> None:
    intent = workspace / "fabric.yaml"
    edit(intent, "    - rule: FG-ECN-003\n", "    - rule: FG-ECN-003\n      port: Ethernet0/..\n")
    [message] = problems(workspace)
    assert message.startswith(f"{intent}:{line_of(intent, 'port: Ethernet0/..')}:7: lint.waive.[0].port: a port "
                              "name cannot contain '..'")


def _three_lossless_classes(workspace: Path) -> None:
    edit(workspace / "fabric.yaml", "      priority: 2\n      scheduling: {dwrr: 10}",
         "      priority: 2\n      lossless: true\n      scheduling: {dwrr: 10}")
    edit(workspace / "fabric.yaml", "      priority: 0\n      scheduling: {dwrr: 40}",
         "      priority: 0\n      lossless: true\n      scheduling: {dwrr: 40}")


def test_a_sonic_skus_lossless_limit_is_its_own_and_an_unknown_one_is_not_refused(workspace: Path) -> None:
    """Three lossless classes: EOS's limit of two is refused at load; the SONiC leaves' SKU (ACS-MSN4700) has a
    limit fabricgen does not know, so they are not (lint warns, FG-PFC-002); a leaf whose inventory declares its
    SKU's two lossless PGs, or a SKU whose templates fabricgen knows, is held to that."""
    _three_lossless_classes(workspace)
    found = problems(workspace)
    assert [m.split(": ", 1)[1] for m in found if "lossless classes" in m] == [
        "qos.classes: 3 lossless classes (default, management, rdma) but platform eos supports 2 (make fewer classes "
        "lossless) [FG-PFC-002]"]
    hosts = workspace / "inventory" / "hosts.yaml"
    edit(hosts, "  hostname: 192.0.2.12\n  groups: [leaves]\n  data:\n",
         "  hostname: 192.0.2.12\n  groups: [leaves]\n  data:\n    lossless_limit: 2\n")
    edit(hosts, "  hostname: 192.0.2.11\n  groups: [leaves]\n  data:\n",
         "  hostname: 192.0.2.11\n  groups: [leaves]\n  data:\n    hardware: Mellanox-SN4700-O28\n")
    found = problems(workspace)
    declared = f"{hosts}:{line_of(hosts, 'lossless_limit: 2')}:5: leaf2.data.lossless_limit: 3 lossless classes " \
               "(default, management, rdma) but leaf2 declares 2 (data.lossless_limit) (make fewer classes lossless) " \
               "[FG-PFC-002]"
    assert declared in found, found
    assert not [m for m in found if "Mellanox-SN4700-O28" in m]  # its templates provision 4


def test_a_known_sonic_sku_is_held_to_the_lossless_pgs_its_templates_provision(workspace: Path) -> None:
    """Mellanox-SN4700-O28's buffer templates provision four lossless priorities (2-4 and 6): five are refused,
    once for the SKU, pointing at the intent's classes."""
    _three_lossless_classes(workspace)
    edit(workspace / "fabric.yaml", "    cnp:\n", "    storage:\n      dscp: [32]\n      priority: 4\n"
         "      lossless: true\n      scheduling: {dwrr: 10}\n    bulk:\n      dscp: [10]\n      priority: 1\n"
         "      lossless: true\n      scheduling: {dwrr: 10}\n    cnp:\n")
    edit(workspace / "fabric.yaml", "      scheduling: {dwrr: 40}", "      scheduling: {dwrr: 20}")
    hosts = workspace / "inventory" / "hosts.yaml"
    for leaf in ("192.0.2.11", "192.0.2.12"):
        edit(hosts, f"  hostname: {leaf}\n  groups: [leaves]\n  data:\n",
             f"  hostname: {leaf}\n  groups: [leaves]\n  data:\n    hardware: Mellanox-SN4700-O28\n")
    found = [m.split(": ", 1)[1] for m in problems(workspace) if "Mellanox" in m]
    assert found == ["qos.classes: 5 lossless classes (default, management, rdma, storage, bulk) but sonic SKU "
                     "Mellanox-SN4700-O28 provisions 4 (make fewer classes lossless) [FG-PFC-002]"], found
