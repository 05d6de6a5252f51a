"""`fabricgen lint --configs DIR`: configs that already exist, read back and checked end to end.

The hand-broken set is the classic trio a NCCL benchmark finds a week late: one leaf port with PFC on the
wrong priority, one NIC left in PCP trust, one spine link at MTU 1500.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fabricgen.cli import main

from conftest import ROOT

EXPECTED = {
    ("FG-CLS-002", "leaf1:Ethernet0"),
    ("FG-PFC-001", "leaf1:Ethernet0 ↔ node1:ens1f0np0"),
    ("FG-CLS-003", "node3:ens1f0np0 ↔ leaf1:Ethernet16"),
    ("FG-MTU-001", "leaf2:Ethernet224 ↔ spine1:Ethernet3/1"),
    ("FG-MTU-002", "spine1:Ethernet3/1 ↔ leaf2:Ethernet224"),
    ("FG-MTU-005", "spine1:Ethernet3/1 ↔ leaf2:Ethernet224"),  # MTU 1500 in effect, not the intent's 9100
    # pfcwd_sw_enable still says 3: the SONiC watchdog watches priority 3, not the port's lossless 4
    ("FG-PFC-003", "leaf1:Ethernet0"),
    # PFC now pauses priority 4, whose traffic class the port's TC→PG map (ROCE) sends to lossy PG 0: no headroom
    ("FG-PFC-007", "leaf1:Ethernet0"),
    # Each edit is also a setting that differs from the intent.
    ("FG-CFG-001", "leaf1:Ethernet0"),
    ("FG-CFG-001", "node3:ens1f0np0"),
    ("FG-CFG-001", "spine1:Ethernet3/1"),
    # node3's trust command was edited, not the trust its script checks for: a NIC that trusts DSCP skips it.
    ("FG-EVD-004", "node3:ens1f0np0"),
}


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.fixture
def configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "configs"
    assert invoke("render", "-o", str(out))[0] == 0
    return out


def edit(path: Path, old: str, new: str, after: str = "") -> None:
    text = path.read_text()
    start = text.index(after) if after else 0
    at = text.index(old, start)
    path.write_text(text[:at] + new + text[at + len(old):])


@pytest.fixture
def broken(configs: Path) -> Path:
    leaf = configs / "leaf1" / "config_db.json"
    data = json.loads(leaf.read_text())
    data["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "4"
    leaf.write_text(json.dumps(data, indent=4))
    edit(configs / "node3" / "fabricgen-nic.sh", "--trust 'dscp'", "--trust 'pcp'")
    edit(configs / "spine1" / "eos.cfg", "mtu 9100", "mtu 1500", after="interface Ethernet3/1")
    return configs


def test_rendered_configs_lint_clean(configs: Path) -> None:
    code, output = invoke("lint", "--configs", str(configs))
    assert code == 0, output
    assert output.splitlines()[-1].startswith("0 error(s), 0 warning(s)")


def test_hand_broken_configs_text(broken: Path) -> None:
    code, output = invoke("lint", "--configs", str(broken))
    assert code == 1
    errors = [line for line in output.splitlines() if " error " in line]
    assert {(line.split()[1], line.split(" error ", 1)[1].split(": ")[0]) for line in errors} == EXPECTED
    assert f"{broken}/spine1/eos.cfg:" in output and f"{broken}/node3/fabricgen-nic.sh:" in output
    assert "FG-PFC-001 error leaf1:Ethernet0 ↔ node1:ens1f0np0: PFC priorities {4} vs {3}" in output
    assert output.splitlines()[-1].startswith(f"{len(EXPECTED)} error(s), 0 warning(s)")


def test_hand_broken_configs_json(broken: Path) -> None:
    code, output = invoke("lint", "--configs", str(broken), "--format", "json")
    assert code == 1
    found = [f for f in json.loads(output)["findings"] if not f["waived"]]
    subjects = {(f["rule"], f"{f['device']}:{f['port']}" + (f" ↔ {f['peer']}" if f["peer"] else "")) for f in found}
    assert subjects == EXPECTED
    assert all(f["file"].startswith(str(broken)) for f in found)


def test_hand_broken_configs_sarif(broken: Path) -> None:
    code, output = invoke("lint", "--configs", str(broken), "--format", "sarif")
    assert code == 1
    results = [r for r in json.loads(output)["runs"][0]["results"] if "suppressions" not in r]
    assert {(r["ruleId"], r["message"]["text"].split(": ")[0]) for r in results} == EXPECTED
    assert {r["level"] for r in results} == {"error"}


def test_unreadable_config_is_an_input_error(configs: Path) -> None:
    (configs / "leaf2" / "config_db.json").write_text('{"PORT": {"Ethernet0": ')
    code, output = invoke("lint", "--configs", str(configs))
    assert code == 2 and f"{configs}/leaf2/config_db.json:1:" in output and "Traceback" not in output


def test_devices_without_configs_are_errors_unless_partial(configs: Path, tmp_path: Path) -> None:
    """Missing evidence is not a pass: eight devices without configs are eight FG-EVD-001 errors, and
    --partial lints the one device that has configs, saying so."""
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "leaf1").symlink_to(configs / "leaf1", target_is_directory=True)
    code, output = invoke("lint", "--configs", str(partial))
    assert code == 1 and output.count("FG-EVD-001 error") == 8 and "node1: no config in" in output
    code, output = invoke("lint", "--configs", str(partial), "--partial")
    assert code == 0 and "8 device(s) without configs not linted" in output.splitlines()[-1]


def test_a_config_without_cable_length_is_reported_unless_it_states_the_headroom(configs: Path) -> None:
    """FG-BUF-001 on a config: without CABLE_LENGTH, a dynamic-model port's headroom is sized for no cable. A
    port whose BUFFER_PG names a profile with xon/xoff/size (SONiC's traditional pg_lossless_<speed>_<cable>_profile,
    as vendor SKU configs ship) runs those numbers whatever CABLE_LENGTH says: not that finding."""
    leaf = configs / "leaf1" / "config_db.json"
    data = json.loads(leaf.read_text())
    del data["CABLE_LENGTH"]["AZURE"]["Ethernet224"]
    leaf.write_text(json.dumps(data, indent=4))
    code, output = invoke("lint", "--configs", str(configs), "--select", "FG-BUF-001")
    assert code == 1 and "leaf1:Ethernet224 ↔ spine1:Ethernet1/1: lossless port whose config sets no cable length" \
        in output, output

    data["BUFFER_PROFILE"] = {"pg_lossless_400000_40m_profile": {
        "pool": "ingress_lossless_pool", "size": "19456", "xon": "19456", "xoff": "160000", "dynamic_th": "0"}}
    data["BUFFER_PG"] = {"Ethernet224|3-4": {"profile": "pg_lossless_400000_40m_profile"}}
    leaf.write_text(json.dumps(data, indent=4))
    code, output = invoke("lint", "--configs", str(configs), "--select", "FG-BUF-001")
    assert "FG-BUF-001" not in output, output


# --- the fast YAML road of the NVUE reader (issue 26 item 7) ------------------------------------------------

NVUE_DOCUMENTS = [
    "- set:\n    interface:\n      swp1-3,swp7:\n        link: {mtu: 9100, state: {up: {}}}\n",
    "- set:\n    qos:\n      mapping:\n        default-global:\n          dscp:\n"
    "            '26': {switch-priority: 3}\n            0-7,9: {switch-priority: 0}\n          trust: both\n",
    "- set: {a: on, b: off, c: yes, d: 010, e: 1_000, f: 0x1f, g: 1.50, h: ~, i: '', j: null, k: [1, two, {x: 1}]}\n",
    "- set: {a: 2001-01-01, b: +3, c: -0, d: .inf, e: True, f: 'on', g: 12:30}\n",
    "- set:\n    interface:\n      swp1: {link: {mtu: 9000}, description: a b}\n- unset:\n    interface:\n      swp1:\n"
    "        link: {mtu: }\n- set:\n    interface:\n      swp1:\n        link: {speed: 100G}\n",
    "- set:\n    a:\n      b: 1\n    a:\n      c: 2\n",  # a repeated key: both merged, as compose's nodes are
    "- set:\n    description: first\n      second\n",  # a plain scalar over two lines
    "# a comment with `backticks` and \"quotes\" and é\n- set:\n    x: 1  # trailing comment\n",
    "set:\n  interface:\n    swp1:\n      type: swp\n",  # one block, not a list
    "- set:\n    x: 'it''s'\n    y: a'b\n    z: a-b:c\n",
]


@pytest.mark.parametrize("text", NVUE_DOCUMENTS)
def test_nvue_fast_yaml_road_builds_compose_s_tree(text: str) -> None:
    """rapidyaml's road builds the tree libyaml's compose builds, or declines (None) and leaves it to compose."""
    from fabricgen.platforms.nvue import read as nvue_read
    fast = nvue_read._fast_tree(text)
    if fast is not None:
        assert fast.root == nvue_read._from_yaml(text).root


def test_nvue_fast_yaml_road_reads_rendered_and_lab_files() -> None:
    from fabricgen.platforms.nvue import read as nvue_read
    files = [*sorted(ROOT.glob("golden/**/nvue.yaml")), ROOT / "tests/targets/data/nvue/startup.yaml"]
    assert files
    for path in files:
        text = path.read_text()
        fast = nvue_read._fast_tree(text)
        assert fast is not None, path  # the road fabricgen's own files take
        assert fast.root == nvue_read._from_yaml(text).root, path


@pytest.mark.parametrize(("text", "declined"), [
    ("- set:\n    a: &x 1\n    b: *x\n", True), ("- set:\n    a: !!str 1\n", True),
    ("- set:\n    a: |\n      x\n", True), ("- set:\n    a: \"q\\tq\"\n", True), ("- set:\n    a:\tb\n", True),
    ("- set:\n    a: [1, 2\n", True), ("- set:\n    a: 1\n", False),
])
def test_nvue_fast_yaml_road_declines_what_libyaml_decides(text: str, declined: bool) -> None:
    from fabricgen.platforms.nvue import read as nvue_read
    assert (nvue_read._fast_tree(text) is None) == declined


@pytest.mark.parametrize("text", [*NVUE_DOCUMENTS,
                                  "- set: {a: True, b: TRUE, c: Yes, d: NULL, e: -0x1A, f: 1e3, g: .5, h: 1:30}\n",
                                  "- set:\n    a: {b: 1}\n- set:\n    a: {}\n- set:\n    c: {d: 1}\n- set:\n    c:\n",
                                  "- unset:\n    a:\n- set:\n    x: [ ]\n    y: [a, [b, c]]\n"])
def test_nvue_json_road_builds_compose_s_tree(text: str) -> None:
    """rapidyaml's tree written as JSON and read back makes compose's tree, or declines (None)."""
    import ryml  # type: ignore[import-untyped]

    from fabricgen.platforms.nvue import read as nvue_read
    raw = text.encode()
    if not nvue_read._fast_text(raw) or nvue_read._QUOTED_VALUE.search(raw):
        return  # not offered to the JSON road
    try:
        found = nvue_read._json_tree(ryml.parse_in_arena(raw))
    except nvue_read._NotFast:
        return
    if found is not None:
        assert found.root == nvue_read._from_yaml(text).root


@pytest.mark.parametrize("text", [*NVUE_DOCUMENTS, "a: 'x'\n", "a: -  'x'\n", "'3': x\n", "a: [ 'b']\n", "a: b'\n",
                                  "- 'x'\n", "a: {b: c, 'd': e}\n", "# it's: a\n", "a:'b'\n", "a: x\n  # `x` > y\n",
                                  "a: `x`\n", "a: x # >\n", "a: x\n---\n", "a:\tb\n"])
def test_nvue_fast_text_scans_say_what_the_regexes_say(text: str) -> None:
    """_fast_text finds the characters a setting must not hold with translate and find, and _quoted_value reads the
    text backwards: the same answers as the character-class regexes over every byte."""
    from fabricgen.platforms.nvue import read as nvue_read
    raw = text.encode()
    assert nvue_read._quoted_value(raw) == (nvue_read._QUOTED_VALUE.search(raw) is not None)
    outside = [found.start() for found in nvue_read._OUTSIDE_COMMENTS.finditer(raw)]
    in_comments = all(nvue_read._COMMENT_LINE.match(raw, raw.rfind(b"\n", 0, at) + 1) for at in outside)
    if nvue_read._fast_text(raw):
        assert in_comments and not nvue_read._CONTROL.search(raw)


def test_nvue_json_road_reads_rendered_files() -> None:
    import ryml

    from fabricgen.platforms.nvue import read as nvue_read
    for path in sorted(ROOT.glob("golden/**/nvue.yaml")):
        raw = path.read_bytes()
        assert nvue_read._fast_text(raw) and not nvue_read._QUOTED_VALUE.search(raw), path
        found = nvue_read._json_tree(ryml.parse_in_arena(raw))
        assert found is not None and found.root == nvue_read._from_yaml(raw.decode()).root, path


def intent_waiving(tmp_path: Path, *waivers: dict[str, str]) -> Path:
    """The bundled intent with ``waivers`` added to its own."""
    intent = yaml.safe_load((ROOT / "intent" / "fabric.yaml").read_text())
    intent["lint"]["waive"] += list(waivers)
    path = tmp_path / "waiving.yaml"
    path.write_text(yaml.safe_dump(intent))
    return path


def test_a_waiver_written_for_either_end_of_a_cable_waives_its_finding(configs: Path, tmp_path: Path) -> None:
    """FG-MTU-001 lists the cable from leaf1's end; the waiver names the spine's end, where the edit was made."""
    edit(configs / "spine1" / "eos.cfg", "mtu 9100", "mtu 9000", after="interface Ethernet1/1")
    intent = intent_waiving(tmp_path, {"rule": "FG-MTU-001", "device": "spine1", "port": "Ethernet1/1",
                                       "reason": "the spine runs 9000 until its optics are swapped"})
    code, output = invoke("lint", str(intent), "--configs", str(configs), "--format", "json")
    assert code == 1  # the spine's own findings (FG-MTU-002, -005, FG-CFG-001) stand
    [finding] = [f for f in json.loads(output)["findings"] if f["rule"] == "FG-MTU-001"]
    assert (finding["device"], finding["peer"], finding["waived"]) == ("leaf1", "spine1:Ethernet1/1", True)


def test_a_waiver_of_a_whole_device_covers_its_own_findings_only(configs: Path, tmp_path: Path) -> None:
    """Without a port, a waiver is about the device's own findings, not those of the devices cabled to it."""
    edit(configs / "spine1" / "eos.cfg", "mtu 9100", "mtu 9000", after="interface Ethernet1/1")
    intent = intent_waiving(tmp_path, {"rule": "FG-MTU-001", "device": "spine1", "reason": "a spine on trial at 9000"})
    _, output = invoke("lint", str(intent), "--configs", str(configs), "--format", "json")
    [finding] = [f for f in json.loads(output)["findings"] if f["rule"] == "FG-MTU-001"]
    assert (finding["device"], finding["waived"]) == ("leaf1", False)


def test_a_waiver_may_name_a_management_interface(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    intent = intent_waiving(tmp_path, {"rule": "FG-MGT-002", "device": "oob1", "port": "Management1",  # not a port
                                       "reason": "its management port is moved next week"})
    assert invoke("lint", str(intent))[0] == 0


@pytest.mark.parametrize(("waiver", "message"), [
    ({"device": "leaf22"}, "lint.waive.[1].device: the waiver names device 'leaf22', which the inventory does not "
                           "have (did you mean 'leaf2'?)"),
    ({"device": "leaf1", "port": "Ethernet4"}, "lint.waive.[1].port: the waiver names port 'Ethernet4' on leaf1, "
                                               "which the inventory does not have (did you mean 'Ethernet24'?)"),
])
def test_a_waiver_naming_what_the_inventory_lacks_is_an_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    waiver: dict[str, str], message: str) -> None:
    """A misspelt name waives nothing and looks as if it did: refused, like any unknown reference."""
    monkeypatch.chdir(ROOT)
    intent = intent_waiving(tmp_path, {"rule": "FG-MTU-002", "reason": "a spine that runs 9000 on purpose", **waiver})
    code, output = invoke("lint", str(intent))
    assert code == 2 and message in output, output


def test_an_interface_line_at_column_0_is_refused_at_its_line(configs: Path) -> None:
    """`mtu 9000` moved out of its interface block by a hand edit (its indentation lost) was read as a top-level
    line nobody owns and dropped, and the port read at the MTU its block left: now it is refused where it is."""
    eos = configs / "spine1" / "eos.cfg"
    edit(eos, "   mtu 9100\n", "mtu 9000\n", after="interface Ethernet1/1")
    code, output = invoke("lint", "--configs", str(configs))
    assert code == 2, output
    at = eos.read_text().splitlines().index("mtu 9000") + 1
    assert f"{eos}:{at}: a line of a block (`interface`, `qos profile`) at the top level (column 0)" in output
    assert "indent it under the line that opens its block" in output and "`mtu 9000`" in output


def test_an_nxos_interface_line_at_column_0_is_refused_and_global_pfc_lines_are_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "configs"
    assert invoke("render", "intent/mixed.yaml", "-i", "inventory/mixed", "-o", str(out))[0] == 0
    nxos = out / "leaf4" / "nxos.cfg"
    assert "\npriority-flow-control watch-dog-interval on\n" in nxos.read_text()  # global: read as before
    edit(nxos, "  mtu 9100\n", "mtu 9100\n", after="interface Ethernet1/1")
    code, output = invoke("lint", "intent/mixed.yaml", "-i", "inventory/mixed", "--configs", str(out))
    assert code == 2, output
    at = nxos.read_text().splitlines().index("mtu 9100") + 1
    assert f"{nxos}:{at}: a line of a block (`interface`, a QoS policy's `class`) at the top level" in output


def test_a_port_finding_points_into_the_port_s_own_entry(configs: Path) -> None:
    """A SONiC config_db.json names a port in BUFFER_PG, CABLE_LENGTH and PFC_WD before its PORT entry: an MTU edit
    is pointed at the `mtu` line of that entry, not at the first line naming the port."""
    leaf = configs / "leaf1" / "config_db.json"
    edit(leaf, '"mtu": "9100"', '"mtu": "1500"', after='"Ethernet8": {\n            "admin_status"')
    code, output = invoke("lint", "--configs", str(configs))
    assert code == 1
    lines = leaf.read_text().splitlines()
    at = lines.index('            "mtu": "1500",', lines.index('    "PORT": {')) + 1  # eth0's MTU is 1500 too
    for rule in ("FG-MTU-002", "FG-MTU-005", "FG-CFG-001"):
        [line] = [text for text in output.splitlines() if f" {rule} " in text and "leaf1:Ethernet8" in text]
        assert line.startswith(f"{leaf}:{at}: {rule} error leaf1:Ethernet8"), line


def test_a_setting_the_port_lacks_is_not_looked_for_in_the_next_port(configs: Path) -> None:
    """With the `fec` key gone from one PORT entry, the finding points at that port's entry: the ports after it
    have a `fec` line of their own, which is not this port's."""
    leaf = configs / "leaf1" / "config_db.json"
    edit(leaf, '            "fec": "rs",\n', "", after='"PORT": {\n        "Ethernet0": {')
    code, output = invoke("lint", "--configs", str(configs))
    assert code == 1
    lines = leaf.read_text().splitlines()
    at = lines.index('        "Ethernet0": {', lines.index('    "PORT": {')) + 1
    [line] = [text for text in output.splitlines() if " FG-CFG-001 " in text and "leaf1:Ethernet0:" in text]
    assert line.startswith(f"{leaf}:{at}: FG-CFG-001 error leaf1:Ethernet0: the config differs from the intent: "
                           "fec is not set, intent rs"), line


def test_a_port_named_elsewhere_is_found_by_its_own_key(configs: Path) -> None:
    """Another port's description naming Ethernet8 and a DEVICE_NEIGHBOR entry naming it as a value are not its
    entry; a table it is missing from does not send the finding into the next table."""
    leaf = configs / "leaf1" / "config_db.json"
    data = json.loads(leaf.read_text())
    data["PORT"]["Ethernet0"]["description"] = "breakout peer of Ethernet8"
    data["PORT"]["Ethernet8"]["mtu"] = "9000"
    data["DEVICE_NEIGHBOR"] = {"Ethernet224": {"name": "spine1", "port": "Ethernet8"}}
    del data["CABLE_LENGTH"]["AZURE"]["Ethernet8"]
    leaf.write_text(json.dumps(data, indent=4, sort_keys=True))
    code, output = invoke("lint", "--configs", str(configs))
    assert code == 1
    lines = leaf.read_text().splitlines()
    entry = lines.index('        "Ethernet8": {', lines.index('    "PORT": {')) + 1
    mtu = lines.index('            "mtu": "9000",', entry) + 1
    found = {text.split(" ", 2)[1]: text.split(": ", 1)[0] for text in output.splitlines()
             if "leaf1:Ethernet8" in text and text.startswith(str(leaf))}
    assert found["FG-MTU-005"] == f"{leaf}:{mtu}"
    assert found["FG-BUF-001"] == f"{leaf}:{entry}"  # no CABLE_LENGTH entry: the port's own entry, not a neighbour's


def test_a_block_entered_twice_is_pointed_at_the_line_that_wins(configs: Path) -> None:
    """EOS applies a repeated interface block's lines in order, and the reader merges them so: the finding points
    at the later `mtu`, the one in effect."""
    eos = configs / "spine1" / "eos.cfg"
    text = eos.read_text()
    eos.write_text(text.replace("\nend\n", "\ninterface Ethernet1/1\n   mtu 9000\n!\nend\n") if "\nend\n" in text
                   else text + "interface Ethernet1/1\n   mtu 9000\n")
    code, output = invoke("lint", "--configs", str(configs))
    assert code == 1
    at = eos.read_text().splitlines().index("   mtu 9000") + 1
    [line] = [text for text in output.splitlines() if " FG-MTU-001 " in text]
    assert line.startswith(f"{eos}:{at}: FG-MTU-001 "), line


def test_an_nvue_port_is_found_by_its_own_key_not_a_bond_s_member_list(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "configs"
    assert invoke("render", "intent/mixed.yaml", "-i", "inventory/mixed", "-o", str(out))[0] == 0
    nvue = out / "leaf3" / "nvue.yaml"
    edit(nvue, "    interface:\n", "    interface:\n      bond1:\n        bond:\n          member:\n"
               "            swp2: {}\n        type: bond\n")
    edit(nvue, "          mtu: 9100\n", "          mtu: 9000\n", after="      swp2:\n        description")
    code, output = invoke("lint", "intent/mixed.yaml", "-i", "inventory/mixed", "--configs", str(out))
    assert code == 1, output
    lines = nvue.read_text().splitlines()
    at = lines.index("          mtu: 9000") + 1
    mtu = [text for text in output.splitlines() if "leaf3:swp2" in text and " FG-MTU-" in text]
    assert mtu and all(text.startswith(f"{nvue}:{at}: ") for text in mtu), mtu


def test_no_switchport_at_column_0_is_refused(configs: Path) -> None:
    eos = configs / "spine1" / "eos.cfg"
    edit(eos, "   no switchport\n", "no switchport\n", after="interface Ethernet1/1")
    code, output = invoke("lint", "--configs", str(configs))
    assert code == 2, output
    assert f"{eos}:{eos.read_text().splitlines().index('no switchport') + 1}: a line of a block" in output


def test_a_cable_finding_points_at_the_end_whose_config_changed(configs: Path) -> None:
    """FG-MTU-001 lists the cable from leaf1's end; only the spine's config was edited, so that is where it points:
    at the `mtu` line of the spine port's block."""
    edit(configs / "spine1" / "eos.cfg", "mtu 9100", "mtu 9000", after="interface Ethernet1/1")
    code, output = invoke("lint", "--configs", str(configs))
    assert code == 1
    [line] = [text for text in output.splitlines() if " FG-MTU-001 " in text]
    lines = (configs / "spine1" / "eos.cfg").read_text().splitlines()
    at = lines.index("   mtu 9000", lines.index("interface Ethernet1/1")) + 1
    assert line.startswith(f"{configs}/spine1/eos.cfg:{at}: FG-MTU-001 error leaf1:Ethernet224 ↔ spine1:Ethernet1/1:")
    # and its fix names that end, which the intent's mtu.fabric (9100 in the bundled intent) says is off
    assert line.endswith("(fix: set spine1:Ethernet1/1 back to MTU 9100, the intent's mtu.fabric, as "
                         "leaf1:Ethernet224 has it)"), line
