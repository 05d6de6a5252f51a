"""Deploy's pure parts: which devices a command selects, the waves a push runs in, the run journal and the host
bundle. No network here; the lab tests (test_deploy_lab.py) drive the same code against real SSH servers."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from fabricgen.deploy import plan as deploy_plan
from fabricgen.deploy.hostbundle import BundleError, HostBundle, bundle_from_rendered
from fabricgen.deploy.journal import Journal, list_runs, new_run_id, read_run, valid_run_id
from fabricgen.deploy.plan import PlanError, batch_size, select, waves
from fabricgen.deploy.progress import Lines, LiveTable, Silent, for_terminal
from fabricgen.models.device import Fabric
from fabricgen.platforms import get_platform, platform_names
from fabricgen.resolve import resolve

from conftest import load_example


@pytest.fixture(scope="module")
def mixed() -> Fabric:
    loaded = load_example("mixed")
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


def test_default_selection_is_every_device_whose_platform_names_a_deploy_driver(mixed: Fabric) -> None:
    drivers = {name: get_platform(name).capability.napalm_driver for name in platform_names()}
    assert drivers["connectx"] == drivers["linux-dcb"] == "fabricgen_host"
    assert select(mixed) == sorted(name for name, device in mixed.devices.items() if drivers[device.platform])
    assert select(mixed, role="gpu-host") == ["node1", "node2", "node3", "node4"]


def test_hosts_take_globs_and_role_and_platform_narrow_the_selection(mixed: Fabric) -> None:
    assert select(mixed, ["node[12]"]) == ["node1", "node2"]
    assert select(mixed, [], platform="linux-dcb") == ["node3", "node4"]
    assert select(mixed, [], role="gpu-host", shard_spec="2/2") == ["node2", "node4"]


def test_naming_a_device_whose_platform_has_no_driver_is_refused(mixed: Fabric,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deploy_plan, "DEPLOYABLE", frozenset({"connectx", "linux-dcb"}))
    with pytest.raises(PlanError, match=r"no deploy driver yet for platform sonic \(leaf1\)"):
        select(mixed, ["leaf1"])
    assert select(mixed) == ["node1", "node2", "node3", "node4"]  # unnamed: left out, not refused
    with pytest.raises(PlanError, match="selects no device"):
        select(mixed, ["nosuch*"])


def test_filter_narrows_like_the_other_flags(mixed: Fabric) -> None:
    assert select(mixed, allowed={"node1", "node3", "leaf1"}, role="gpu-host") == ["node1", "node3"]
    with pytest.raises(PlanError, match="--filter selects no device"):
        select(mixed, allowed=set())


def test_a_filter_the_grammar_cannot_read_is_a_usage_error_before_any_connection() -> None:
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "fabricgen", "diff", str(root / "intent" / "mixed.yaml"), "-i",
                           str(root / "inventory" / "mixed"), "--filter", "colour=blue"],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("error: --filter colour=blue: ")


@pytest.mark.parametrize("spec", ["0/2", "3/2", "x", "1/2/3"])
def test_a_bad_shard_is_a_usage_error(mixed: Fabric, spec: str) -> None:
    with pytest.raises(PlanError, match="--shard"):
        select(mixed, shard_spec=spec)


def test_first_wave_is_the_canary_then_batches(mixed: Fabric) -> None:
    plan = waves(mixed, select(mixed, role="gpu-host"), canary=1, batch="2")
    assert [len(wave) for wave in plan] == [1, 2, 1]
    assert sorted(name for wave in plan for name in wave) == ["node1", "node2", "node3", "node4"]


def test_batches_spread_hosts_over_the_leaves_they_hang_off(mixed: Fabric) -> None:
    plan = waves(mixed, select(mixed, role="gpu-host"), canary=0, batch="2")
    first_leaves = [{mixed.devices[name].host.nics[0].peer.split(":")[0]  # type: ignore[union-attr]
                     for name in wave} for wave in plan]
    assert all(len(leaves) == 2 for leaves in first_leaves), plan


@pytest.mark.parametrize(("batch", "total", "size"), [("10%", 200, 20), ("10%", 5, 1), ("100%", 7, 7), ("3", 9, 3)])
def test_batch_is_a_count_or_a_percentage_rounded_up(batch: str, total: int, size: int) -> None:
    assert batch_size(batch, total) == size


@pytest.mark.parametrize("batch", ["0", "-1", "0%", "150%", "many"])
def test_a_bad_batch_is_a_usage_error(batch: str) -> None:
    with pytest.raises(PlanError, match="--batch"):
        batch_size(batch, 10)


def test_journal_is_read_back_as_the_run_it_records(tmp_path: Path) -> None:
    run_id = new_run_id()
    journal = Journal(tmp_path, run_id)
    journal.write("run-start", command="push", plan={"devices": ["node1", "node2"], "waves": [["node1"], ["node2"]]})
    journal.write("committed", "node1", diff="DIFF x\n", commit_id=run_id, snapshot="DIFF x\n")
    journal.write("confirmed", "node1", diff="DIFF x\n", message="", seconds=1.5)
    journal.close()  # no run-end: the run was interrupted

    record = read_run(tmp_path, run_id)
    assert record.command == "push" and not record.complete
    assert record.devices["node1"].state == "confirmed" and record.devices["node1"].commit_id == run_id
    assert record.devices["node2"].state == "planned"
    assert [run.run_id for run in list_runs(tmp_path)] == [run_id]


def test_a_line_cut_short_by_a_crash_ends_the_journal(tmp_path: Path) -> None:
    run_id = new_run_id()
    journal = Journal(tmp_path, run_id)
    journal.write("run-start", command="push", plan={"devices": ["node1"]})
    journal.close()
    with (tmp_path / run_id / "journal.jsonl").open("a") as handle:
        handle.write('{"event": "confirmed", "dev')
    assert read_run(tmp_path, run_id).devices["node1"].state == "planned"


@pytest.mark.parametrize("run_id", ["", "../etc", "a/b", "x" * 41, "RUN"])
def test_run_ids_cannot_name_a_path(run_id: str) -> None:
    assert not valid_run_id(run_id)


def test_host_bundle_round_trips_and_names_where_each_file_goes() -> None:
    rendered = {"node1/fabricgen-nic.sh": "#!/bin/bash\n", "node1/fabricgen-nic.service": "[Unit]\n",
                "node1/nccl.env": "NCCL_IB_TC=104\n", "node1/resolved.json": "{}", "node2/nccl.env": "x"}
    bundle = bundle_from_rendered("node1", "connectx", rendered)
    assert HostBundle.from_json(bundle.to_json()) == bundle
    assert [(item.path, oct(item.mode)) for item in bundle.installed] == [
        ("/etc/systemd/system/fabricgen-nic.service", "0o644"),
        ("/usr/local/sbin/fabricgen-nic.sh", "0o755"),
        ("/etc/fabricgen/nccl.env", "0o644")]
    assert bundle.script == "fabricgen-nic.sh"
    assert json.loads(bundle.to_json())["format"] == "fabricgen-host-bundle/1"


@pytest.mark.parametrize("files", [{"../../etc/passwd": "x", "fabricgen-nic.sh": ""}, {"nccl.env": ""}])
def test_a_bundle_installs_only_the_files_fabricgen_renders(files: dict[str, str]) -> None:
    with pytest.raises(BundleError):
        HostBundle("node1", "connectx", files)


def test_progress_is_plain_lines_off_a_terminal_and_silent_under_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert isinstance(for_terminal(2, machine_output=True), Silent)
    lines = for_terminal(2, machine_output=False)  # pytest's stderr is no terminal
    assert isinstance(lines, Lines)
    lines.wave(1, 2, ["node1"])
    lines.device("node1", "committed")
    lines.device("node1", "confirmed")
    assert capsys.readouterr().err.splitlines() == ["wave 1/2: 1 device(s)", "  node1: committed", "  node1: confirmed"]


def test_the_live_table_shows_the_wave_and_the_counts_so_far() -> None:
    table = LiveTable(3)
    try:
        table.wave(1, 2, ["node1", "node2"])
        table.device("node1", "confirmed")
        table.device("node2", "reverted")
        console = Console(width=60, record=True, file=io.StringIO())
        console.print(table._render())
    finally:
        table.close()
    text = console.export_text()
    assert "wave 1/2" in text and "node1" in text and "confirmed" in text
    assert "2/3 devices done: 1 confirmed, 1 reverted" in text
