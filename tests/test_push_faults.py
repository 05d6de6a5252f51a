"""Faults of the operator's choosing against `fabricgen push`, `push --resume` and `rollback`, on the SSH lab
(tests/lab.py: real OpenSSH servers in network namespaces running the rendered scripts against the NIC models).

Each test injects a real fault -- the controller killed with SIGKILL right after a chosen journal line (the
FABRICGEN_STOP_AFTER_EVENT hook), the host's management link down while it applies or confirms, a NIC tool that
fails from its Nth write, two pushes at once, a rollback racing a push, the controller's clock an hour behind,
damaged journals, a reboot in the confirm window -- and then reads each host ON the host (its NICs as the rendered
script reads them, the files installed, the boot unit's link, the commit's own fate record), never only
fabricgen's journal: every host holds either what it held before or the whole new intent, never a mix, and the
journal, `fabricgen runs` and the exit status say the same.

One lab for the module (two hosts: a ConnectX and a linux-dcb one); a test rebuilds only the hosts it uses.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_deploy_lab import installed, journal_events, json_devices, readback, script_check, wait_for

from fabricgen.cli.common import fail
from fabricgen.cli.deploy import headline
from fabricgen.deploy.journal import JournalLocked, escape, fabric_lock, read_run
from fabricgen.deploy.nornir_run import nornir_for, run_each
from fabricgen.deploy.outcome import Outcome
from fabricgen.deploy.progress import Lines
from fabricgen.models.inventory import Device

from lab import HOST_LAB_DIR, Lab, init_models
from test_lab import require_lab

CONFIRM_S = 12  # the shortest --confirm-timeout fabricgen takes is 10 s
REVERT_WAIT_S = CONFIRM_S + 25  # the host's timer, plus a loaded 2-core CI machine
STATE = "/var/lib/fabricgen"


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    require_lab()
    with Lab.up(2, prefix=f"pf{os.getpid()}") as built:
        yield built


@pytest.fixture
def inputs(lab: Lab, tmp_path: Path) -> tuple[Path, Path]:
    return lab.write_inputs(tmp_path / "inputs")


@pytest.fixture
def scripts(tmp_path: Path, inputs: tuple[Path, Path]) -> dict[str, str]:
    out = tmp_path / "rendered"
    rendered = run(tmp_path, inputs, "render", "-o", str(out))
    assert rendered.returncode == 0, rendered.stderr
    return {path.parent.name: path.read_text() for path in out.glob("*/fabricgen-*.sh")}


def fresh_host(lab: Lab, host: str, script: str) -> dict[str, Any]:
    """`host` rebuilt as new; what it reads back then (what every undo must come back to)."""
    lab.reset(host)
    return readback(lab, host, script)


def run(tmp_path: Path, inputs: tuple[Path, Path], command: str, *args: str, journal: str = "runs",
        env: dict[str, str] | None = None, wait: bool = True, timeout: float = 300) -> Any:
    """fabricgen as the user runs it: a subprocess of its CLI (Popen when not `wait`)."""
    intent, inventory = inputs
    argv = [sys.executable, "-m", "fabricgen", command]
    if command in ("diff", "push", "render"):
        argv += [str(intent), "-i", str(inventory)]
    if command in ("diff", "push"):
        argv += ["--role", "gpu-host"]
    if command == "rollback":
        argv += ["--intent", str(intent), "-i", str(inventory)]
    if command in ("push", "rollback", "runs"):
        argv += ["--journal", str(tmp_path / journal)]
    full_env = {**os.environ, **(env or {})}
    if not wait:
        return subprocess.Popen([*argv, *args], cwd=tmp_path, env=full_env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    return subprocess.run([*argv, *args], capture_output=True, text=True, timeout=timeout, check=False,
                          cwd=tmp_path, env=full_env)


def unit_enabled(lab: Lab, host: str) -> bool:
    unit = lab.hosts[host].kind.script.replace(".sh", ".service")
    return lab.inside(host, f"/etc/systemd/system/multi-user.target.wants/{unit}").is_symlink()


def held(lab: Lab, host: str, script: str, before: dict[str, Any]) -> str:
    """What `host` holds, read on the host: "old" (as before the push: NICs, no fabricgen files, no boot unit
    enabled), "new" (every setting as intended and the files installed), else "MIXED ..." with what was read."""
    reading, files = readback(lab, host, script), installed(lab, host)
    if reading == before and not files:
        return "old"
    if not reading["check"] and len(files) == 2 and script_check(lab, host) == 0:
        return "new"
    return f"MIXED: {reading} files={files} unit={unit_enabled(lab, host)}"


def fate(lab: Lab, host: str, run_id: str) -> str | None:
    """The commit's fate as the host recorded it (its own file, read on the host)."""
    path = lab.inside(host, f"{STATE}/commits/{run_id}/fate")
    return path.read_text().strip() if path.exists() else None


def pending(lab: Lab, host: str) -> str:
    path = lab.inside(host, f"{STATE}/pending")
    return path.read_text().strip() if path.exists() else ""


def run_ids(tmp_path: Path, inputs: tuple[Path, Path], journal: str = "runs") -> list[dict[str, Any]]:
    listed = run(tmp_path, inputs, "runs", "--format", "json", journal=journal)
    assert listed.returncode == 0, listed.stderr
    runs: list[dict[str, Any]] = json.loads(listed.stdout)
    return runs


# --- the controller killed right after each journal line --------------------------------------------------

@pytest.mark.parametrize("event", ["run-start", "wave-start", "committing", "committed", "confirming", "confirmed"])
def test_a_controller_killed_after_each_journal_line_leaves_old_or_new_and_resume_and_rollback_agree(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str], event: str) -> None:
    host = sorted(lab.hosts)[len(event) % 2]  # both platforms over the six trials
    before = fresh_host(lab, host, scripts[host])

    killed = run(tmp_path, inputs, "push", "--yes", "--hosts", host, "--confirm-timeout", "600",
                 env={"FABRICGEN_STOP_AFTER_EVENT": event})

    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    now = held(lab, host, scripts[host], before)
    assert now in ("old", "new"), now
    [interrupted] = run_ids(tmp_path, inputs)
    assert interrupted["exit_code"] is None
    run_id = interrupted["run_id"]
    expected_fate = {"committed": "pending", "confirming": "pending", "confirmed": "confirmed"}.get(event)
    assert fate(lab, host, run_id) == (None if expected_fate == "pending" else expected_fate)
    assert (pending(lab, host) == run_id) == (expected_fate == "pending")
    assert now == ("new" if expected_fate else "old")

    resumed = run(tmp_path, inputs, "push", "--yes", "--hosts", host, "--resume", run_id, "--format", "json")

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    if event == "confirmed":  # the journal already says so: nothing left to do
        assert json_devices(resumed) == {}
    else:
        assert json_devices(resumed)[host]["state"] == "confirmed"
    assert held(lab, host, scripts[host], before) == "new"
    assert fate(lab, host, run_id) == "confirmed" and not pending(lab, host)
    assert unit_enabled(lab, host)

    undone = run(tmp_path, inputs, "rollback", run_id, "--yes", "--format", "json")

    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert json_devices(undone)[host]["state"] == "restored"
    assert held(lab, host, scripts[host], before) == "old"
    assert fate(lab, host, run_id) == "reverted"
    assert not unit_enabled(lab, host)


def test_rollback_after_a_kill_between_confirm_and_its_journal_line_restores_the_confirmed_host(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    """The issue's lost device: the host confirmed, the controller died before journaling it. Rollback asks
    the host (its fate record), not the journal's last line."""
    host = sorted(lab.hosts)[0]
    before = fresh_host(lab, host, scripts[host])
    killed = run(tmp_path, inputs, "push", "--yes", "--hosts", host, env={"FABRICGEN_STOP_AFTER_EVENT": "confirming"})
    assert killed.returncode == -signal.SIGKILL
    # The confirm the dead controller never sent, sent by hand as it would have been: the host is confirmed
    # and the journal's last line for it is still `confirming`.
    lab.run(host, f"id=$(cat {STATE}/pending); d={STATE}/commits/$id; read -r pid boot < $d/timer.pid; "
                  f"kill -- -$pid; rm {STATE}/pending; echo confirmed > $d/fate", check=True)
    assert held(lab, host, scripts[host], before) == "new"

    undone = run(tmp_path, inputs, "rollback", "--yes", "--format", "json")

    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert json_devices(undone)[host]["state"] == "restored"
    assert held(lab, host, scripts[host], before) == "old"


# --- two runs at once -----------------------------------------------------------------------------------

@contextlib.contextmanager
def paused(process: subprocess.Popen[str]) -> Iterator[None]:
    """The run stopped (SIGSTOP) where it is, its locks and its on-host pending commit held, then let go: the race
    is decided by the test, not by how fast a loaded machine starts the other run. Its on-host confirm timer (300 s
    by default) keeps running, so the pause is short."""
    process.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        process.send_signal(signal.SIGCONT)


def test_a_second_push_and_a_rollback_wait_out_a_running_push_naming_it(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    host = sorted(lab.hosts)[0]
    before = fresh_host(lab, host, scripts[host])
    first = run(tmp_path, inputs, "push", "--yes", "--hosts", host, "--soak", "8", "--format", "json", wait=False)
    wait_for(lambda: any(e["event"] == "committed" for e in journal_events(tmp_path)), "the first push's commit",
             120)
    first_id = run_ids(tmp_path, inputs)[0]["run_id"]

    with paused(first):  # the first push holds its lock, committed and unconfirmed, however slow the others start
        second = run(tmp_path, inputs, "push", "--yes", "--hosts", host)
        racing = run(tmp_path, inputs, "rollback", "--yes")
    stdout, _ = first.communicate(timeout=300)

    for refused in (second, racing):
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "nothing was done: another fabricgen run holds" in refused.stderr
        assert f"run {first_id} (pid {first.pid} on " in refused.stderr
    assert first.returncode == 0, stdout
    assert json.loads(stdout)["devices"][host]["state"] == "confirmed"
    assert held(lab, host, scripts[host], before) == "new" and fate(lab, host, first_id) == "confirmed"
    assert [r["run_id"] for r in run_ids(tmp_path, inputs)] == [first_id]  # the refused runs journaled nothing


def test_two_controllers_with_their_own_journals_never_both_mark_a_host(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    """Two operators on two machines (two journals, so no shared lock): the host's own check-and-mark of its
    pending commit, one step under its lock, lets one commit in; the other changes nothing."""
    host = sorted(lab.hosts)[1]
    before = fresh_host(lab, host, scripts[host])
    first = run(tmp_path, inputs, "push", "--yes", "--hosts", host, "--soak", "8", "--format", "json", wait=False,
                journal="runs")
    wait_for(lambda: bool(pending(lab, host)), "the first push's pending commit", 120)
    first_id = pending(lab, host)

    with paused(first):  # its commit stays pending on the host while the second operator pushes
        second = run(tmp_path, inputs, "push", "--yes", "--hosts", host, "--format", "json", journal="other")
    stdout, _ = first.communicate(timeout=300)

    assert second.returncode == 1, second.stdout + second.stderr
    result = json_devices(second)[host]
    assert result["state"] == "failed"
    assert result["message"].startswith(f"CommitError: {host}: nothing was changed: ")
    assert f"commit {first_id} of another run is waiting for its confirm" in result["message"]
    assert first.returncode == 0, stdout
    assert held(lab, host, scripts[host], before) == "new" and fate(lab, host, first_id) == "confirmed"
    second_id = run_ids(tmp_path, inputs, journal="other")[0]["run_id"]
    assert fate(lab, host, second_id) is None  # its undo was staged, then the host refused to mark it


# --- the management link lost in the apply and in the confirm window ------------------------------------

def slow_pending_sync(lab: Lab, host: str) -> None:
    """`sync` of the pending mark takes two seconds on `host`: a window, after the host marked the commit pending
    and before it answers, in which the test cuts the link (a stand-in earlier in PATH, the real sync after)."""
    lab.run(host, "printf '%s\\n' '#!/bin/bash' "
                  "'for a; do [[ $a == */pending ]] && sleep 2; done' 'exec /usr/bin/sync \"$@\"' "
                  "> /usr/local/bin/sync && chmod +x /usr/local/bin/sync", check=True)


def link(lab: Lab, host: str, state: str) -> None:
    lab.run(host, f"ip link set dev eth0 {state}", check=True)


def test_an_apply_reaching_the_host_after_its_timer_fired_is_refused(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    host = sorted(lab.hosts)[0]
    before = fresh_host(lab, host, scripts[host])
    slow_pending_sync(lab, host)
    push = run(tmp_path, inputs, "push", "--yes", "--hosts", host, "--confirm-timeout", "10", "--format", "json",
               wait=False)
    wait_for(lambda: bool(pending(lab, host)), "the pending mark", 120)
    run_id = pending(lab, host)
    link(lab, host, "down")  # the host's answer, and the apply after it, wait in TCP's retransmissions
    try:
        wait_for(lambda: fate(lab, host, run_id) == "reverted-by-timer", "the host's timer", REVERT_WAIT_S)
    finally:
        link(lab, host, "up")
    stdout, _ = push.communicate(timeout=300)

    assert push.returncode == 1, stdout
    result = json.loads(stdout)["devices"][host]
    assert result["state"] == "failed"
    assert "its revert timer fired before the apply reached the host" in result["message"]
    assert held(lab, host, scripts[host], before) == "old"
    assert not pending(lab, host)
    assert fate(lab, host, run_id) == "reverted-by-timer"


def test_a_link_lost_for_the_whole_confirm_window_ends_as_the_host_recorded_it(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    host = sorted(lab.hosts)[1]
    before = fresh_host(lab, host, scripts[host])
    push = run(tmp_path, inputs, "push", "--yes", "--hosts", host, "--confirm-timeout", str(CONFIRM_S),
               "--format", "json", wait=False)
    try:
        wait_for(lambda: any(e["event"] == "confirming" for e in journal_events(tmp_path)), "the confirm", 120)
    except BaseException:
        push.kill()
        pytest.fail(f"the push never reached its confirm: {push.communicate(timeout=30)}")
    link(lab, host, "down")
    run_id = run_ids(tmp_path, inputs)[0]["run_id"]
    try:
        wait_for(lambda: fate(lab, host, run_id) is not None, "the host's own ending", REVERT_WAIT_S)
    finally:
        link(lab, host, "up")
    stdout, _ = push.communicate(timeout=300)

    result = json.loads(stdout)["devices"][host]
    ended = fate(lab, host, run_id)
    if ended == "confirmed":  # the confirm reached the host before the link went
        assert (push.returncode, result["state"]) == (0, "confirmed")
        assert held(lab, host, scripts[host], before) == "new"
    else:
        assert ended == "reverted-by-timer"
        assert (push.returncode, result["state"]) == (1, "reverted"), stdout
        assert "reverted by its timer" in result["message"]
        assert held(lab, host, scripts[host], before) == "old"
    shown = run(tmp_path, inputs, "runs", run_id, "--format", "json")
    assert json_devices(shown)[host]["state"] == result["state"]


# --- a NIC tool failing mid-apply and mid-restore -------------------------------------------------------

def fail_writes_from(lab: Lab, host: str, tool: str, nth: int) -> None:
    """`tool` (a ConnectX NIC tool model) refuses every write -- a call with more than `-i IFNAME` -- from its
    `nth` on: an apply stops half-way, and the restore that follows fails too."""
    lab.run(host, "set -e; mkdir -p /usr/local/lib/real; "
                  f"ln -sf ../fabricgen-lab/nic_tool_models /usr/local/lib/real/{tool}; rm /usr/local/bin/{tool}; "
                  "printf '%s\\n' '#!/bin/bash' "
                  f"'if (( $# > 2 )); then n=$(( $(cat /tmp/{tool}.writes 2>/dev/null || echo 0) + 1 )); "
                  f"echo $n > /tmp/{tool}.writes; (( n < {nth} )) || "
                  f"{{ echo \"{tool}: device busy\" >&2; exit 1; }}; fi' "
                  f"'exec /usr/local/lib/real/{tool} \"$@\"' > /usr/local/bin/{tool}; chmod +x /usr/local/bin/{tool}",
            check=True)


def heal(lab: Lab, host: str, tool: str) -> None:
    lab.run(host, f"rm /usr/local/bin/{tool} && ln -s ../lib/fabricgen-lab/nic_tool_models /usr/local/bin/{tool}",
            check=True)


def test_a_restore_that_fails_too_needs_attention_naming_what_did_not_come_back(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    host = next(name for name, item in sorted(lab.hosts.items()) if item.platform == "connectx")
    before = fresh_host(lab, host, scripts[host])
    fail_writes_from(lab, host, "mlnx_qos", 3)

    done = run(tmp_path, inputs, "push", "--yes", "--hosts", host, "--format", "json")

    assert done.returncode == 3, done.stdout + done.stderr
    result = json_devices(done)[host]
    assert result["state"] == "attention"
    first, *rest = result["message"].splitlines()
    assert re.fullmatch(r"RESTORE FAILED: [1-9]\d* setting\(s\) did not come back:", first), first
    count = int(first.split()[2])
    listed = rest[:count]
    assert all(": have " in line or "reads as intended" in line for line in listed), listed
    # What the message lists is what the host shows changed: each listed setting differs from before.
    now = readback(lab, host, scripts[host])
    assert now != before
    changed = {line.split(":")[0].removeprefix("DIFF ") for line in set(before["check"]) ^ set(now["check"])}
    assert {line.split(":")[0] for line in listed} == changed
    run_id = run_ids(tmp_path, inputs)[0]["run_id"]
    assert fate(lab, host, run_id) == "restore-failed"

    heal(lab, host, "mlnx_qos")
    undone = run(tmp_path, inputs, "rollback", "--yes", "--format", "json")

    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert json_devices(undone)[host]["state"] == "restored"
    assert held(lab, host, scripts[host], before) == "old"


# --- the controller's clock behind ------------------------------------------------------------------------

CLOCK_BEHIND = """
import runpy, sys, time
real_time, real_gmtime = time.time, time.gmtime
time.time = lambda: real_time() - 3600
time.gmtime = lambda seconds=None: real_gmtime(time.time() if seconds is None else seconds)
sys.argv = ["fabricgen", *sys.argv[1:]]
runpy.run_module("fabricgen", run_name="__main__")
"""


def test_with_the_clock_behind_the_last_push_is_still_the_last_and_rollback_undoes_it(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    host = sorted(lab.hosts)[0]
    fresh_host(lab, host, scripts[host])
    first = run(tmp_path, inputs, "push", "--yes", "--hosts", host)
    assert first.returncode == 0, first.stderr
    first_state = readback(lab, host, scripts[host])
    lower_mtu(inputs)
    intent, inventory = inputs
    behind = subprocess.run([sys.executable, "-c", CLOCK_BEHIND, "push", str(intent), "-i", str(inventory),
                             "--role", "gpu-host", "--hosts", host, "--yes", "--journal", str(tmp_path / "runs")],
                            capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
    assert behind.returncode == 0, behind.stdout + behind.stderr
    assert lab.nic_state(host)["mtu"]["ens1f0np0"] == 8000

    listed = run_ids(tmp_path, inputs)
    assert listed[0]["started"] > listed[1]["started"]  # the clock says the second push came first
    second_id = listed[-1]["run_id"]
    undone = run(tmp_path, inputs, "rollback", "--yes", "--format", "json")

    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert json.loads(undone.stdout)["run_id"] == second_id
    assert lab.nic_state(host)["mtu"]["ens1f0np0"] == 9000
    assert readback(lab, host, scripts[host]) == first_state


def lower_mtu(inputs: tuple[Path, Path]) -> None:
    intent = inputs[0]
    text = intent.read_text()
    assert "  host: 9000" in text
    intent.write_text(text.replace("  host: 9000", "  host: 8000", 1))


# --- a reboot in the confirm window, with the boot unit enabled ------------------------------------------

def boot(lab: Lab, host: str) -> subprocess.CompletedProcess[str]:
    """What a reboot does to `host` as far as fabricgen is concerned: every process of the old boot is gone (the
    revert timer too), the NICs come up with the driver's defaults, and systemd runs each enabled unit's
    ExecStart ("$$" is a literal "$" in a unit file, systemd.service(5))."""
    kind = lab.hosts[host].kind
    unit = lab.inside(host, f"/etc/systemd/system/{kind.script.replace('.sh', '.service')}").read_text()
    command = re.search(r"^ExecStart=(.*)$", unit, re.MULTILINE)
    assert command is not None
    lab.run(host, f"for f in {STATE}/commits/*/timer.pid; do read -r pid boot < $f && kill -- -$pid; done; true")
    init_models(kind, [lab.state_dir(host)])
    lab.run(host, "for n in ens1f0np0 ens2f0np0; do ip link set dev $n mtu 1500; done", check=True)
    if not unit_enabled(lab, host):
        return subprocess.CompletedProcess([], 0, "", "")
    return lab.run(host, command.group(1).replace("$$", "$"))


def test_a_reboot_in_the_confirm_window_reverts_at_boot_and_never_signals_an_old_pid(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    host = sorted(lab.hosts)[1]
    fresh_host(lab, host, scripts[host])
    assert run(tmp_path, inputs, "push", "--yes", "--hosts", host).returncode == 0
    assert unit_enabled(lab, host)
    confirmed = readback(lab, host, scripts[host])
    lower_mtu(inputs)
    killed = run(tmp_path, inputs, "push", "--yes", "--hosts", host, "--confirm-timeout", "600",
                 env={"FABRICGEN_STOP_AFTER_EVENT": "committed"})
    assert killed.returncode == -signal.SIGKILL
    second_id = pending(lab, host)
    assert lab.nic_state(host)["mtu"]["ens1f0np0"] == 8000

    booted = boot(lab, host)

    assert booted.returncode == 0, booted.stdout + booted.stderr
    assert lab.nic_state(host)["mtu"] == {"ens1f0np0": 9000, "ens2f0np0": 9000}
    assert readback(lab, host, scripts[host]) == confirmed
    assert fate(lab, host, second_id) == "reverted-at-boot" and not pending(lab, host)
    assert unit_enabled(lab, host)  # the confirmed push's unit stays


def test_a_timer_pid_from_another_boot_is_never_signalled(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    host = sorted(lab.hosts)[0]
    fresh_host(lab, host, scripts[host])
    push = run(tmp_path, inputs, "push", "--yes", "--hosts", host, "--soak", "6", "--format", "json", wait=False)
    wait_for(lambda: bool(pending(lab, host)), "the pending commit", 120)
    run_id = pending(lab, host)
    timer_pid = lab.inside(host, f"{STATE}/commits/{run_id}/timer.pid")
    wait_for(lambda: timer_pid.exists() and timer_pid.read_text().strip(), "the timer's pid", 30)
    real_pid = int(timer_pid.read_text().split()[0])
    # The PID as a previous boot would have left it, now another process's: a bystander in a group of its own
    # (the lab's hosts share the machine's PID namespace, so the PID means the same inside and out).
    bystander = subprocess.Popen(["setsid", "sleep", "300"])
    try:
        lab.run(host, f"echo '{bystander.pid} 00000000-0000-0000-0000-0000000000b0' > "
                      f"{STATE}/commits/{run_id}/timer.pid", check=True)
        stdout, _ = push.communicate(timeout=300)
        assert push.returncode == 0, stdout
        assert bystander.poll() is None  # alive: not signalled
    finally:
        bystander.kill()
        bystander.wait(10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(real_pid, signal.SIGKILL)  # the real timer, which the confirm could no longer find
    assert fate(lab, host, run_id) == "confirmed"


# --- damaged journals ---------------------------------------------------------------------------------------

DAMAGE = {
    "cut mid-character": b'{"at": "2026-12-04T10:00:00Z", "event": "run-start", "command": "push", "plan": {"devi\xc3',
    "not an object": b'[1, 2, 3]\n',
    "no event": b'{"at": "x"}\n',
    "event of the wrong type": b'{"at": "x", "event": 7}\n',
    "plan of the wrong type": b'{"at": "x", "event": "run-start", "plan": "all"}\n',
    "device of the wrong type": b'{"at": "x", "event": "committed", "device": ["a"]}\n',
    "exit code of the wrong type": b'{"at": "x", "event": "run-end", "exit_code": "zero"}\n',
    "seconds of the wrong type": b'{"at": "x", "event": "confirmed", "device": "n", "seconds": "slow"}\n',
    "not UTF-8": b'\xff\xfe{"event": "run-start"}\n',
    "a NUL": b'{"at": "x", "event": "run-start"}\x00\n',
    "deeply nested": b'{"event": "run-start", "plan": ' + b"[" * 100000 + b"]" * 100000 + b"}\n",
    "an escape sequence": b'{"at": "x", "event": "run-start", "command": "push \\u001b[2J\\u001b]0;owned\\u0007"}\n',
}


def test_damaged_journals_are_reported_and_never_block_rolling_back_a_good_run(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    host = sorted(lab.hosts)[1]
    before = fresh_host(lab, host, scripts[host])
    assert run(tmp_path, inputs, "push", "--yes", "--hosts", host).returncode == 0
    for number, data in enumerate(DAMAGE.values()):
        damaged = tmp_path / "runs" / f"29991231T2359{number:02d}Z-{number:06x}"
        damaged.mkdir()
        (damaged / "journal.jsonl").write_bytes(data)
    fifo = tmp_path / "runs" / "29991231T235999Z-ffffff"
    fifo.mkdir()
    os.mkfifo(fifo / "journal.jsonl")

    listed = run(tmp_path, inputs, "runs", timeout=60)
    as_json = run(tmp_path, inputs, "runs", "--format", "json", timeout=60)
    # A hang guard, not a speed bound: a rollback over the lab on a loaded runner has taken over 120 s.
    undone = run(tmp_path, inputs, "rollback", "--yes", "--format", "json", timeout=600)

    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "Traceback" not in listed.stderr and "\x1b" not in listed.stdout
    words = listed.stdout.split()  # the note column wraps in a narrow pipe; run ids never do
    assert "29991231T235999Z-ffffff" in words and "damaged," in words
    damage = {run["run_id"]: run["damage"] for run in json.loads(as_json.stdout)}
    assert damage["29991231T235999Z-ffffff"] == ["journal.jsonl is not a regular file: ignored"]
    assert damage["29991231T235900Z-000000"] == ["line 1: cut short (the run was killed while writing it)"]
    assert sum(1 for notes in damage.values() if notes) == 11  # all but the two well-formed lines, + FIFO
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert json_devices(undone)[host]["state"] == "restored"
    assert held(lab, host, scripts[host], before) == "old"


def test_runs_prints_whole_run_ids_when_piped(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    for number in range(3):
        run_dir = root / f"20261204T1000{number:02d}Z-abcde{number}"
        run_dir.mkdir(parents=True)
        (run_dir / "journal.jsonl").write_text(json.dumps({"at": "2026-12-04T10:00:00Z", "event": "run-start",
                                                           "command": "push", "plan": {"devices": ["n1"]}}) + "\n")
    listed = subprocess.run([sys.executable, "-m", "fabricgen", "runs", "--journal", str(root)], capture_output=True,
                            text=True, timeout=60, check=False, env={**os.environ, "COLUMNS": "40"})
    assert listed.returncode == 0, listed.stderr
    for number in range(3):
        assert f"20261204T1000{number:02d}Z-abcde{number}" in listed.stdout.split()


# --- the journal on its own (no lab) ----------------------------------------------------------------------

def test_the_journal_lock_names_its_holder_and_a_fifo_in_its_place_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    with fabric_lock(root, "20261204T100000Z-aaaaaa", "push"), pytest.raises(JournalLocked) as held_by, \
            fabric_lock(root, "20261204T100001Z-bbbbbb", "rollback"):
        pytest.fail("two runs held one journal's lock")
    assert str(held_by.value) == (
        f"another fabricgen run holds {root}/: push run 20261204T100000Z-aaaaaa (pid {os.getpid()} on "
        f"{socket.gethostname()}, started {str(held_by.value).split('started ')[1].split(')')[0]}); wait for it "
        "to finish (`fabricgen runs` shows it)")
    with fabric_lock(root, "20261204T100002Z-cccccc", "push"):  # released when the first run ended
        pass
    (root / ".lock").unlink()
    os.mkfifo(root / ".lock")
    with pytest.raises(JournalLocked, match=r"\.lock is not a regular file: remove it"), \
            fabric_lock(root, "20261204T100003Z-dddddd", "push"):
        pass


def test_each_damaged_journal_line_is_reported_and_the_good_ones_still_count(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "20261204T100000Z-aaaaaa"
    run_dir.mkdir(parents=True)
    good = [{"at": "2026-12-04T10:00:00Z", "event": "run-start", "command": "push", "seq": 4,
             "plan": {"devices": ["n1", "n2"]}},
            {"at": "2026-12-04T10:00:01Z", "event": "committing", "device": "n1",
             "commit_id": "20261204T100000Z-aaaaaa"}]
    damaged = [data if data.endswith(b"\n") else data + b"\n" for data in DAMAGE.values()]
    lines = damaged + [json.dumps(event).encode() + b"\n" for event in good]
    (run_dir / "journal.jsonl").write_bytes(b"".join(lines) + b'{"at": "2026-12-04T10:00:02Z", "event": "confi')

    record = read_run(tmp_path / "runs", "20261204T100000Z-aaaaaa")

    assert (record.command, record.seq) == ("push", 4)
    assert sorted(record.devices) == ["n", "n1", "n2"]  # "n": a well-formed event whose seconds are not a number
    assert record.devices["n"].seconds == 0
    assert record.devices["n1"].state == "committing" and record.changed == ["n1"]
    assert record.damage == [
        "line 1: not UTF-8", "line 2: not a journal event", "line 3: not a journal event",
        "line 4: not a journal event", "line 5: plan is of the wrong type", "line 6: a device that is not a name",
        "line 7: exit_code is of the wrong type", "line 9: not UTF-8", "line 10: not a JSON line",
        "line 11: nested too deeply", f"line {len(lines) + 1}: cut short (the run was killed while writing it)"]
    assert not record.complete  # a damaged run-end does not finish a run
    assert "\x1b" not in record.command


def test_device_text_reaches_the_terminal_with_its_control_characters_escaped(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert escape("leaf1\x1b[2J\x1b]0;owned\x07 ok\n\tnext\r") == "leaf1\\x1b[2J\\x1b]0;owned\\x07 ok\n\tnext\\r"
    # A command's error line (what fail() prints on stderr) carries device text too: a host name, a reason.
    with pytest.raises(SystemExit):
        fail("leaf1\x1b]0;owned\x07: cannot connect: \x1b[2J[bold]refused[/bold]")
    printed = capsys.readouterr().err
    assert "\x1b" not in printed and "\x07" not in printed
    assert "leaf1\\x1b]0;owned\\x07: cannot connect: \\x1b[2J[bold]refused[/bold]" in printed
    lines = Lines()
    lines.device("leaf2\x1b[31m", "confirmed")
    assert capsys.readouterr().err == "  leaf2\\x1b[31m: confirmed\n"


def test_the_push_table_shows_one_line_per_device_with_its_own_reason_first() -> None:
    """The table's detail column: the device's own words first, without the exception class or the device's name
    repeated; a long message is cut with where to read it whole (the journal and --format json keep it)."""
    refused = Outcome("node1", "failed", message="CommitError: node1: nothing was changed: commit 20261204T100000Z-"
                                                 "aaaaaa of another run is waiting for its confirm; let that run "
                                                 "finish (or roll it back) first")
    assert headline("node1", refused) == ("nothing was changed: commit 20261204T100000Z-aaaaaa of another run is "
                                          "waiting for its confirm; let that run finish (or roll it back) first")
    restore = Outcome("node2", "attention", message="RESTORE FAILED: 1 setting(s) did not come back:\n"
                                                    'ens1f0np0 pfc: have "x", was "y"\napplying failed')
    assert headline("node2", restore) == "RESTORE FAILED: 1 setting(s) did not come back:"
    long = Outcome("node3", "failed", message="ConnectionException: " + "x" * 500 + "\x1b[2J")
    assert headline("node3", long) == "x" * 300 + " ... (whole message: `fabricgen runs RUN --format json`)"


def test_a_device_step_that_raises_prints_no_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    """Nornir logs a failed task's traceback at ERROR; fabricgen reports the reason itself, one line per device
    (issue 22: raw Nornir tracebacks for unreachable hosts). The step raises before any connection is made."""
    device = Device.model_validate({"name": "x1", "hostname": "127.0.0.1", "platform": "connectx",
                                    "data": {"role": "gpu-host"}})

    def step(task: Any) -> dict[str, Any]:
        raise RuntimeError("x1: cannot connect: Connection refused")

    results = run_each(nornir_for([device], 1), ["x1"], step)

    assert results == {"x1": {"error": "RuntimeError: x1: cannot connect: Connection refused"}}
    assert "Traceback" not in capsys.readouterr().err


# --- a device step that stalls past its deadline -----------------------------------------------------------

def hold_host_lock(lab: Lab, host: str) -> None:
    """A hung fabricgen step of earlier on `host` (a process holding the host's lock): every step of a push there
    waits for it (up to two minutes each), so the device's whole step stalls."""
    lab.run(host, f"mkdir -p {STATE} && setsid -f bash -c 'echo $$ > /tmp/holder.pid; "
                  f"exec flock {STATE}/lock sleep 600' </dev/null >/dev/null 2>&1", check=True)
    wait_for(lambda: lab.inside(host, "/tmp/holder.pid").exists(), "the lock holder", 30)


def test_a_device_stalled_past_the_step_deadline_needs_attention_and_does_not_hold_its_wave(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    stalled, other = sorted(lab.hosts)
    before = {host: fresh_host(lab, host, scripts[host]) for host in (stalled, other)}
    hold_host_lock(lab, stalled)

    # 45 s: long enough for the healthy device's whole step on a loaded runner (the deadline is every device's);
    # its timer 30 s: its commit, health check and confirm on a runner at load 15 outlasted 10 s
    done = run(tmp_path, inputs, "push", "--yes", "--hosts", f"{stalled},{other}", "--canary", "2",
               "--step-deadline", "45", "--confirm-timeout", "30", "--format", "json")

    assert done.returncode == 3, done.stdout + done.stderr
    devices = json_devices(done)
    assert devices[stalled]["state"] == "attention"
    # The deadline, not the host lock's own 120 s wait (which would end in a lock message), ended its step.
    assert "its step passed its deadline of 45 s (--step-deadline)" in devices[stalled]["message"]
    assert devices[other]["state"] == "confirmed", devices  # the same wave, not held
    assert held(lab, other, scripts[other], before[other]) == "new"
    run_id = run_ids(tmp_path, inputs)[0]["run_id"]
    # On the host: the abandoned step's shell still waits for the lock; once the hung holder goes, it marks the
    # commit pending and arms its timer, and the timer reverts it (nothing was applied: its apply never came).
    lab.run(stalled, "kill -- -$(cat /tmp/holder.pid)", check=True)  # flock and its sleep (both hold it)
    wait_for(lambda: fate(lab, stalled, run_id) is not None, "the stalled host's own ending", 30 + REVERT_WAIT_S)
    assert fate(lab, stalled, run_id) == "reverted-by-timer" and not pending(lab, stalled)
    assert held(lab, stalled, scripts[stalled], before[stalled]) == "old"
    shown = run(tmp_path, inputs, "runs", run_id, "--format", "json")
    assert json_devices(shown)[stalled]["state"] == "attention"  # the abandoned step's later words are ignored


def test_a_device_stalled_past_the_step_deadline_in_a_rollback_needs_attention_and_does_not_hold_the_others(
        lab: Lab, tmp_path: Path, inputs: tuple[Path, Path], scripts: dict[str, str]) -> None:
    stalled, other = sorted(lab.hosts)  # the stalled one first: with one worker, the other waits behind it
    before = {host: fresh_host(lab, host, scripts[host]) for host in (stalled, other)}
    pushed = run(tmp_path, inputs, "push", "--yes", "--hosts", f"{stalled},{other}", "--canary", "2",
                 "--format", "json")
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    assert [held(lab, host, scripts[host], before[host]) for host in (stalled, other)] == ["new", "new"]
    run_id = run_ids(tmp_path, inputs)[0]["run_id"]
    hold_host_lock(lab, stalled)  # its revert script waits up to 120 s for the host's lock

    undone = run(tmp_path, inputs, "rollback", run_id, "--yes", "--workers", "1", "--step-deadline", "45",
                 "--format", "json")

    assert undone.returncode == 3, undone.stdout + undone.stderr
    devices = json_devices(undone)
    assert devices[stalled]["state"] == "attention"
    # The deadline, not the revert's own two-minute wait for the lock (which ends in a lock message), ended it.
    assert devices[stalled]["message"].startswith("its restore passed its deadline of 45 s (--step-deadline)")
    assert devices[other]["state"] == "restored", devices  # run by a fresh worker, not held behind the stalled one
    assert held(lab, other, scripts[other], before[other]) == "old"
    # Read on the stalled host: nothing was undone there yet, and its record still says confirmed.
    assert held(lab, stalled, scripts[stalled], before[stalled]) == "new"
    assert fate(lab, stalled, run_id) == "confirmed"

    lab.run(stalled, "kill -- -$(cat /tmp/holder.pid)", check=True)  # the hung holder goes
    # The abandoned revert's shell may still run once the lock is free: wait until no shell of it is left.
    wait_for(lambda: lab.run(stalled, f"pgrep -f 'commits/{run_id}/revert.sh'").returncode != 0,
             "the abandoned revert's end", 150)
    again = run(tmp_path, inputs, "rollback", run_id, "--yes", "--hosts", stalled, "--format", "json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert json_devices(again)[stalled]["state"] == "restored"
    assert held(lab, stalled, scripts[stalled], before[stalled]) == "old"
    assert fate(lab, stalled, run_id) == "reverted"


# --- RDMA-CM configfs groups: recorded before they are made ------------------------------------------------

@pytest.fixture(scope="module")
def dcb_lab() -> Iterator[Lab]:
    """One linux-dcb host: its RDMA devices' RDMA-CM configfs groups do not exist until made (RoCE defaults read
    as unset), so a commit opens them to snapshot the kernel's values."""
    require_lab()
    with Lab.up(1, prefix=f"pd{os.getpid()}", kinds=["linux-dcb"]) as built:
        yield built


def rdma_cm_groups(lab: Lab, host: str) -> list[str]:
    """The host's RDMA-CM configfs groups, read on the host."""
    folder = lab.inside(host, f"{HOST_LAB_DIR}/configfs/rdma_cm")
    return sorted(path.name for path in folder.iterdir()) if folder.is_dir() else []


def test_a_controller_killed_right_after_a_commit_opened_an_rdma_cm_group_leaves_a_record_rollback_clears(
        dcb_lab: Lab, tmp_path: Path) -> None:
    lab = dcb_lab
    [host] = lab.hosts
    inputs = lab.write_inputs(tmp_path / "inputs")
    assert rdma_cm_groups(lab, host) == []
    # mkdir of a configfs group (the lab's model of it) stalls once it made it: the controller is killed then.
    lab.run(host, "mv /usr/local/bin/mkdir /usr/local/lib/mkdir.model && printf '%s\\n' '#!/bin/bash' "
                  "'/usr/local/lib/mkdir.model \"$@\" || exit' "
                  "'if [[ $* == */rdma_cm/* ]]; then echo $$ > /tmp/stalled.pid; exec sleep 600; fi' "
                  "> /usr/local/bin/mkdir && chmod +x /usr/local/bin/mkdir", check=True)
    push = run(tmp_path, inputs, "push", "--yes", "--hosts", host, "--format", "json", wait=False)
    try:
        wait_for(lambda: rdma_cm_groups(lab, host), "the first RDMA-CM group", 120)
    finally:
        push.kill()  # SIGKILL
        push.communicate(timeout=30)
    lab.run(host, "mv /usr/local/lib/mkdir.model /usr/local/bin/mkdir && kill $(cat /tmp/stalled.pid)", check=True)
    [interrupted] = run_ids(tmp_path, inputs)
    run_id = interrupted["run_id"]

    # On the host: the group the dead controller made, and the commit's record of it, written before it.
    made = rdma_cm_groups(lab, host)
    assert made == ["bnxt_re0"]
    record = lab.inside(host, f"{STATE}/commits/{run_id}/rdma-cm-opened")
    assert record.read_text().split() == made
    assert not pending(lab, host) and fate(lab, host, run_id) is None

    undone = run(tmp_path, inputs, "rollback", run_id, "--yes", "--format", "json")

    assert undone.returncode == 0, undone.stdout + undone.stderr
    result = json_devices(undone)[host]
    assert result["state"] == "unchanged"
    assert result["message"] == ("the device shows this run's commit never applied: nothing to undo; what it had "
                                 "staged there was removed")
    assert rdma_cm_groups(lab, host) == []  # read on the host: the residue is gone
    assert not lab.inside(host, f"{STATE}/commits/{run_id}").exists()


def test_a_step_stuck_past_its_deadline_is_left_behind_and_a_fresh_worker_runs_the_queued_devices() -> None:
    """DeadlineRunner with one worker: the first device's step blocks for good; at its deadline it is settled,
    the run stops waiting for it, and a new worker takes the devices queued behind it. No device is contacted."""
    import threading

    from fabricgen.deploy import deadline

    devices = [Device.model_validate({"name": f"x{n}", "hostname": "127.0.0.1", "platform": "connectx",
                                      "data": {"role": "gpu-host"}}) for n in (1, 2, 3)]
    never = threading.Event()
    stuck_step_ended = threading.Event()
    expired: list[str] = []

    def step(task: Any) -> dict[str, Any]:
        with deadline.watch(task.host.name, 1, expired.append):
            if task.host.name == "x1":
                never.wait(60)  # stuck (released when the test ends)
                stuck_step_ended.set()
            return {"ran": task.host.name}

    try:
        results = run_each(nornir_for(devices, 1), ["x1", "x2", "x3"], step)
        assert not stuck_step_ended.is_set(), "the run waited for the stuck step instead of leaving it behind"
    finally:
        never.set()
    assert expired == ["x1"]
    assert results == {"x1": {}, "x2": {"ran": "x2"}, "x3": {"ran": "x3"}}
