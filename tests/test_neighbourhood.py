"""The neighbourhood update: after a commit that edits a few hosts.yaml entries, `fabricgen render` into the
existing tree loads, resolves and lints only the edited devices and those around them — and the tree it leaves
is byte for byte the one a full render of the same inputs writes. Every edit it does not cover takes the whole
road, with the same result, exit status and messages as a render into a new directory."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import fabricgen.build.neighbourhood as neighbourhood
import fabricgen.load.yamlsource as yamlsource
from fabricgen.build.neighbourhood import plan_update
from fabricgen.build.output import read_previous
from fabricgen.cli import main
from fabricgen.load.fabric import load
from fabricgen.load.yamlsource import entry_digest, entry_table_path, read_entry_table, top_level_entries
from fabricgen.resolve import resolve

from conftest import ROOT

INTENT = ROOT / "intent" / "fabric.yaml"


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def run(intent: Path, inventory: Path, out: Path, *extra: str, jobs: int = 1) -> Result:
    return CliRunner().invoke(main, ["render", str(intent), "-i", str(inventory), "-o", str(out), "--format", "json",
                                     "--jobs", str(jobs), *extra])


def render(intent: Path, inventory: Path, out: Path, jobs: int = 1) -> dict[str, object]:
    """--jobs 1 checks the earlier tree in this process; more checks it in a forked one beside the update."""
    result = run(intent, inventory, out, jobs=jobs)
    assert result.exit_code == 0, result.output
    summary: dict[str, object] = json.loads(result.stdout)
    return summary


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} must occur once in {path}"
    path.write_text(text.replace(old, new))


class Site:
    """A fabric repository with a rendered tree: edit its inventory, render again, compare with a full render."""

    def __init__(self, intent: Path, inventory: Path, scratch: Path) -> None:
        self.intent, self.inventory, self.scratch, self.out = intent, inventory, scratch, scratch / "out"
        first = render(intent, inventory, self.out)
        assert first["update"] == "full"

    def edit_hosts(self, old: str, new: str) -> None:
        edit(self.inventory / "hosts.yaml", old, new)

    def render(self, jobs: int = 1) -> dict[str, object]:
        return render(self.intent, self.inventory, self.out, jobs)

    def full(self) -> dict[str, bytes]:
        """What a render of the current inputs into a new directory writes."""
        reference = self.scratch / "reference"
        shutil.rmtree(reference, ignore_errors=True)
        assert render(self.intent, self.inventory, reference)["update"] == "full"
        return tree(reference)

    def changed_devices(self, before: dict[str, bytes]) -> set[str]:
        after = tree(self.out)
        return {name.split("/")[0] for name in after if "/" in name and after[name] != before.get(name)} | \
            {name.split("/")[0] for name in before if name not in after}


@pytest.fixture
def site(tmp_path: Path) -> Site:
    inventory = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", inventory, ignore=shutil.ignore_patterns("mixed"))
    return Site(INTENT, inventory, tmp_path)


NODE1_RAIL0 = 'ens1f0np0: {rdma_device: mlx5_0, speed: 400G, fec: rs, peer: "leaf1:Ethernet0", cable_m: 2, media: dac}'
# Edits of the bundled example the neighbourhood covers, and the devices whose files each one changes.
COVERED = {
    "uplink cable length": ('peer: "spine1:Ethernet1/1", cable_m: 30', 'peer: "spine1:Ethernet1/1", cable_m: 37',
                            {"leaf1", "spine1"}),
    "NIC renamed": (NODE1_RAIL0, NODE1_RAIL0.replace("mlx5_0", "mlx5_7"), {"node1"}),
    "host port speed left to the switch end": (NODE1_RAIL0, NODE1_RAIL0.replace("speed: 400G, ", ""), {"node1"}),
    "host cable length": (NODE1_RAIL0, NODE1_RAIL0.replace("cable_m: 2", "cable_m: 3"), {"node1", "leaf1"}),
    "switch management address": ("hostname: 192.0.2.11", "hostname: 192.0.2.21", {"leaf1"}),
    "a comment": (NODE1_RAIL0, NODE1_RAIL0 + "  # re-run 2026-12-01", set()),
}


@pytest.mark.parametrize("name", list(COVERED))
def test_an_edit_of_one_entry_is_a_neighbourhood_update_equal_to_a_full_render(site: Site, name: str) -> None:
    old, new, devices = COVERED[name]
    before = tree(site.out)
    site.edit_hosts(old, new)

    summary = site.render()

    assert summary["update"] == "neighbourhood"
    assert tree(site.out) == site.full()
    assert site.changed_devices(before) == devices
    changed_files = sum(1 for path, text in tree(site.out).items() if before.get(path) != text)
    assert summary["rewritten"] == changed_files  # the manifest included: its inputs' hashes always change


@pytest.mark.parametrize("jobs", [1, 2])
def test_updates_chain(site: Site, jobs: int) -> None:
    """The state a neighbourhood update leaves serves the next one."""
    for cable in (3, 4, 5):
        site.edit_hosts(f'peer: "spine1:Ethernet1/1", cable_m: {cable + 27}',
                        f'peer: "spine1:Ethernet1/1", cable_m: {cable + 28}')
        assert site.render(jobs)["update"] == "neighbourhood"
        assert tree(site.out) == site.full()


def _host_cable(site: Site, metres: int) -> None:
    """node1's first rail cable, from whatever length it has now to ``metres``."""
    text = (site.inventory / "hosts.yaml").read_text()
    start = text.index(NODE1_RAIL0.split("cable_m")[0])
    now = text[start:].split("cable_m: ", 1)[1].split(",", 1)[0]
    site.edit_hosts(NODE1_RAIL0.replace("cable_m: 2", f"cable_m: {now}"),
                    NODE1_RAIL0.replace("cable_m: 2", f"cable_m: {metres}"))


def _full_with_another_cache(site: Site, monkeypatch: pytest.MonkeyPatch, cache: Path) -> dict[str, bytes]:
    """A full render's tree, made with a cache of its own: its whole road would write this cache's entry table."""
    with monkeypatch.context() as scoped:
        scoped.setenv("FABRICGEN_CACHE_DIR", str(cache))
        return site.full()


def _state(site: Site) -> neighbourhood.RenderState:
    state = neighbourhood._load_state((site.out / "manifest.json").read_bytes())
    assert state is not None
    return state


def test_an_update_keeps_its_edits_in_the_render_state_and_the_next_update_reads_them(
        site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The entry table is not written again for a few edited entries (10 MB at 32,768 GPUs): the render state
    keeps their data, and the next update finds there what the edited entry read before, so that it resolves
    only the devices whose view of it changed (node1 and the leaf at the far end of the cable, not every
    neighbour of node1)."""
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(tmp_path / "cache"))
    site.render()  # the whole road, which writes the entry table for this cache
    table = entry_table_path(site.inventory / "hosts.yaml")
    assert table is not None and table.is_file()
    written = table.read_bytes()
    affected: list[set[str]] = []
    real_affected = neighbourhood._Planner._affected

    def spy(planner: neighbourhood._Planner, edited: dict[str, object]) -> set[str]:
        affected.append(real_affected(planner, edited))
        return affected[-1]

    monkeypatch.setattr(neighbourhood._Planner, "_affected", spy)
    for metres in (3, 1, 2):
        _host_cable(site, metres)
        assert site.render()["update"] == "neighbourhood"
        assert tree(site.out) == _full_with_another_cache(site, monkeypatch, tmp_path / "reference-cache")
        kept = _state(site).blobs
        assert len(kept) == (0 if metres == 2 else 1)  # at 2 m the entry reads as the table holds it again
    assert table.read_bytes() == written
    assert affected == [{"node1", "leaf1"}] * 3


def test_past_the_edits_a_state_keeps_the_entry_table_is_written_whole(site: Site, monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(tmp_path / "cache"))
    site.render()
    table = entry_table_path(site.inventory / "hosts.yaml")
    assert table is not None
    monkeypatch.setattr(neighbourhood, "MAX_KEPT_EDITS", 0)
    for metres in (3, 1):
        _host_cable(site, metres)
        assert site.render()["update"] == "neighbourhood"
        assert tree(site.out) == _full_with_another_cache(site, monkeypatch, tmp_path / "reference-cache")
        assert _state(site).blobs == {}
        entries = top_level_entries((site.inventory / "hosts.yaml").read_bytes())
        assert entries is not None
        assert set(read_entry_table(table)) == {entry_digest(entry) for entry in entries}


@pytest.mark.parametrize("damage", ["a device kind edited", "a byte lost"])
def test_a_damaged_render_state_is_refused_and_the_whole_fabric_resolved(
        site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, damage: str) -> None:
    """The render state is sealed like every other cache file: edited by hand (its device kinds make the render
    summary's role and platform rows) or cut short, it is not read, and the render resolves the whole fabric."""
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(tmp_path / "cache"))
    site.render()
    [state] = (tmp_path / "cache").glob("state-*.marshal")
    sealed = state.read_bytes()
    assert b"sonic" in sealed
    state.write_bytes(sealed.replace(b"sonic", b"sanic") if damage == "a device kind edited" else sealed[:-1])
    assert neighbourhood._load_state((site.out / "manifest.json").read_bytes()) is None
    _host_cable(site, 3)
    assert site.render()["update"] == "incremental"  # every device resolved, not the neighbourhood's few
    assert tree(site.out) == site.full()
    assert _state(site).kinds["leaf1"][1] != "sanic"  # the whole road recorded the state anew


def test_an_edited_entry_carrying_a_secret_is_not_kept(site: Site, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    """The state keeps no secret, as the entry table keeps none: such an entry is parsed again from its text."""
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(tmp_path / "cache"))
    site.edit_hosts("\nnode1:\n", "\nnode1:\n  password: hunter2-neighbourhood\n")
    assert site.render()["update"] == "incremental"
    for metres in (3, 1):
        _host_cable(site, metres)
        assert site.render()["update"] == "neighbourhood"
        assert tree(site.out) == site.full()
        assert _state(site).blobs == {}
    assert not any(b"hunter2-neighbourhood" in path.read_bytes()
                   for path in (tmp_path / "cache").rglob("*") if path.is_file())


@pytest.mark.parametrize(("waived", "update"), [("node1", "incremental"), ("leaf2", "neighbourhood")])
def test_an_edit_of_a_device_a_waiver_names_takes_the_whole_road(tmp_path: Path, waived: str, update: str) -> None:
    """A waiver's device and port must exist (resolve checks them, over the whole fabric): an edit of a device a
    waiver names, which may rename the port, takes the whole road; an edit of another device does not."""
    intent = yaml.safe_load(INTENT.read_text())
    intent["lint"]["waive"].append({"rule": "FG-ECN-003", "device": waived, "reason": "kept until the congestion test"})
    path = tmp_path / "waiving.yaml"
    path.write_text(yaml.safe_dump(intent))
    inventory = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", inventory, ignore=shutil.ignore_patterns("mixed"))
    site = Site(path, inventory, tmp_path)
    site.edit_hosts(NODE1_RAIL0, NODE1_RAIL0.replace("cable_m: 2", "cable_m: 3"))
    assert site.render()["update"] == update
    assert tree(site.out) == site.full()


WHOLE_ROAD = {
    "device added": ("\nnode4:", "\nnode5:\n  hostname: 198.51.100.15\n  groups: [gpu_nodes]\n  data:\n"
                     "    ports:\n      bmc: {speed: 1G}\n      eno1: {}\n\nnode4:", "hosts.yaml"),
    "group edited": ("hardware: DCS-7010TX-48", "hardware: DCS-7010TX-48-R", "groups.yaml"),
}


@pytest.mark.parametrize("name", list(WHOLE_ROAD))
def test_what_the_neighbourhood_does_not_cover_takes_the_whole_road(site: Site, name: str) -> None:
    old, new, file = WHOLE_ROAD[name]
    edit(site.inventory / file, old, new)

    summary = site.render()

    assert summary["update"] == "incremental"
    assert tree(site.out) == site.full()


def test_an_intent_saved_between_its_hash_and_its_read_takes_the_whole_road(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The update hashes the intent, groups.yaml and defaults.yaml to know they are unchanged, then parses them.
    An editor's save of the intent in between is read by the whole road, and the manifest names the bytes that
    were read; before, the update went on with what it parsed, under the hash of the bytes it had hashed."""
    inventory = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", inventory, ignore=shutil.ignore_patterns("mixed"))
    intent = tmp_path / "fabric.yaml"
    shutil.copy(INTENT, intent)
    site = Site(intent, inventory, tmp_path)
    site.edit_hosts(*COVERED["host cable length"][:2])
    # A comment: new bytes, the same fabric. No other guard of the update notices it; only the hash does.
    saved = intent.read_text() + "# reviewed 2026-12-07\n"
    real = yamlsource.read_input
    saves: list[int] = []

    def saved_just_before_the_parse(path: Path) -> bytes:
        if path == intent and not saves:
            saves.append(intent.write_text(saved))  # the update hashed the intent before this first parse
        return real(path)

    monkeypatch.setattr(yamlsource, "read_input", saved_just_before_the_parse)
    summary = site.render()

    assert saves and summary["update"] == "incremental"
    monkeypatch.undo()
    assert tree(site.out) == site.full()
    manifest = json.loads((site.out / "manifest.json").read_text())
    assert manifest["inputs"]["intent/fabric.yaml"] == hashlib.sha256(saved.encode()).hexdigest()


def test_a_re_cabling_takes_the_whole_road(site: Site) -> None:
    """Two hosts swap leaf ports: peers change, which a fabric-wide lint rule compares (one cable per port)."""
    hosts = site.inventory / "hosts.yaml"
    text = hosts.read_text()
    assert text.count('"leaf1:Ethernet0"') == text.count('"leaf1:Ethernet16"') == 1
    hosts.write_text(text.replace('"leaf1:Ethernet0"', "SWAP").replace('"leaf1:Ethernet16"', '"leaf1:Ethernet0"')
                     .replace("SWAP", '"leaf1:Ethernet16"'))

    assert site.render()["update"] == "incremental"
    assert tree(site.out) == site.full()


BROKEN = {
    "lint error": (NODE1_RAIL0, NODE1_RAIL0.replace("fec: rs", "fec: none"), 1),
    "unknown peer port": (NODE1_RAIL0, NODE1_RAIL0.replace("leaf1:Ethernet0", "leaf1:Ethernet999"), 2),
    "bad value": (NODE1_RAIL0, NODE1_RAIL0.replace("speed: 400G", "speed: fast"), 2),
    "management address outside the subnet": ("hostname: 192.0.2.11", "hostname: 203.0.113.11", 2),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_edit_is_reported_as_a_render_into_a_new_directory_reports_it(site: Site, name: str) -> None:
    old, new, status = BROKEN[name]
    before = tree(site.out)
    site.edit_hosts(old, new)

    update = run(site.intent, site.inventory, site.out)
    fresh = run(site.intent, site.inventory, site.scratch / "fresh")

    assert update.exit_code == fresh.exit_code == status
    assert update.stderr == fresh.stderr.replace(str(site.scratch / "fresh"), str(site.out))
    assert "hosts.yaml:" in update.stderr or status == 1  # input problems point into the file
    assert tree(site.out) == before  # nothing written


def test_without_a_render_state_the_whole_road_is_taken(site: Site, monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(tmp_path / "another-machine"))
    site.edit_hosts(*COVERED["uplink cable length"][:2])
    assert site.render()["update"] == "incremental"
    assert tree(site.out) == site.full()


def test_many_edits_take_the_whole_road(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past a few hundred edited entries the whole road, which resolves in --jobs processes, is faster."""
    monkeypatch.setattr(neighbourhood, "MAX_EDITED", 0)
    site.edit_hosts(*COVERED["uplink cable length"][:2])
    assert site.render()["update"] == "incremental"
    assert tree(site.out) == site.full()


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_hand_edited_tree_is_rewritten_whole(site: Site, jobs: int) -> None:
    """The update reads the neighbours' models from the tree: a tree whose files are not what its manifest
    says (here a neighbour's resolved.json, edited after the render) is not updated in place."""
    resolved = site.out / "spine1" / "resolved.json"
    resolved.write_text(resolved.read_text().replace('"platform": "eos"', '"platform": "sonic"'))
    site.edit_hosts(*COVERED["uplink cable length"][:2])

    assert site.render(jobs)["update"] == "full"
    assert tree(site.out) == site.full()


def _plan_with_a_render_state(site: Site, out: Path) -> neighbourhood.UpdatePlan | None:
    """The update of the tree at ``out`` after an edit it covers (a comment in node1's entry, and node1 is
    in shard 1/2), with a render state recorded for the tree as the whole road records one (render
    records none for a sharded or forced tree: given one here, only what the manifest says can make the update
    decline)."""
    loaded = load(site.intent, site.inventory)
    assert loaded.hosts_entries is not None
    neighbourhood.record_render(out, neighbourhood.kinds_of(resolve(loaded.intent, loaded.inventory).devices.values()),
                                site.inventory / "hosts.yaml", loaded.hosts_entries)
    site.edit_hosts(*COVERED["a comment"][:2])
    previous = read_previous(out)
    assert previous is not None
    return plan_update(site.intent, site.inventory, out, previous, {"renderer": previous.manifest["renderer"]})


@pytest.mark.parametrize("kind", ["sharded", "forced", "neither (the control)"])
def test_the_neighbourhood_declines_a_sharded_or_forced_tree(site: Site, kind: str) -> None:
    out = site.scratch / "previous"
    if kind == "sharded":
        assert run(site.intent, site.inventory, out, "--shard", "1/2").exit_code == 0
    elif kind == "forced":  # a DAC past its reach is a lint error: the render writes only with --force
        site.edit_hosts(NODE1_RAIL0, NODE1_RAIL0.replace("cable_m: 2", "cable_m: 9"))
        assert run(site.intent, site.inventory, out, "--force").exit_code == 0
        site.edit_hosts(NODE1_RAIL0.replace("cable_m: 2", "cable_m: 9"), NODE1_RAIL0)
    else:
        assert run(site.intent, site.inventory, out).exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"shard", "forced"} & set(manifest) == {"sharded": {"shard"}, "forced": {"forced"}}.get(kind, set())
    plan = _plan_with_a_render_state(site, out)
    assert (plan is None) is (kind != "neither (the control)")


def ends_as_a_fresh_render(site: Site) -> Result:
    """Render into the earlier tree and into a new directory: the same tree, or the same exit status and messages
    with the earlier tree left as it was. Returns the update's result."""
    before = tree(site.out)
    update = run(site.intent, site.inventory, site.out)
    fresh_dir = site.scratch / "fresh"
    shutil.rmtree(fresh_dir, ignore_errors=True)
    fresh = run(site.intent, site.inventory, fresh_dir)
    assert update.exit_code == fresh.exit_code, update.output + fresh.output
    if fresh.exit_code == 0:
        assert tree(site.out) == tree(fresh_dir)
    else:
        assert update.stderr == fresh.stderr.replace(str(fresh_dir), str(site.out))
        assert tree(site.out) == before
    return update


def site_with_hosts(tmp_path: Path, text: str) -> Site:
    inventory = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", inventory, ignore=shutil.ignore_patterns("mixed"))
    (inventory / "hosts.yaml").write_text(text)
    return Site(INTENT, inventory, tmp_path)


# Found by review: text the update reads differently from load, each now read as load reads it.
NEL_THEN_A_DEVICE = b"\xc2\x85lab9: {hostname: 198.51.100.97, groups: [gpu_nodes], data: {ports: {eno1: {}}}}"


# NEL: a line break to PyYAML, so the "comment" goes on with a device.
@pytest.mark.parametrize("junk", [b"\xe9", b"\x01", NEL_THEN_A_DEVICE])
def test_the_header_before_the_first_entry_is_read_as_load_reads_it(site: Site, junk: bytes) -> None:
    hosts = site.inventory / "hosts.yaml"
    raw = hosts.read_bytes()
    first_line_end = raw.index(b"\n")
    hosts.write_bytes(raw[:first_line_end] + junk + raw[first_line_end:])
    ends_as_a_fresh_render(site)


def test_an_edited_entry_must_be_utf8_even_in_a_comment(site: Site) -> None:
    hosts = site.inventory / "hosts.yaml"
    raw = hosts.read_bytes()
    assert raw.count(b"      eno1: {}\n\nnode2:") == 1
    hosts.write_bytes(raw.replace(b"      eno1: {}\n\nnode2:", b"      eno1: {}  # caf\xe9\n\nnode2:"))
    assert ends_as_a_fresh_render(site).exit_code == 2


def test_a_byte_order_mark_before_an_entry_is_part_of_its_key(site: Site) -> None:
    hosts = site.inventory / "hosts.yaml"
    hosts.write_bytes(hosts.read_bytes().replace(b"\nnode2:\n", b"\n\xef\xbb\xbfnode2:\n"))
    assert ends_as_a_fresh_render(site).exit_code == 2


LAB = "lab1:\n  hostname: 198.51.100.99\n  groups: [gpu_nodes]\n  data:\n    ports:\n      eno1: &plain {}\n\n"


def test_yaml_that_spans_entries_leaves_no_state(tmp_path: Path) -> None:
    """An alias of another entry's anchor: the entries do not read alone, so the whole road is taken, and an
    edit that breaks the alias fails as a fresh render fails."""
    text = (ROOT / "inventory" / "hosts.yaml").read_text()
    node3 = text.index("\nnode3:")
    uses_alias = text[:node3] + text[node3:].replace("      eno1: {}\n", "      eno1: *plain\n", 1)
    site = site_with_hosts(tmp_path, LAB + uses_alias)
    site.edit_hosts("      eno1: &plain {}\n", "      eno1: {}\n")
    assert ends_as_a_fresh_render(site).exit_code == 2


def test_an_alias_moved_before_its_anchor(tmp_path: Path) -> None:
    """No entry's text changes, only their order: node3 (using node1's anchor) moves above node1."""
    text = (ROOT / "inventory" / "hosts.yaml").read_text()
    parts = text.split("      bmc: {speed: 1G}\n")
    assert len(parts) == 5
    text = parts[0] + "      bmc: &bmc {speed: 1G}\n" + parts[1] + "      bmc: {speed: 1G}\n" + parts[2] + \
        "      bmc: *bmc\n" + parts[3] + "      bmc: {speed: 1G}\n" + parts[4]
    site = site_with_hosts(tmp_path, text)
    node1, node3, node4 = (text.index(f"\n{name}:\n") + 1 for name in ("node1", "node3", "node4"))
    (site.inventory / "hosts.yaml").write_text(text[:node1] + text[node3:node4] + text[node1:node3] + text[node4:])
    assert ends_as_a_fresh_render(site).exit_code == 2


def test_a_flow_mapping_continued_at_the_start_of_a_line(tmp_path: Path) -> None:
    """`? data` keeps as many entries as keys, yet the first two 'entries' are one flow mapping."""
    span = ("lab1: {hostname: 198.51.100.99, groups: [gpu_nodes],\ndata: {ports: {eno1: {}}}}\n? data\n"
            ": {hostname: 198.51.100.98, groups: [gpu_nodes], data: {ports: {eno1: {}}}}\n")
    site = site_with_hosts(tmp_path, (ROOT / "inventory" / "hosts.yaml").read_text() + "\n" + span)
    site.edit_hosts("lab1: {hostname: 198.51.100.99, groups: [gpu_nodes],\n",
                    "lab1: {hostname: 198.51.100.97, groups: [gpu_nodes], data: {ports: {eno1: {}}}}\n")
    assert ends_as_a_fresh_render(site).exit_code == 2


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The benchmark's rail-optimised fabric (every platform, OOB, DAC and optics), 256 GPUs."""
    root = tmp_path_factory.mktemp("generated")
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_fabric.py"), "--gpus", "256", "-o", str(root)],
                   check=True, capture_output=True)
    return root


def generated_site(generated: Path, tmp_path: Path) -> Site:
    shutil.copytree(generated / "inventory", tmp_path / "inventory")
    return Site(generated / "intent.yaml", tmp_path / "inventory", tmp_path)


def entry(site: Site, name: str) -> str:
    text = (site.inventory / "hosts.yaml").read_text()
    found = re.search(rf"^{re.escape(name)}:\n(?:[ #].*\n|\n)*", text, re.MULTILINE)
    assert found, name
    return found.group(0)


def test_a_host_that_changes_platform_loses_its_old_files(generated: Path, tmp_path: Path) -> None:
    site = generated_site(generated, tmp_path)
    host = entry(site, "gpu00000")
    assert "groups: [host_connectx]" in host
    site.edit_hosts(host, host.replace("groups: [host_connectx]", "groups: [host_dcb]"))

    before = {path for path in tree(site.out) if path.startswith("gpu00000/")}
    assert site.render()["update"] == "neighbourhood"
    assert tree(site.out) == site.full()
    after = {path for path in tree(site.out) if path.startswith("gpu00000/")}
    assert before - after, "the ConnectX script is gone"


def test_edits_of_every_platform_in_the_generated_fabric(generated: Path, tmp_path: Path) -> None:
    """One entry of each kind edited at once (a switch of each platform, a host): the update equals a full render."""
    site = generated_site(generated, tmp_path)
    for name in ("r0-leaf0", "r1-leaf0", "r2-leaf0", "r3-leaf0", "gpu00003"):  # SONiC, EOS, NVUE, NX-OS; a host
        old = entry(site, name)
        # One metre shorter (a longer DAC may pass its reach, an error that would stop the render).
        site.edit_hosts(old, re.sub(r"cable_m: (\d+)", lambda m: f"cable_m: {max(int(m.group(1)) - 1, 1)}", old,
                                    count=1))
    for number, name in enumerate(("r0-spine0", "r1-spine0")):  # SONiC, EOS: a new management address
        old = entry(site, name)
        site.edit_hosts(old, re.sub(r"hostname: \S+", f"hostname: 10.128.250.{number + 10}", old))
    before = tree(site.out)

    assert site.render()["update"] == "neighbourhood"
    assert tree(site.out) == site.full()
    assert {"r0-leaf0", "r1-leaf0", "r2-leaf0", "r3-leaf0", "gpu00003", "r0-spine0", "r1-spine0"} <= \
        site.changed_devices(before)


# Edits a commit makes to one entry: a pattern, its replacement. Some break the fabric (a speed or FEC that
# the far end does not share, an address outside the management subnet): those must fail as a fresh render.
EDITS = {
    "cable": (r"cable_m: (\d+)", lambda m: f"cable_m: {int(m.group(1)) + 1}"),
    "speed": (r"speed: 400G", lambda m: "speed: 200G"),
    "speed left to the far end": (r"speed: 400G, ", lambda m: ""),
    "fec": (r"fec: rs", lambda m: "fec: none"),
    "media": (r"media: dac", lambda m: "media: aoc"),
    "nic": (r"rdma_device: mlx5_(\d)", lambda m: f"rdma_device: mlx5_{int(m.group(1)) + 10}"),
    "address": (r"hostname: 10\.128\.(\d+)\.(\d+)",
                lambda m: f"hostname: 10.128.{m.group(1)}.{int(m.group(2)) + 100}"),
    "address outside": (r"hostname: 10\.128\.", lambda m: "hostname: 10.200."),
    "comment": (r"\n", lambda m: "  # edited\n"),
}
RANDOM_UPDATES: list[str] = []  # which update each example took: the test checks some were neighbourhood ones


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(sorted(EDITS))), min_size=1, max_size=3))
def random_edits(generated: Path, edits: list[tuple[int, str]]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        site = generated_site(generated, Path(scratch))
        hosts = site.inventory / "hosts.yaml"
        names = re.findall(r"^([\w-]+):$", hosts.read_text(), re.MULTILINE)
        for pick, kind in edits:
            old = entry(site, names[pick % len(names)])
            pattern, replace = EDITS[kind]
            new = re.sub(pattern, replace, old, count=1)
            if new != old:
                site.edit_hosts(old, new)
        before = tree(site.out)

        update = run(site.intent, site.inventory, site.out)
        fresh = run(site.intent, site.inventory, Path(scratch) / "fresh")

        assert update.exit_code == fresh.exit_code, update.output + fresh.output
        if fresh.exit_code == 0:
            RANDOM_UPDATES.append(json.loads(update.stdout)["update"])
            assert tree(site.out) == tree(Path(scratch) / "fresh")
        else:
            assert update.stderr == fresh.stderr
            assert tree(site.out) == before


def test_random_edits_update_as_a_fresh_render_renders(generated: Path) -> None:
    """Any few edits of the generated fabric: the update into the earlier tree ends as a render of the same
    inputs into a new directory ends — the same tree, or the same exit status and messages and the earlier
    tree left as it was."""
    RANDOM_UPDATES.clear()
    random_edits(generated)
    assert "neighbourhood" in RANDOM_UPDATES, RANDOM_UPDATES


_OLD_ENTRY_START = re.compile(rb"^[^\s#\-%.\]}?:]", re.MULTILINE)


@given(st.text(alphabet="ab: #-\n\r\t.}?", max_size=60))
@example("a: 1\nb: 2\n")
@example("\na: 1\nb: 2")
@example("# fabric\n---\na: 1\nb: 2")
@example("\t\na\na")  # a tab-only header line: the splitter declines it (it failed 3 in 100 seeds)
@example("#\t\na\na")  # a tab in a header comment: declined too
def test_entries_split_where_a_line_starts_a_key(text: str) -> None:
    """The splitter finds entries by searching for a line break (fast); it must cut where `^` would."""
    raw = text.encode()
    starts = [match.start() for match in _OLD_ENTRY_START.finditer(raw)]
    entries = top_level_entries(raw)
    if entries is None:
        head = raw[:starts[0] if starts else len(raw)]
        content = [line for line in (line.strip() for line in head.splitlines()) if line and not line.startswith(b"#")]
        # The splitter also declines a header holding what the two YAML parsers may read differently: a tab (even
        # in a comment or alone on a line) or a lone carriage return.
        odd = b"\t" in head or re.search(rb"\r(?!\n)", head) is not None
        assert len(starts) < 2 or content not in ([], [b"---"]) or odd
        return
    first = len(raw) - sum(len(entry) for entry in entries)
    assert list(itertools.accumulate((len(entry) for entry in entries[:-1]), initial=first)) == starts
    assert b"".join(entries) == raw[first:]
