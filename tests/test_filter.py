"""`--filter EXPR` on the commands that select devices: render, resolve, lint, docs, plan.

The bundled example has 9 devices: leaf1-2 (SONiC, group leaves), spine1-2 and oob1 (EOS), node1-4 (ConnectX,
group gpu_nodes). A filtered render is tested as `--shard` is (tests/test_parallel.py, test_incremental.py):
its files against a whole render's, and an earlier tree updated by it against a full render of the same input.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from fabricgen.build.output import MANIFEST
from fabricgen.cli import main
from fabricgen.load.selection import selects

from conftest import ROOT

INTENT = str(ROOT / "intent" / "fabric.yaml")
LEAVES = ["leaf1", "leaf2"]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def render(inventory: Path, out: Path, *extra: str) -> dict[str, object]:
    result = run("render", INTENT, "-i", str(inventory), "-o", str(out), "--format", "json", "--jobs", "1", *extra)
    assert result.exit_code == 0, result.output
    summary: dict[str, object] = json.loads(result.stdout)
    return summary


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def devices_of(files: dict[str, bytes]) -> set[str]:
    return {name.partition("/")[0] for name in files if "/" in name}


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    copy = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", copy, ignore=shutil.ignore_patterns("mixed"))
    return copy


def lengthen_leaf1_uplink(inventory: Path) -> None:
    """A longer cable changes leaf1's and spine1's headroom, nothing else."""
    hosts = inventory / "hosts.yaml"
    old = 'peer: "spine1:Ethernet1/1", cable_m: 30'
    assert hosts.read_text().count(old) == 1
    hosts.write_text(hosts.read_text().replace(old, 'peer: "spine1:Ethernet1/1", cable_m: 37'))


def slow_down_spine_ports(inventory: Path) -> None:
    """spine1's and spine2's Ethernet2/1 at 200G: a speed mismatch (FG-PHY-001, an error) on two leaf1 links,
    each reported once, by leaf1."""
    hosts = inventory / "hosts.yaml"
    old = "      Ethernet2/1: {speed: 400G, fec: rs}"
    assert hosts.read_text().count(old) == 2
    hosts.write_text(hosts.read_text().replace(old, "      Ethernet2/1: {speed: 200G, fec: rs}"))


# --- render -------------------------------------------------------------------------------------------------

def test_a_filtered_render_into_an_empty_directory_holds_the_selection_only(inventory: Path, tmp_path: Path) -> None:
    whole = tree(tmp_path / "whole") if render(inventory, tmp_path / "whole") else {}
    summary = render(inventory, tmp_path / "leaves", "--filter", "role=leaf")
    leaves = tree(tmp_path / "leaves")
    manifest = json.loads(leaves.pop(MANIFEST))
    assert devices_of(leaves) == set(LEAVES)
    assert leaves == {name: text for name, text in whole.items() if name.partition("/")[0] in LEAVES}
    assert manifest["filter"] == {"expression": "role=leaf", "devices": 2}  # not taken for a whole render
    assert summary["filter"] == manifest["filter"] and sorted(summary["devices"]) == LEAVES  # type: ignore[call-overload]
    assert "filter" not in json.loads(whole[MANIFEST]) and render(inventory, tmp_path / "whole")["filter"] is None


def test_a_filtered_render_updates_its_devices_and_keeps_the_others(inventory: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    render(inventory, out)
    before = tree(out)
    lengthen_leaf1_uplink(inventory)
    summary = render(inventory, out, "--filter", "leaf*")
    after = tree(out)
    changed = {name for name in after if after[name] != before.get(name)}
    assert changed == {"leaf1/config_db.json", "leaf1/resolved.json", MANIFEST}  # spine1 changes too, unselected
    assert set(after) == set(before)  # nothing deleted
    assert summary["removed"] == [] and summary["update"] == "incremental"
    assert json.loads(after[MANIFEST])["filter"] == {"expression": "leaf*", "devices": 2}
    # Each device's files still match its resolved.json: a whole render brings spine1 up to date, and the tree
    # is then exactly a full render of the same input (not a neighbourhood update from a stale record).
    summary = render(inventory, out)
    assert summary["update"] == "incremental"
    assert sorted(summary["written"]) == [MANIFEST, "spine1/resolved.json"]  # type: ignore[call-overload]
    render(inventory, tmp_path / "reference", "--full")
    assert tree(out) == tree(tmp_path / "reference")


def test_a_filtered_render_never_replaces_a_tree_it_cannot_update(inventory: Path, tmp_path: Path) -> None:
    """Another shard's tree, or one edited by hand, could only be replaced whole: by the selection alone, which
    would delete every other device's files. The render refuses (exit 3) and leaves it as it was."""
    sliced, edited = tmp_path / "sliced", tmp_path / "edited"
    render(inventory, sliced, "--shard", "1/2")
    render(inventory, edited)
    (edited / "spine1" / "eos.cfg").write_text("hand-edited\n")
    for out in (sliced, edited):
        before = tree(out)
        result = run("render", INTENT, "-i", str(inventory), "-o", str(out), "--filter", "leaf1")
        assert result.exit_code == 3, result.output
        assert "error: --filter leaf1:" in result.output and "delete the others' files" in result.output
        assert tree(out) == before


def test_filter_within_a_shard(inventory: Path, tmp_path: Path) -> None:
    """--shard then --filter: the shard's devices the filter selects (the manifest records both)."""
    render(inventory, tmp_path / "shard", "--shard", "1/2")
    in_shard = devices_of(tree(tmp_path / "shard"))
    render(inventory, tmp_path / "both", "--shard", "1/2", "--filter", "node*")
    both = tree(tmp_path / "both")
    assert devices_of(both) == {name for name in in_shard if name.startswith("node")} != set()
    assert {"shard", "filter"} <= json.loads(both[MANIFEST]).keys()


def test_filter_and_full_do_not_go_together(inventory: Path, tmp_path: Path) -> None:
    result = run("render", INTENT, "-i", str(inventory), "-o", str(tmp_path / "o"), "--filter", "leaf1", "--full")
    assert result.exit_code == 2 and "--filter and --full" in result.output
    assert not (tmp_path / "o").exists()


# --- input errors, every command ----------------------------------------------------------------------------

COMMANDS = [["render", "-o", "{tmp}/out"], ["resolve"], ["lint"], ["docs", "-o", "{tmp}/docs"],
            ["plan", "--base", "{tmp}"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command[0])
@pytest.mark.parametrize(("expression", "why"), [
    ("colour=red", "unknown key 'colour'"),
    ("leaf1,,leaf2", "an empty part"),
    ("leaf9*", "selects no device of the inventory"),
    ("role=leaf&platform=eos", "selects no device of the inventory"),
])
def test_a_bad_or_empty_filter_is_an_input_error(command: list[str], expression: str, why: str,
                                                 tmp_path: Path) -> None:
    args = [part.format(tmp=tmp_path) for part in command]
    result = run(*args, "--filter", expression)
    assert result.exit_code == (3 if command[0] == "plan" else 2), result.output  # plan: 2 means "changes"
    assert f"error: --filter {expression}: " in result.stderr and why in result.stderr
    assert result.stdout == "" and not (tmp_path / "out").exists() and not (tmp_path / "docs").exists()


# --- resolve, lint, docs, plan ------------------------------------------------------------------------------

def test_resolve_prints_the_selected_devices() -> None:
    result = run("resolve", "--filter", "group=leaves,role=oob")
    assert result.exit_code == 0 and list(yaml.safe_load(result.stdout)["devices"]) == ["leaf1", "leaf2", "oob1"]
    result = run("resolve", "--device", "node1", "--filter", "spine*")  # either names them
    assert list(yaml.safe_load(result.stdout)["devices"]) == ["node1", "spine1", "spine2"]


def test_lint_reports_findings_about_the_selection_and_exits_on_them(inventory: Path) -> None:
    slow_down_spine_ports(inventory)
    everything = json.loads(run("lint", INTENT, "-i", str(inventory), "--format", "json").stdout)
    errors = [(f["device"], f["peer"]) for f in everything["findings"] if f["severity"] == "error"]
    assert errors == [("leaf1", "spine1:Ethernet2/1"), ("leaf1", "spine2:Ethernet2/1")]

    def lint(expression: str) -> tuple[int, list[tuple[str, str]], dict[str, object]]:
        result = run("lint", INTENT, "-i", str(inventory), "--format", "json", "--filter", expression)
        report = json.loads(result.stdout)
        return result.exit_code, [(f["device"], f["peer"]) for f in report["findings"]], report["summary"]

    code, found, summary = lint("spine1")  # the link's other end: reported from leaf1, about spine1 too
    assert code == 1 and ("leaf1", "spine1:Ethernet2/1") in found and ("leaf1", "spine2:Ethernet2/1") not in found
    assert all("spine1" in (device, (peer or "").partition(":")[0]) for device, peer in found)
    assert summary["errors"] == 1 and summary["devices"] == 9  # checked: the whole fabric
    code, found, summary = lint("group=gpu_nodes")
    assert code == 0 and summary["errors"] == 0
    assert {device for device, _ in found} <= {"node1", "node2", "node3", "node4"}


def test_docs_pages_of_the_selection_beside_the_whole_fabric_report(tmp_path: Path) -> None:
    assert run("docs", "-o", str(tmp_path / "all")).exit_code == 0
    result = run("docs", "-o", str(tmp_path / "spines"), "--filter", "role=spine")
    assert result.exit_code == 0, result.output
    everything, spines = tree(tmp_path / "all"), tree(tmp_path / "spines")
    assert sorted(name for name in spines if name.startswith("devices/")) == ["devices/spine1.md",
                                                                              "devices/spine2.md"]
    for shared in ("fabric.html", "runbook.md", "devices/spine1.md"):
        assert spines[shared] == everything[shared]
    index = spines["README.md"].decode()
    assert "(devices/spine1.md)" in index and "(devices/leaf1.md)" not in index
    assert json.loads(spines[MANIFEST])["filter"] == {"expression": "role=spine", "devices": 2}


def test_plan_lists_the_selected_devices(inventory: Path, tmp_path: Path) -> None:
    base = tmp_path / "base"
    render(inventory, base)
    lengthen_leaf1_uplink(inventory)

    def plan(*extra: str) -> dict[str, object]:
        result = run("plan", INTENT, "-i", str(inventory), "--base", str(base), "--format", "json", *extra)
        assert result.exit_code == 2, result.output
        report: dict[str, object] = json.loads(result.stdout)
        return report

    def changed(report: dict[str, object]) -> list[str]:
        return [device["device"] for device in report["changed_devices"]]  # type: ignore[attr-defined]

    assert changed(plan()) == ["leaf1"]  # spine1's headroom is the switch's own (only its resolved.json changes)
    assert plan()["unchanged"] == 8
    leaves = plan("--filter", "role=leaf,spine1")
    assert changed(leaves) == ["leaf1"] and leaves["unchanged"] == 2  # leaf2, spine1
    result = run("plan", INTENT, "-i", str(inventory), "--base", str(base), "--filter", "!leaf1")
    assert result.exit_code == 0 and "no device changes" in result.stdout


def test_a_removed_device_is_selected_by_its_name_role_and_platform() -> None:
    """plan's removed devices are no longer in the inventory: the filter reads what the base knew of them."""
    assert selects("role=leaf&platform=sonic", "leaf9", "leaf", "sonic")
    assert selects("leaf*", "leaf9", None, None)
    assert not selects("role=spine", "leaf9", "leaf", "sonic")
    assert not selects("group=leaves", "leaf9", "leaf", "sonic")  # groups unknown: no group matches
