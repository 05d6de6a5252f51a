"""`fabricgen plan`: real git repositories holding the bundled example, a change made to them, and the plan
of that change as a user runs it (a subprocess in the repository)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fabricgen.models.device import DeviceModel
from fabricgen.review.plan import DevicePlan, Plan, device_summary, file_diff, to_markdown

ROOT = Path(__file__).resolve().parent.parent
ECN_KMAX_40 = "ecn: {min: 5KB, max: 40KB, probability: 10}"
ECN_KMAX_60 = "ecn: {min: 5KB, max: 60KB, probability: 10}"
# Every switch carries the fabric's ECN thresholds; no GPU host file does (their models change, their files not).
KMAX_LINES = [f"{device}: queue 3 (rdma) ECN kmax 40 KB → 60 KB" for device in ("leaf1", "leaf2", "spine1",
                                                                                 "spine2")]
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, **GIT_ENV})
    return done.stdout.strip()


def plan(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabricgen", "plan", *args], cwd=repo, capture_output=True,
                          text=True, check=False, env={**os.environ, **GIT_ENV})


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path} no longer holds {old!r}: update the test's edit"
    path.write_text(text.replace(old, new))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository (branch main, one commit) holding the bundled example: intent/fabric.yaml, inventory/."""
    repo = tmp_path / "fabric"
    (repo / "intent").mkdir(parents=True)
    shutil.copy(ROOT / "intent" / "fabric.yaml", repo / "intent" / "fabric.yaml")
    (repo / "inventory").mkdir()
    for name in ("hosts.yaml", "groups.yaml", "defaults.yaml"):
        shutil.copy(ROOT / "inventory" / name, repo / "inventory" / name)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the bundled example")
    return repo


def summary_lines(stdout: str) -> list[str]:
    """The text format's summary lines: indented by four spaces under each device, before the diffs."""
    devices = stdout.split("\n--- ")[0]
    return [line[4:] for line in devices.splitlines() if line.startswith("    ")]


def test_ecn_kmax_change_lists_each_switch_with_its_summary_and_diff(repo: Path) -> None:
    edit(repo / "intent" / "fabric.yaml", ECN_KMAX_40, ECN_KMAX_60)
    result = plan(repo)
    assert result.returncode == 2, result.stderr
    head = git(repo, "rev-parse", "HEAD")
    assert result.stdout.startswith(f"base: {head[:12]} (HEAD: no upstream branch)\n"
                                    "head: working tree (intent/fabric.yaml, inventory)\n")
    assert summary_lines(result.stdout) == KMAX_LINES
    assert "~ leaf1 (leaf, sonic) changed: config_db.json\n" in result.stdout
    assert "~ spine1 (spine, eos) changed: eos.cfg\n" in result.stdout
    assert "node1" not in result.stdout  # its files do not change
    assert "--- a/spine1/eos.cfg\n+++ b/spine1/eos.cfg\n" in result.stdout
    assert ("-      random-detect ecn minimum-threshold 5000 bytes maximum-threshold 40000 bytes "
            "max-mark-probability 10\n+      random-detect ecn minimum-threshold 5000 bytes maximum-threshold "
            "60000 bytes max-mark-probability 10\n") in result.stdout
    assert '-            "green_max_threshold": "40000",\n+            "green_max_threshold": "60000",\n' \
        in result.stdout
    assert "manifest.json" not in result.stdout and "resolved.json" not in result.stdout
    assert result.stdout.endswith("4 of 9 devices change: 4 changed, 0 added, 0 removed\n")
    assert not (repo / "out").exists()  # in memory: nothing written


def test_json_lists_changed_devices_files_summary_and_diff(repo: Path) -> None:
    edit(repo / "intent" / "fabric.yaml", ECN_KMAX_40, ECN_KMAX_60)
    result = plan(repo, "--format", "json")
    assert result.returncode == 2, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"base", "head", "semantic_summary", "changed_devices", "added", "removed", "unchanged",
                         "lint_errors"}
    assert data["base"] == {"kind": "git", "rev": "", "commit": git(repo, "rev-parse", "HEAD"),
                            "how": "HEAD: no upstream branch"}
    assert data["head"] == {"kind": "working tree", "intent": "intent/fabric.yaml", "inventory": "inventory"}
    assert (data["semantic_summary"], data["added"], data["removed"], data["unchanged"]) == (True, [], [], 5)
    leaf1, leaf2, spine1, spine2 = data["changed_devices"]
    assert leaf1 == {"device": "leaf1", "change": "changed", "role": "leaf", "platform": "sonic",
                     "files": ["config_db.json"], "summary": [KMAX_LINES[0]], "diff": leaf1["diff"],
                     "disruption": []}
    assert leaf1["diff"].startswith("--- a/leaf1/config_db.json\n+++ b/leaf1/config_db.json\n@@ ")
    assert [d["device"] for d in (leaf2, spine1, spine2)] == ["leaf2", "spine1", "spine2"]
    assert spine2["files"] == ["eos.cfg"] and spine2["summary"] == [KMAX_LINES[3]]


def test_markdown_is_a_table_of_devices_with_each_diff_folded(repo: Path) -> None:
    edit(repo / "intent" / "fabric.yaml", ECN_KMAX_40, ECN_KMAX_60)
    result = plan(repo, "--format", "markdown")
    assert result.returncode == 2, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "### fabricgen plan: 4 of 9 devices change: 4 changed, 0 added, 0 removed"
    table = lines[lines.index("| device | change | files | summary |"):][:6]
    assert table[1:] == ["|---|---|---|---|",
                         "| leaf1 | changed | config_db.json | queue 3 (rdma) ECN kmax 40 KB → 60 KB |",
                         "| leaf2 | changed | config_db.json | queue 3 (rdma) ECN kmax 40 KB → 60 KB |",
                         "| spine1 | changed | eos.cfg | queue 3 (rdma) ECN kmax 40 KB → 60 KB |",
                         "| spine2 | changed | eos.cfg | queue 3 (rdma) ECN kmax 40 KB → 60 KB |"]
    assert result.stdout.count("<details><summary>") == 4 == result.stdout.count("</details>")
    assert "<details><summary>spine1: eos.cfg</summary>\n\n```diff\n--- a/spine1/eos.cfg\n" in result.stdout


def test_no_change_exits_0_and_lists_nothing(repo: Path) -> None:
    result = plan(repo)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines()[2:] == ["no device changes"]
    assert json.loads(plan(repo, "--format", "json").stdout)["changed_devices"] == []


def test_a_host_nic_mtu_change_is_said_once_per_nic(repo: Path) -> None:
    edit(repo / "intent" / "fabric.yaml", "  host: 9000 ", "  host: 4200 ")
    result = plan(repo)
    assert result.returncode == 2, result.stderr
    lines = summary_lines(result.stdout)
    # The NIC is a port of the device and a NIC of its host model: MTU said once; its PFC xoff follows the MTU.
    nic_lines = [line for line in lines if line.startswith("node1 ")]
    assert [line.split(";")[0] for line in nic_lines] == ["node1 ens1f0np0: MTU 9000 → 4200",
                                                         "node1 ens2f0np0: MTU 9000 → 4200"]
    assert all(line.count("MTU 9000 → 4200") == 1 and "; xoff " in line for line in nic_lines)
    assert "~ node1 (gpu-host, connectx) changed: fabricgen-nic.sh\n" in result.stdout


def test_default_base_is_the_merge_base_with_the_upstream_branch(repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    upstream = git(clone, "rev-parse", "origin/main")
    edit(clone / "intent" / "fabric.yaml", ECN_KMAX_40, ECN_KMAX_60)
    git(clone, "commit", "-q", "-am", "kmax 60 KB")  # committed: HEAD would show no change
    result = plan(clone)
    assert result.returncode == 2, result.stderr
    assert result.stdout.startswith(f"base: {upstream[:12]} (merge base of HEAD and origin/main)\n")
    assert summary_lines(result.stdout) == KMAX_LINES
    named = plan(clone, "--base", "HEAD")
    assert (named.returncode, named.stdout.splitlines()[2:]) == (0, ["no device changes"])


def test_a_fabric_new_in_the_head_adds_every_device(tmp_path: Path, repo: Path) -> None:
    empty = tmp_path / "new"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    (empty / "README").write_text("a fabric comes\n")
    git(empty, "add", "README")
    git(empty, "commit", "-q", "-m", "start")
    shutil.copytree(repo / "intent", empty / "intent")
    shutil.copytree(repo / "inventory", empty / "inventory")
    data = json.loads(plan(empty, "--format", "json").stdout)
    assert data["added"] == ["leaf1", "leaf2", "node1", "node2", "node3", "node4", "oob1", "spine1", "spine2"]
    assert data["base"]["how"] == "HEAD: no upstream branch; intent/fabric.yaml is not there: every device is new"
    oob1 = data["changed_devices"][6]
    assert (oob1["summary"], oob1["files"]) == (["oob1: added (oob, eos)"], ["eos.cfg"])
    assert oob1["diff"].startswith("--- /dev/null\n+++ b/oob1/eos.cfg\n@@ -0,0 +1,")


def test_bad_yaml_in_the_base_names_the_base_file_and_line(repo: Path) -> None:
    intent = repo / "intent" / "fabric.yaml"
    good = intent.read_text()
    intent.write_text(good + "fabric: [\n")
    git(repo, "commit", "-q", "-am", "broken")
    broken = git(repo, "rev-parse", "HEAD")
    intent.write_text(good)
    result = plan(repo)
    assert (result.returncode, result.stdout) == (3, "")
    line = len(good.splitlines()) + 2  # the YAML parser stops at the end of the file, after the open `[`
    assert result.stderr.startswith(f"{broken[:12]}:intent/fabric.yaml:{line}:1: ")
    assert f"error: 1 problem(s) in the input of the base ({broken[:12]}); nothing was compared" in result.stderr


def test_bad_input_in_the_head_names_the_working_file(repo: Path) -> None:
    edit(repo / "intent" / "fabric.yaml", "      priority: 3\n", "      priority: nine\n")
    result = plan(repo)
    assert (result.returncode, result.stdout) == (3, "")
    assert result.stderr.startswith("intent/fabric.yaml:24:7: qos.classes.rdma.priority: Input should be a valid "
                                    "integer")
    assert "in the input of the head (working tree); nothing was compared" in result.stderr


def test_lint_errors_in_the_head_exit_1_with_the_plan_printed(repo: Path) -> None:
    # 30 m of passive copper at 400G: FG-PHY-004, an error.
    edit(repo / "inventory" / "hosts.yaml", 'peer: "leaf1:Ethernet0", cable_m: 2,', 'peer: "leaf1:Ethernet0", '
         "cable_m: 30,")
    result = plan(repo, "--format", "json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["lint_errors"] == 1
    [leaf1] = [d for d in data["changed_devices"] if d["device"] == "leaf1"]
    assert leaf1["summary"][0].startswith("leaf1 Ethernet0: cable 2 m → 30 m; headroom xoff ")
    assert "FG-PHY-004 error leaf1:Ethernet0" in result.stderr


def test_a_rendered_tree_as_the_base(repo: Path) -> None:
    subprocess.run([sys.executable, "-m", "fabricgen", "render", "-o", "out"], cwd=repo, check=True,
                   capture_output=True)
    edit(repo / "intent" / "fabric.yaml", ECN_KMAX_40, ECN_KMAX_60)
    result = plan(repo, "--base", "out")
    assert result.returncode == 2, result.stderr
    assert result.stdout.startswith("base: rendered tree out\n")
    assert summary_lines(result.stdout) == KMAX_LINES
    # A resolved.json this fabricgen cannot read (a newer model): file diffs only, and the output says so.
    edit(repo / "out" / "leaf1" / "resolved.json", "{\n", '{"from_a_later_fabricgen": 1,\n')
    result = plan(repo, "--base", "out", "--format", "json")
    data = json.loads(result.stdout)
    assert data["semantic_summary"] is False
    assert [(d["device"], d["summary"]) for d in data["changed_devices"]] == [
        ("leaf1", []), ("leaf2", []), ("spine1", []), ("spine2", [])]
    assert "no semantic summary" in plan(repo, "--base", "out").stdout


def test_a_base_that_cannot_be_read(repo: Path, tmp_path: Path) -> None:
    unknown = plan(repo, "--base", "no-such-branch")
    assert (unknown.returncode, unknown.stdout) == (3, "")
    assert "error: --base no-such-branch: no such commit in" in unknown.stderr
    (tmp_path / "not-a-render").mkdir()
    (tmp_path / "not-a-render" / "notes.txt").write_text("hello\n")
    stranger = plan(repo, "--base", str(tmp_path / "not-a-render"))
    assert stranger.returncode == 3
    assert "not a tree fabricgen rendered" in stranger.stderr


# --- the summary and the Markdown, on models and plans made here ----------------------------------------------

@pytest.fixture
def compact_repo(tmp_path: Path) -> Path:
    """The bundled example with its inventory in the compact form (devices.yaml, cabling.csv), committed."""
    repo = tmp_path / "compact"
    (repo / "intent").mkdir(parents=True)
    shutil.copy(ROOT / "intent" / "fabric.yaml", repo / "intent" / "fabric.yaml")
    subprocess.run([sys.executable, "-m", "fabricgen", "inventory", "export", "--to", "compact", "-i",
                    str(ROOT / "inventory"), "-o", str(repo / "inventory")], check=True, capture_output=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the bundled example, compact")
    return repo


def test_a_compact_inventory_s_base_is_its_own_devices_and_cabling(compact_repo: Path) -> None:
    """The base revision's devices.yaml and cabling.csv are read, not the working tree's: a cable made longer
    changes that leaf's headroom, and an intent change over the compact form plans as over hosts.yaml."""
    assert not (compact_repo / "inventory" / "hosts.yaml").exists()
    assert plan(compact_repo).returncode == 0
    edit(compact_repo / "inventory" / "cabling.csv", "leaf1,Ethernet224,spine1,Ethernet1/1,30,optic",
         "leaf1,Ethernet224,spine1,Ethernet1/1,300,optic")
    result = plan(compact_repo)
    assert result.returncode == 2, result.stderr
    assert "~ leaf1 (leaf, sonic) changed: config_db.json\n" in result.stdout
    assert '-            "Ethernet224": "30m",\n+            "Ethernet224": "300m",\n' in result.stdout
    git(compact_repo, "commit", "-q", "-am", "a longer cable")
    edit(compact_repo / "intent" / "fabric.yaml", ECN_KMAX_40, ECN_KMAX_60)
    result = plan(compact_repo)
    assert result.returncode == 2, result.stderr
    assert summary_lines(result.stdout) == KMAX_LINES
    assert result.stdout.endswith("4 of 9 devices change: 4 changed, 0 added, 0 removed\n")


def test_port_changes_name_the_port_and_maps_show_only_changed_entries(example_fabric: object) -> None:
    leaf1: DeviceModel = example_fabric.devices["leaf1"]  # type: ignore[attr-defined]
    port = leaf1.ports[1]
    qos = leaf1.qos
    assert qos is not None
    moved = {dscp: 5 for dscp in range(10)}  # ten DSCPs remapped: eight are shown
    after = leaf1.model_copy(update={
        "ports": [leaf1.ports[0], port.model_copy(update={"pfc_priorities": [3, 4], "mtu": 9000}), *leaf1.ports[2:]],
        "qos": qos.model_copy(update={"dscp_to_tc": {**qos.dscp_to_tc, **moved}}),
    })
    [device_line, port_line] = device_summary("leaf1", leaf1, after)
    assert port_line == f"leaf1 {port.name}: MTU {port.mtu} → 9000; PFC 3 → 3,4"
    assert device_line == ("leaf1: DSCP→TC 0: 0 → 5, 1: 0 → 5, 2: 0 → 5, 3: 0 → 5, 4: 0 → 5, 5: 0 → 5, 6: 0 → 5, "
                           "7: 0 → 5 (and 2 more)")
    assert device_summary("leaf1", leaf1, leaf1) == []
    assert device_summary("leaf1", None, leaf1) == ["leaf1: added (leaf, sonic)"]


def test_file_diff_splits_lines_as_git_does() -> None:
    # A last line without a newline is marked as git marks it; a form feed is no line break (in str.splitlines
    # it is).
    assert file_diff("leaf1/eos.cfg", "a\nb", "a\nc\n") == ("--- a/leaf1/eos.cfg\n+++ b/leaf1/eos.cfg\n"
                                                           "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of "
                                                           "file\n+c\n")
    assert file_diff("leaf1/eos.cfg", None, "x\x0cy\n") == ("--- /dev/null\n+++ b/leaf1/eos.cfg\n@@ -0,0 +1 @@\n"
                                                              "+x\x0cy\n")


def _plan_with_diff(diff: str, devices: int = 1) -> Plan:
    changed = [DevicePlan(f"leaf{n}", "changed", "leaf", "sonic", ["eos.cfg"], [f"leaf{n}: MTU 9100 → 9000"], diff)
               for n in range(devices)]
    return Plan({"kind": "tree", "path": "out"}, {"kind": "working tree", "intent": "i.yaml", "inventory": "inv"},
                True, changed, 0)


def test_markdown_fence_is_longer_than_any_backtick_run_in_the_diff() -> None:
    text = to_markdown(_plan_with_diff("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a ```` b\n+a | <b>\n"))
    assert "\n`````diff\n--- a/x\n" in text and "\n`````\n\n</details>" in text
    assert "| leaf0 | changed | eos.cfg | MTU 9100 → 9000 |" in text


def test_markdown_leaves_out_diffs_that_would_not_fit_a_comment() -> None:
    text = to_markdown(_plan_with_diff("+" + "x" * 25_000 + "\n", devices=3))
    assert len(text) < 65_536
    assert text.count("<details>") == 2
    assert "_1 device diff(s) left out to fit a comment: run `fabricgen plan` to see them._" in text


# --- render's summary: which files changed, and lint's warnings -------------------------------------------------

def render(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabricgen", "render", "-o", "out", *args], cwd=repo,
                          capture_output=True, text=True, check=False)


def test_render_json_lists_the_files_written_and_the_lint_warnings(repo: Path) -> None:
    first = json.loads(render(repo, "--format", "json").stdout)
    assert first["written"] == sorted([*first_files(first), "manifest.json"]) and first["rewritten"] == 27
    assert (first["removed"], first["lint_warnings"]) == ([], 0)  # the example's ECN warnings are waived
    assert json.loads(render(repo, "--format", "json").stdout)["written"] == []  # up to date
    edit(repo / "intent" / "fabric.yaml", ECN_KMAX_40, ECN_KMAX_60)
    update = json.loads(render(repo, "--format", "json").stdout)
    # The resolved.json of every device that carries data traffic (the fabric's QoS is in each; the OOB switch
    # has none), the data switches' configs, the manifest.
    assert update["written"] == sorted(["leaf1/config_db.json", "leaf2/config_db.json", "spine1/eos.cfg",
                                        "spine2/eos.cfg", "manifest.json",
                                        *(f"{d}/resolved.json" for d in first["devices"] if d != "oob1")])
    assert update["update"] == "incremental" and update["rewritten"] == len(update["written"])


def first_files(summary: dict[str, dict[str, dict[str, list[str]]]]) -> list[str]:
    return [f"{device}/{name}" for device, entry in summary["devices"].items() for name in entry["files"]]


def test_render_says_when_lint_found_warnings(repo: Path) -> None:
    # Without its waiver, the example's kmin below one jumbo frame is a warning on each of the 4 switches.
    edit(repo / "intent" / "fabric.yaml", "  waive:\n    - rule: FG-ECN-003\n", "  waive:\n    - rule: FG-NONE-000\n")
    text = render(repo)
    assert text.returncode == 0, text.stderr
    assert text.stdout.endswith("wrote 27 files (manifest.json included)\n"
                                "lint: 4 warning(s); `fabricgen lint` shows them\n")
    assert json.loads(render(repo, "--format", "json", "--full").stdout)["lint_warnings"] == 4
