"""The neighbourhood update of a tree rendered from a compact inventory (devices.yaml + cabling.csv): after an
edit of cable lengths or media in cabling.csv, `fabricgen render` into the tree rebuilds, resolves and lints only
the cables' ends and their neighbours, and leaves the tree a full render writes. Any other edit takes the whole
road; a broken line is reported at its FILE:LINE as a render into a new directory reports it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fabricgen.cli import main
from fabricgen.load.parsecache import cache_folder
from fabricgen.load.sources.export import export_compact

from conftest import ROOT

UPLINK = "leaf1,Ethernet224,spine1,Ethernet1/1,30,optic"


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def run(workspace: Path, out: Path) -> Result:
    return CliRunner().invoke(main, ["render", str(workspace / "fabric.yaml"), "-i", str(workspace / "inventory"),
                                     "-o", str(out), "--format", "json", "--jobs", "1"])


def render(workspace: Path, out: Path) -> str:
    result = run(workspace, out)
    assert result.exit_code == 0, result.output
    return str(json.loads(result.stdout)["update"])


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "intent" / "fabric.yaml", tmp_path / "fabric.yaml")
    export_compact(ROOT / "inventory", tmp_path / "inventory")
    assert render(tmp_path, tmp_path / "out") == "full"
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} must occur once in {path}"
    path.write_text(text.replace(old, new))


def full(workspace: Path) -> dict[str, bytes]:
    reference = workspace / "reference"
    shutil.rmtree(reference, ignore_errors=True)
    assert render(workspace, reference) == "full"
    return tree(reference)


COVERED = {"cable length": UPLINK.replace(",30,", ",37,"), "media": UPLINK.replace("optic", "aoc"),
           "both": UPLINK.replace(",30,optic", ",31,aoc")}


@pytest.mark.parametrize("name", list(COVERED))
def test_a_cable_edit_is_a_neighbourhood_update_equal_to_a_full_render(workspace: Path, name: str) -> None:
    before = tree(workspace / "out")
    edit(workspace / "inventory" / "cabling.csv", UPLINK, COVERED[name])

    assert render(workspace, workspace / "out") == "neighbourhood"
    after = tree(workspace / "out")
    assert after == full(workspace)
    changed = {path.split("/")[0] for path in after if "/" in path and after[path] != before.get(path)}
    assert changed <= {"leaf1", "spine1"} and changed


def test_updates_chain(workspace: Path) -> None:
    """The state a neighbourhood update leaves (the hosts it built, the table it read) serves the next one."""
    for length in (31, 32, 33):
        edit(workspace / "inventory" / "cabling.csv", UPLINK.replace(",30,", f",{length - 1},") if length > 31
             else UPLINK, UPLINK.replace(",30,", f",{length},"))
        assert render(workspace, workspace / "out") == "neighbourhood"
        assert tree(workspace / "out") == full(workspace)


WHOLE_ROAD = {
    "a re-cabling": ("cabling.csv", "Ethernet224,spine1,Ethernet1/1,30,optic\nleaf1,Ethernet232,spine1,Ethernet2/1",
                     "Ethernet224,spine1,Ethernet2/1,30,optic\nleaf1,Ethernet232,spine1,Ethernet1/1"),
    "a cable removed": ("cabling.csv", UPLINK + "\n", ""),
    "a media cleared": ("cabling.csv", UPLINK, UPLINK.replace(",optic", ",")),
    "a quoted field": ("cabling.csv", UPLINK, UPLINK.replace("optic", '"optic"')),
    "devices.yaml edited": ("devices.yaml", "hostname: 192.0.2.11", "hostname: 192.0.2.21"),
}


@pytest.mark.parametrize("name", list(WHOLE_ROAD))
def test_what_the_neighbourhood_does_not_cover_takes_the_whole_road(workspace: Path, name: str) -> None:
    file, old, new = WHOLE_ROAD[name]
    edit(workspace / "inventory" / file, old, new)

    assert render(workspace, workspace / "out") == "incremental"
    assert tree(workspace / "out") == full(workspace)


def test_a_broken_edited_line_is_reported_at_its_file_and_line(workspace: Path) -> None:
    table = workspace / "inventory" / "cabling.csv"
    before = tree(workspace / "out")
    edit(table, UPLINK, UPLINK.replace(",30,", ",0,"))

    update, fresh = run(workspace, workspace / "out"), run(workspace, workspace / "fresh")

    assert update.exit_code == fresh.exit_code == 2
    assert f"{table}:2:38: leaf1.data.ports.Ethernet224.cable_m: Input should be greater than" in update.stderr
    assert update.stderr == fresh.stderr
    assert tree(workspace / "out") == before


def test_a_host_carrying_a_secret_is_not_kept_and_its_cables_take_the_whole_road(tmp_path: Path) -> None:
    shutil.copy(ROOT / "intent" / "fabric.yaml", tmp_path / "fabric.yaml")
    export_compact(ROOT / "inventory", tmp_path / "inventory")
    edit(tmp_path / "inventory" / "devices.yaml", "leaf1: {hostname: 192.0.2.11,",
         "leaf1: {hostname: 192.0.2.11, password: hunter2-compact,")
    assert render(tmp_path, tmp_path / "out") == "full"
    cache = cache_folder()
    assert not any(b"hunter2-compact" in path.read_bytes() for path in cache.rglob("*") if path.is_file())

    edit(tmp_path / "inventory" / "cabling.csv", UPLINK, COVERED["cable length"])

    assert render(tmp_path, tmp_path / "out") == "incremental"  # leaf1's host was not kept: built again
    assert tree(tmp_path / "out") == full(tmp_path)
