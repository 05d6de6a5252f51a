"""`fabricgen diff | push | rollback | runs` against the SSH lab (tests/lab.py): real OpenSSH servers in network
namespaces, the rendered scripts running on them against the NIC models, fabricgen run as the user runs it (a
subprocess of its CLI). Nothing of SSH, the shell, NAPALM's driver lookup, Nornir or the scripts is mocked.

Every check of "what the host holds" reads the host directly, never through fabricgen: the NICs as the rendered
script reads them (its --check run inside the host's namespaces, plus the veths' real MTU) and the files under the
host's own mounts. (The NIC models' state files also keep bookkeeping no tool shows -- write counters, "never
configured" beside "configured to the same values" -- and mlx5's firmware DSCP map, which no tool reads back
under PCP trust and deleting APP entries zeroes; a rollback is judged by what the tools read.) Faults are real:
the controller is killed with SIGKILL, sshd is killed, the management address moves, the host's disk is full,
a NIC tool fails half-way through an apply.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabricgen.platforms.common.hostscript import STATE_DIR

from lab import Lab
from test_lab import require_lab

CONFIRM_S = 12  # the shortest --confirm-timeout fabricgen takes is 10 s
REVERT_WAIT_S = CONFIRM_S + 20  # the host's timer, plus a loaded 2-core CI machine


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    require_lab()
    with Lab.up(4, prefix=f"d{os.getpid()}") as built:
        yield built


@pytest.fixture
def inputs(lab: Lab, tmp_path: Path) -> tuple[Path, Path]:
    """Every lab host rebuilt as new, and the intent + inventory that reach them."""
    for host in lab.hosts:
        lab.reset(host)
    return lab.write_inputs(tmp_path / "inputs")


@pytest.fixture
def scripts(tmp_path: Path, inputs: tuple[Path, Path]) -> dict[str, str]:
    """Each host's rendered NIC script, rendered by `fabricgen render` on its own."""
    out = tmp_path / "rendered"
    rendered = fabricgen(tmp_path, inputs, "render", "-o", str(out))
    assert rendered.returncode == 0, rendered.stderr
    return {path.parent.name: path.read_text() for path in out.glob("*/fabricgen-*.sh")}


@pytest.fixture
def fresh(lab: Lab, scripts: dict[str, str]) -> dict[str, Any]:
    """What each new host reads back: what a rollback or a revert must come back to."""
    return {host: readback(lab, host, scripts[host]) for host in lab.hosts}


def readback(lab: Lab, host: str, script: str) -> dict[str, Any]:
    """The host's NICs as the rendered script reads them (its --check lines) and the veths' real MTU."""
    done = lab.run(host, ["bash", "-c", script, "fabricgen-check", "--check"])
    assert done.returncode in (0, 1), done.stderr
    return {"check": [line for line in done.stdout.splitlines() if line.startswith("DIFF ")],
            "mtu": lab.nic_state(host)["mtu"]}


def fabricgen(tmp_path: Path, inputs: tuple[Path, Path], command: str, *args: str,
              timeout: float = 300) -> subprocess.CompletedProcess[str]:
    intent, inventory = inputs
    argv = [sys.executable, "-m", "fabricgen", command]
    if command in ("diff", "push", "render"):
        argv += [str(intent), "-i", str(inventory)]
    if command in ("diff", "push"):  # the lab's inventory keeps inventory/mixed's switches, which are not in it
        argv += ["--role", "gpu-host"]
    elif command == "rollback":
        argv += ["--intent", str(intent), "-i", str(inventory)]
    if command in ("push", "rollback", "runs"):
        argv += ["--journal", str(tmp_path / "runs")]
    return subprocess.run([*argv, *args], capture_output=True, text=True, timeout=timeout, check=False,
                          cwd=tmp_path)


def json_devices(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    devices: dict[str, dict[str, Any]] = json.loads(done.stdout)["devices"]
    return devices


def script_check(lab: Lab, host: str) -> int:
    """The installed script's own --check, run on the host outside fabricgen: 0 = the host holds the intent."""
    return lab.run(host, f"bash /usr/local/sbin/{lab.hosts[host].kind.script} --check").returncode


def installed(lab: Lab, host: str) -> list[str]:
    names = [f"/usr/local/sbin/{lab.hosts[host].kind.script}", "/etc/fabricgen/nccl.env"]
    return [name for name in names if lab.inside(host, name).exists()]


def host_records(lab: Lab, host: str) -> str:
    """What the host itself recorded of each commit (its fate, its revert's status line and the revert timer's
    output), read from the host's disk: shown when a test of a fault fails, so that a failure says what the host
    did."""
    commits = lab.inside(host, f"{STATE_DIR}/commits")
    shown = []
    for commit in sorted(commits.iterdir()) if commits.is_dir() else []:
        for name in ("fate", "reverted", "timer.log"):
            if (commit / name).is_file():
                shown.append(f"{host} {commit.name}/{name}: {(commit / name).read_text(errors='replace').strip()}")
    return "\n".join(shown) or f"{host}: no commit recorded under {STATE_DIR}/commits"


def wait_for(condition: Any, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.5)


def journal_events(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for path in sorted((tmp_path / "runs").glob("*/journal.jsonl"))
            for line in path.read_text().splitlines() if line.endswith("}")]


# --- diff -------------------------------------------------------------------------------------------------

def test_diff_shows_each_hosts_changes_and_leaves_no_trace(lab: Lab, tmp_path: Path, inputs: tuple[Path, Path],
                                                           scripts: dict[str, str]) -> None:
    models = {host: lab.nic_state(host) for host in lab.hosts}
    done = fabricgen(tmp_path, inputs, "diff", "--format", "json")

    assert done.returncode == 2, done.stderr  # changes pending
    devices = json_devices(done)
    assert sorted(devices) == sorted(lab.hosts)
    for host, result in devices.items():
        assert result["state"] == "changes"
        assert 'DIFF ens1f0np0 mtu: have "1500", want "9000"' in result["diff"]
        assert f"+++ /usr/local/sbin/{lab.hosts[host].kind.script} (new file" in result["diff"]
    for host in lab.hosts:
        assert lab.nic_state(host) == models[host]  # not one write: even the models' bookkeeping is unchanged
        assert not lab.inside(host, "/var/lib/fabricgen").exists()
        assert list(lab.inside(host, "/tmp").iterdir()) == []
        assert installed(lab, host) == []


def test_diff_of_an_unreachable_host_is_an_error_naming_it(lab: Lab, tmp_path: Path,
                                                           inputs: tuple[Path, Path]) -> None:
    host = sorted(lab.hosts)[0]
    lab.kill_sshd(host)

    done = fabricgen(tmp_path, inputs, "diff", "--hosts", host, "--format", "json")

    assert done.returncode == 1
    assert json_devices(done)[host]["state"] == "failed"
    assert "cannot connect" in json_devices(done)[host]["message"]


# --- push, a second push, rollback ----------------------------------------------------------------------

def test_push_confirms_every_host_then_changes_nothing_then_rolls_back(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str], fresh: dict[str, Any]) -> None:
    pushed = fabricgen(tmp_path, inputs, "push", "--yes", "--canary", "1", "--batch", "50%", "--format", "json")

    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    assert {result["state"] for result in json_devices(pushed).values()} == {"confirmed"}
    for host in lab.hosts:
        assert script_check(lab, host) == 0
        assert lab.nic_state(host)["mtu"] == {"ens1f0np0": 9000, "ens2f0np0": 9000}
        assert len(installed(lab, host)) == 2
        assert not lab.inside(host, "/var/lib/fabricgen/pending").exists()
    waves = [event["devices"] for event in journal_events(tmp_path) if event["event"] == "wave-start"]
    assert [len(wave) for wave in waves] == [1, 2, 1]

    again = fabricgen(tmp_path, inputs, "push", "--yes", "--format", "json")
    assert again.returncode == 0
    assert {result["state"] for result in json_devices(again).values()} == {"unchanged"}

    undone = fabricgen(tmp_path, inputs, "rollback", "--yes", "--format", "json")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert {result["state"] for result in json_devices(undone).values()} == {"restored"}
    for host in lab.hosts:
        assert readback(lab, host, scripts[host]) == fresh[host]
        assert installed(lab, host) == []

    listed = fabricgen(tmp_path, inputs, "runs", "--format", "json")
    assert [run["command"].split()[0] for run in json.loads(listed.stdout)] == ["push", "push", "rollback"]


def test_rollback_asks_before_undoing_a_host_that_drifted_since_the_push(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    host = sorted(lab.hosts)[0]
    assert fabricgen(tmp_path, inputs, "push", "--yes", "--hosts", host).returncode == 0
    lab.run(host, "ip link set dev ens1f0np0 mtu 4200", check=True)  # someone changed it by hand since

    refused = fabricgen(tmp_path, inputs, "rollback", "--yes", "--format", "json")
    assert refused.returncode == 1
    assert json_devices(refused)[host]["state"] == "skipped"
    assert 'DIFF ens1f0np0 mtu: have "4200", want "9000"' in json_devices(refused)[host]["diff"]
    assert lab.nic_state(host)["mtu"]["ens1f0np0"] == 4200

    forced = fabricgen(tmp_path, inputs, "rollback", "--force", "--format", "json")
    assert forced.returncode == 0
    assert lab.nic_state(host)["mtu"] == {"ens1f0np0": 1500, "ens2f0np0": 1500}


# --- faults -----------------------------------------------------------------------------------------------

def test_a_killed_controller_leaves_the_host_to_revert_itself_and_resume_finishes_the_run(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str], fresh: dict[str, Any]) -> None:
    intent, inventory = inputs
    push = subprocess.Popen([sys.executable, "-m", "fabricgen", "push", str(intent), "-i", str(inventory), "--yes",
                             "--role", "gpu-host", "--journal", str(tmp_path / "runs"),
                             "--confirm-timeout", str(CONFIRM_S), "--soak", str(CONFIRM_S - 2)], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: any(e["event"] == "committed" for e in journal_events(tmp_path)), "the canary's commit", 120)
        push.send_signal(signal.SIGKILL)
    finally:
        push.wait(10)
    canary = next(e["device"] for e in journal_events(tmp_path) if e["event"] == "committed")
    assert lab.nic_state(canary)["mtu"]["ens1f0np0"] == 9000  # committed, never confirmed

    wait_for(lambda: readback(lab, canary, scripts[canary]) == fresh[canary], f"{canary} reverting by itself",
             REVERT_WAIT_S)
    assert installed(lab, canary) == []
    run_id = next(iter(json.loads(fabricgen(tmp_path, inputs, "runs", "--format", "json").stdout)))["run_id"]

    resumed = fabricgen(tmp_path, inputs, "push", "--yes", "--resume", run_id, "--format", "json")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr + host_records(lab, canary)
    assert all(script_check(lab, host) == 0 for host in lab.hosts)


def break_roce_mode_writes(lab: Lab, host: str) -> None:
    """cma_roce_mode (the last tool of each NIC's block) fails when asked to set: an apply stops half-way."""
    lab.run(host, "set -e; cd /usr/local/bin; mkdir -p /usr/local/lib/real; "
                  "ln -sf ../fabricgen-lab/nic_tool_models /usr/local/lib/real/cma_roce_mode; rm cma_roce_mode; "
                  "printf '%s\\n' '#!/bin/bash' 'for a; do [[ $a == -m ]] && { echo refused >&2; exit 1; }; done' "
                  "'exec /usr/local/lib/real/cma_roce_mode \"$@\"' > cma_roce_mode; chmod +x cma_roce_mode",
            check=True)


def test_a_host_failing_half_way_is_undone_and_halts_its_wave(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str], fresh: dict[str, Any]) -> None:
    cx = sorted(name for name, host in lab.hosts.items() if host.platform == "connectx")
    broken, later = cx[0], cx[1]  # one wave, one device at a time: the broken one first
    break_roce_mode_writes(lab, broken)
    broken_before = readback(lab, broken, scripts[broken])

    done = fabricgen(tmp_path, inputs, "push", "--yes", "--hosts", f"{broken},{later}", "--canary", "0",
                     "--batch", "100%", "--workers", "1", "--format", "json")

    assert done.returncode == 1, done.stdout + done.stderr
    devices = json_devices(done)
    assert devices[broken]["state"] == "failed" and "previous state was restored" in devices[broken]["message"]
    assert devices[later]["state"] == "untouched" and "halted" in devices[later]["message"]
    assert readback(lab, broken, scripts[broken]) == broken_before
    assert readback(lab, later, scripts[later]) == fresh[later]
    assert installed(lab, broken) == installed(lab, later) == []


@pytest.mark.parametrize("fault", ["sshd killed", "management address moved"])
def test_a_host_lost_after_its_commit_needs_attention_and_reverts_itself(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str], fresh: dict[str, Any],
        fault: str) -> None:
    host = sorted(lab.hosts)[0]
    intent, inventory = inputs
    push = subprocess.Popen([sys.executable, "-m", "fabricgen", "push", str(intent), "-i", str(inventory), "--yes",
                             "--role", "gpu-host", "--hosts", host, "--journal", str(tmp_path / "runs"),
                             "--format", "json", "--confirm-timeout", str(CONFIRM_S), "--soak", "6"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    wait_for(lambda: any(e["event"] == "committed" for e in journal_events(tmp_path)), "the commit", 120)
    if fault == "sshd killed":
        lab.kill_sshd(host)
    else:
        lab.change_address(host, lab.spare_address())
    stdout, _ = push.communicate(timeout=300)

    assert push.returncode == 3, stdout
    result = json.loads(stdout)["devices"][host]
    assert result["state"] == "attention" and "timer reverts it" in result["message"]
    wait_for(lambda: readback(lab, host, scripts[host]) == fresh[host], f"{host} reverting by itself", REVERT_WAIT_S)


def test_a_full_disk_on_the_host_stops_its_push_before_anything_changes(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str], fresh: dict[str, Any]) -> None:
    host = sorted(lab.hosts)[0]
    lab.run(host, "mkdir -p /var/lib/fabricgen", check=True)
    lab.fill_disk(host)

    done = fabricgen(tmp_path, inputs, "push", "--yes", "--hosts", host, "--format", "json")

    assert done.returncode == 1, done.stdout + done.stderr
    assert json_devices(done)[host]["state"] == "failed"
    message = json_devices(done)[host]["message"]
    assert "nothing was changed" in message and "No space left on device" in message
    assert readback(lab, host, scripts[host]) == fresh[host]
    assert installed(lab, host) == []
