"""The whole mixed example pushed as a user would: `fabricgen diff | push | rollback | runs` as subprocesses
against every device of inventory/mixed in the lab — SONiC, EOS, NVUE and NX-OS switches as the protocol-faithful
device targets of tests/targets (no vendor image runs here) and both GPU-host kinds over real SSH (tests/lab.py).

Needs root (network namespaces, sshd) like tests/test_deploy_lab.py; skipped with the reason otherwise, and a
failure under FABRICGEN_REQUIRE_LAB=1 (set by .ci/run).

``slow_lab`` (.ci/run runs them once, after ./tests/run; docs/testing.md has what they cost): the fabric is eleven
lab hosts, and its SONiC switches (leaf1, spine1) run SONiC's own generic_config_updater, whose patch sorter takes
minutes of CPU for each dry run or apply of their four rendered ports (docs/testing.md). So the round trip that runs
in CI starts them holding their rendered config but one field that bounces Ethernet0 (``hold_all_but_one_field``:
a sort of seconds); the rendered ports' first push through the real sorter is proven per release in
tests/test_deploy_sonic.py. The round trip from the switches as delivered sorts four ports six times on each SONiC
switch (diff; push's dry run and apply; rollback's dry run and apply; diff): opt-in, FABRICGEN_FABRIC_ROUND_TRIP=1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fabric_lab
import pytest
import redis
from test_deploy_sonic import hold_all_but_one_field, running

from lab import Lab
from test_lab import require_lab

ROOT = Path(__file__).resolve().parent.parent
# SONiC's GCU sorts and applies each leaf's patch for minutes (docs/platforms.md): a switch's revert timer must
# outlast its own apply and the health checks after it, and the commands the whole push.
CONFIRM_S = 3600

pytestmark = pytest.mark.slow_lab("the whole mixed fabric in the lab: eleven hosts, two of them SONiC's own GCU")
SWITCHES = ("leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2", "oob1")
SONIC = ("leaf1", "spine1")
HOSTS = ("node1", "node2", "node3", "node4")


@pytest.fixture(scope="module")  # leaf1's SONiC target validates against the vendor data (tests/conftest.py)
def fabric(sonic_yang_models: Path) -> Iterator[tuple[Lab, dict[str, str]]]:
    require_lab()
    lab, hosts = fabric_lab.up(f"fm{os.getpid() % 100000}")
    try:
        yield lab, hosts
    finally:
        lab.down()


@pytest.fixture
def inputs(fabric: tuple[Lab, dict[str, str]], tmp_path: Path) -> tuple[Path, Path]:
    lab, hosts = fabric
    for host in lab.hosts:  # every device as the lab made it: a test's push never leaks into the next
        lab.reset(host)
        fabric_lab.await_target(lab, host)
    return fabric_lab.write_inputs(lab, hosts, tmp_path)


def fabricgen(tmp_path: Path, inputs: tuple[Path, Path], command: str, *args: str,
              timeout: float = 7200) -> subprocess.CompletedProcess[str]:
    intent, inventory = inputs
    argv = [sys.executable, "-m", "fabricgen", command]
    if command in ("diff", "push"):
        argv += [str(intent), "-i", str(inventory)]
    elif command == "rollback":
        argv += ["--intent", str(intent), "-i", str(inventory)]
    if command in ("push", "rollback", "runs"):
        argv += ["--journal", str(tmp_path / "runs")]
    return subprocess.run([*argv, *args], capture_output=True, text=True, timeout=timeout, check=False,
                          cwd=tmp_path)


def devices(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    assert done.stdout, done.stderr
    result: dict[str, dict[str, Any]] = json.loads(done.stdout)["devices"]
    return result


def states(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    return {name: device["state"] for name, device in devices(done).items()}


def test_the_mixed_fabric_is_diffed_pushed_and_rolled_back_across_all_six_platforms(
        fabric: tuple[Lab, dict[str, str]], tmp_path: Path, inputs: tuple[Path, Path], mixed_rendered: Path) -> None:
    """The SONiC switches hold their rendered config but one field that bounces Ethernet0 (see the module's text)."""
    lab, hosts = fabric
    for name in SONIC:
        hold_all_but_one_field(lab, hosts[name], mixed_rendered / name / "config_db.json")
    round_trip(tmp_path, inputs, {*SWITCHES, *HOSTS})


@pytest.mark.skipif(os.environ.get("FABRICGEN_FABRIC_ROUND_TRIP") != "1",
                    reason="the SONiC switches as delivered: SONiC's patch sorter on four ports, six times a switch "
                           "(about an hour of CPU here, docs/testing.md): set FABRICGEN_FABRIC_ROUND_TRIP=1")
def test_the_mixed_fabric_round_trip_from_the_sonic_switches_as_delivered(tmp_path: Path,
                                                                          inputs: tuple[Path, Path]) -> None:
    round_trip(tmp_path, inputs, {*SWITCHES, *HOSTS})


def test_a_real_lab_named_by_fabricgen_lab_goes_through_the_same_round_trip(tmp_path: Path) -> None:
    """Opt-in, for people with a real lab (containerlab with cEOS, SONiC-VS, Cumulus VX, NX-OSv…) wired as the
    mixed example: FABRICGEN_LAB names its inventory directory (hosts.yaml with each device's management address
    and login; FABRICGEN_LAB_INTENT another intent than intent/mixed.yaml). Every device the intent renders for is
    diffed, pushed, diffed again, rolled back and diffed once more."""
    named = os.environ.get("FABRICGEN_LAB")
    if not named:
        pytest.skip(reason="FABRICGEN_LAB names no real lab inventory (containerlab with cEOS, SONiC-VS, Cumulus "
                           "VX, NX-OSv): the device targets of tests/targets stand in for them in the other tests")
    inventory = Path(named)
    inventory = inventory.parent if inventory.is_file() else inventory
    intent = Path(os.environ.get("FABRICGEN_LAB_INTENT") or ROOT / "intent" / "mixed.yaml")
    listed = fabricgen(tmp_path, (intent, inventory), "diff", "--format", "json")
    round_trip(tmp_path, (intent, inventory), set(devices(listed)))


def round_trip(tmp_path: Path, inputs: tuple[Path, Path], names: set[str]) -> None:
    """diff → push in waves → diff (nothing left) → rollback → diff (as before the push)."""
    before = fabricgen(tmp_path, inputs, "diff", "--format", "json")
    assert before.returncode in (0, 2), before.stderr
    assert set(states(before)) == names
    assert set(states(before).values()) <= {"changes", "unchanged"}

    # The SONiC leaves' QoS changes bounce their ports (GCU): the round trip allows it, as a drained fabric would.
    pushed = fabricgen(tmp_path, inputs, "push", "--yes", "--allow-disruptive", "--canary", "1", "--batch", "50%",
                       "--confirm-timeout", str(CONFIRM_S), "--format", "json")
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    changed = {name for name, state in states(before).items() if state == "changes"}
    assert states(pushed) == {name: "confirmed" if name in changed else "unchanged" for name in names}

    after = fabricgen(tmp_path, inputs, "diff", "--format", "json")
    assert after.returncode == 0, after.stdout + after.stderr
    assert set(states(after).values()) == {"unchanged"}

    # Rollback names the ports it bounces before it runs (GCU again), and goes on under --allow-disruptive.
    undone = fabricgen(tmp_path, inputs, "rollback", "--yes", "--allow-disruptive", "--format", "json")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert {line for line in undone.stderr.splitlines() if "admin-down" in line} == {
        f"{name}: the rollback takes {', '.join(device['bounced'])} admin-down and up again (SONiC GCU)"
        for name, device in devices(before).items() if device["bounced"]}  # the ports the push bounced
    assert states(undone) == {name: "restored" for name in changed}
    again = fabricgen(tmp_path, inputs, "diff", "--format", "json")
    assert {name: device["diff"] for name, device in devices(again).items()} == \
        {name: device["diff"] for name, device in devices(before).items()}

    runs = json.loads(fabricgen(tmp_path, inputs, "runs", "--format", "json").stdout)
    assert [run["command"].split()[0] for run in runs] == ["push", "rollback"]


def test_a_switch_refusing_its_change_halts_the_push_in_its_wave(
        fabric: tuple[Lab, dict[str, str]], tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    lab, hosts = fabric
    # leaf1's platform reports it cannot run RS-FEC on Ethernet0 (SONiC STATE_DB PORT_TABLE, in the switch's Redis):
    # GCU would refuse the rendered `fec: rs`, so the driver refuses before anything is sent.
    state_db = redis.Redis(unix_socket_path=str(lab.state_dir(hosts["leaf1"]) / "redis.sock"), db=6,
                           decode_responses=True)
    state_db.hset("PORT_TABLE|Ethernet0", "supported_fecs", "none")
    sonic_before = {name: running(lab, hosts[name]) for name in SONIC}

    done = fabricgen(tmp_path, inputs, "push", "--yes", "--allow-disruptive", "--canary", "0", "--batch", "100%",
                     "--workers", "1", "--confirm-timeout", str(CONFIRM_S), "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    result = devices(done)
    assert result["leaf1"]["state"] == "failed" and "nothing was changed" in result["leaf1"]["message"]
    # Waves go GPU hosts → leaves → spines → the rest: the hosts' wave was confirmed and stays; in leaf1's wave the
    # devices before it were reverted (one worker: name order), those after it never started; later waves untouched.
    assert {name: result[name]["state"] for name in HOSTS} == {name: "confirmed" for name in HOSTS}
    assert {name: result[name]["state"] for name in ("leaf2", "leaf3", "leaf4")} == \
        {name: "untouched" for name in ("leaf2", "leaf3", "leaf4")}
    assert {name: result[name]["state"] for name in ("spine1", "spine2", "oob1")} == \
        {name: "untouched" for name in ("spine1", "spine2", "oob1")}
    # No switch left changed: the SONiC ones read on the switch (their CONFIG_DB in its Redis; their diff would sort
    # four ports for minutes), the others by their own diff.
    assert {name: running(lab, hosts[name]) for name in SONIC} == sonic_before
    check = fabricgen(tmp_path, inputs, "diff", "--format", "json", "--filter", "!role=gpu-host&!platform=sonic")
    assert states(check) == {name: "changes" for name in SWITCHES if name not in SONIC}, "a switch was left changed"
