"""Switch commit fates on the lab's switch targets: each switch keeps its own record of what became of each commit
(confirmed, reverted by its timer, reverted, restore-failed), which `runs --verify`, `push --resume` and
`rollback` read back instead of trusting the journal's last line; and SONiC's confirm saves first, then stops
the timer, under the switch's lock.

The SONiC target runs sonic-utilities' own generic_config_updater over a real Redis CONFIG_DB (tests/targets/
sonic.py): every commit here is the smallest patch there is (one port's MTU, nothing GCU's sorter has to order
around a port bounce), so each case costs a dry run, an apply and at most one rollback. The NVUE target is
tests/targets/nvue.py (NVUE's revisions, history and confirm timer), the NX-OS one tests/targets/nxos.py, the EOS
one tests/targets/eos.py (EOS's config sessions, commit timer and checkpoints over eAPI). What each switch holds is
read on the switch (its Redis, /etc/sonic, its fabricgen state directory, the targets' state), never only through
the driver under test.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import napalm
import pytest
from fabric_lab import MIXED_KINDS, write_inputs
from napalm.base.exceptions import CommitError, ConnectionException
from pyeapi.eapilib import CommandError  # type: ignore[import-untyped]
from test_deploy_sonic import require_target, running, saved_text

from fabricgen.deploy.journal import Journal, candidate_path, read_run
from fabricgen.deploy.rollback import rollback_run
from fabricgen.models.inventory import Device, Inventory

from lab import Lab
from test_lab import require_lab

ROOT = Path(__file__).resolve().parent.parent
sonic = importlib.import_module("targets.sonic")
nvue = importlib.import_module("targets.nvue")
nxos = importlib.import_module("targets.nxos")
eos = importlib.import_module("targets.eos")

STATE = "/var/lib/fabricgen"
SONIC_MTU = json.dumps({"PORT": {"Ethernet0": {"mtu": "9216"}}})  # the smallest patch: one field, no port bounced
TIMER_S = 10
REVERT_WAIT_S = TIMER_S + 120  # the switch's timer, then GCU's rollback (no sort: one field) on a loaded machine


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    """The NVUE, NX-OS and EOS switches."""
    require_lab()
    with Lab.up(3, prefix=f"sf{os.getpid()}", kinds=["nvue", "nxos", "eos"]) as built:
        yield built


@pytest.fixture(scope="module")
def sonic_lab(sonic_yang_models: Path) -> Iterator[Lab]:  # the SONiC target validates against the vendor data
    """The SONiC switch (sonic-utilities' GCU from the vendor data: conftest.py)."""
    require_lab()
    require_target()
    with Lab.up(1, prefix=f"ss{os.getpid()}", kinds=["sonic"]) as built:
        yield built


def host_of(lab: Lab, platform: str) -> str:
    return next(name for name, host in lab.hosts.items() if host.platform == platform)


@pytest.fixture
def switch(sonic_lab: Lab) -> str:
    """The SONiC switch, as freshly installed with 202411."""
    lab = sonic_lab
    host = host_of(lab, "sonic")
    lab.reset(host)
    lab.run(host, "sonic-lab-reimage 202411", check=True)
    return host


def sonic_driver(lab: Lab, host: str) -> Any:
    device = napalm.get_network_driver("fabricgen_sonic")(
        lab.address(host), "root", None, timeout=30,
        optional_args={"key_file": str(lab.key_file), "known_hosts": str(lab.known_hosts)})
    device.open()
    return device


def on_switch(lab: Lab, host: str, path: str) -> str | None:
    """A file of the switch's fabricgen state, read on the switch; None when absent."""
    found = lab.inside(host, f"{STATE}/{path}")
    return found.read_text().strip() if found.exists() else None


def timer_alive(lab: Lab, host: str, commit: str) -> bool:
    """The commit's revert timer (a setsid sleeper: the lab runs no systemd) is still a live process, not a zombie
    (the lab's hosts share this machine's PID namespace)."""
    pid = on_switch(lab, host, f"commits/{commit}/timer.pid")
    if not pid:
        return False
    try:
        stat = Path(f"/proc/{int(pid.split()[0])}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead, only not yet reaped


def mtu(lab: Lab, host: str) -> str:
    return str(running(lab, host)["PORT"]["Ethernet0"]["mtu"])


def wait_for(condition: Callable[[], object], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.5)


def journaled_run(root: Path, run_id: str, device: str, candidate: str, ending: str = "") -> None:
    """What `push` journals of a run that committed `device`: killed before it journaled an ending for it, or
    (`ending`) with that ending and the run's end."""
    journal = Journal(root, run_id)
    journal.write("run-start", command="push", seq=1, plan={"devices": [device]})
    journal.save(candidate_path(device), candidate)
    journal.write("committing", device, commit_id=run_id)
    journal.write("committed", device, commit_id=run_id, diff="(the run's diff)", snapshot=None, links_up=[])
    if ending:
        journal.write(ending, device, message="")
        journal.write("run-end", exit_code=0)
    journal.close()


def verified(root: Path, run_id: str, inputs: tuple[Path, Path]) -> tuple[int, dict[str, Any]]:
    """`fabricgen runs RUN --verify --format json`, as the user runs it: (exit status, devices)."""
    intent, inventory = inputs
    done = subprocess.run([sys.executable, "-m", "fabricgen", "runs", run_id, "--verify", "--format", "json",
                           "--journal", str(root), "--intent", str(intent), "-i", str(inventory)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode in (0, 3), done.stdout + done.stderr
    devices: dict[str, Any] = json.loads(done.stdout)["devices"]
    return done.returncode, devices


@pytest.fixture
def inputs(lab: Lab, tmp_path: Path) -> tuple[Path, Path]:
    """intent/mixed.yaml and inventory/mixed with leaf2 the lab's EOS switch and every other device its NVUE
    switch: only the devices a run journaled are ever contacted (leaf3 or leaf2 here), and no address outside the
    lab is named."""
    hosts = {**dict.fromkeys(MIXED_KINDS, host_of(lab, "nvue")), "leaf2": host_of(lab, "eos")}
    return write_inputs(lab, hosts, tmp_path / "inputs")


def inventory_of(lab: Lab, host: str, name: str, platform: str, target: Any) -> Inventory:
    """An inventory naming the lab's switch `host` as `name`, reached as the lab's inventories reach it."""
    device = Device.model_validate({"name": name, "hostname": lab.address(host), "platform": platform,
                                    "data": {"role": "leaf"}, **target.lab_connection(lab, host)})
    return Inventory(devices={name: device}, links=[])


# --- SONiC: the confirm saves first, then stops the timer -------------------------------------------------

def test_a_sonic_confirm_whose_save_fails_keeps_the_commit_pending_with_its_timer_then_confirms_saved(
        sonic_lab: Lab, switch: str) -> None:
    lab = sonic_lab
    before, saved = running(lab, switch), saved_text(lab, switch)
    device = sonic_driver(lab, switch)
    try:
        device.load_replace_candidate(config=SONIC_MTU)
        device.commit_config(message="fate-1", revert_in=600)
        assert mtu(lab, switch) == "9216" and on_switch(lab, switch, "pending") == "fate-1"
        # config save cannot write the startup config (its rename onto a directory fails): a real failed save
        lab.run(switch, "mv /etc/sonic/config_db.json /root/startup.json && mkdir /etc/sonic/config_db.json",
                check=True)
        with pytest.raises(CommitError, match=r"confirm failed: config save failed \(.*\); the commit is still "
                                              r"pending and its timer reverts it unless a confirm succeeds"):
            device.confirm_own("fate-1")
        # read on the switch: still pending, its timer alive, nothing recorded as confirmed
        assert on_switch(lab, switch, "pending") == "fate-1" and timer_alive(lab, switch, "fate-1")
        assert on_switch(lab, switch, "commits/fate-1/fate") is None
        assert on_switch(lab, switch, "commits/fate-1/confirmed") is None
        assert device.commit_fate("fate-1") == "pending"
        with pytest.raises(CommitError, match="commit fate-1 of another run is pending, not this one"):
            device.confirm_own("fate-0")  # another run's confirm never confirms this one
        assert on_switch(lab, switch, "pending") == "fate-1"

        lab.run(switch, "rmdir /etc/sonic/config_db.json && mv /root/startup.json /etc/sonic/config_db.json",
                check=True)
        device.confirm_own("fate-1")
        fate = device.commit_fate("fate-1")
    finally:
        device.close()
    assert fate == "confirmed" == on_switch(lab, switch, "commits/fate-1/fate")
    assert on_switch(lab, switch, "pending") is None and not timer_alive(lab, switch, "fate-1")
    after = running(lab, switch)
    assert after["PORT"]["Ethernet0"]["mtu"] == "9216" and json.loads(saved_text(lab, switch)) == after
    assert json.loads(saved) == before  # (what the switch started from)


def test_a_sonic_timer_that_fires_after_the_confirms_save_rolls_back_and_saves_again_and_rollback_says_so(
        sonic_lab: Lab, switch: str, tmp_path: Path) -> None:
    """The confirm saved, then died before it stopped the timer (the controller killed between the two): the
    timer still owns the commit, rolls it back, and saves again, so a reboot does not bring it back. Rollback of
    that run then reads the switch's record: already reverted by its timer, not drifted."""
    lab = sonic_lab
    before, saved = running(lab, switch), saved_text(lab, switch)
    device = sonic_driver(lab, switch)
    try:
        device.load_replace_candidate(config=SONIC_MTU)
        device.commit_config(message="fate-2", revert_in=TIMER_S)
    finally:
        device.close()
    # What confirm_own does before it stops the timer, done on the switch: the save and its mark.
    lab.run(switch, f"config save -y && echo saved > {STATE}/commits/fate-2/confirmed", check=True)
    assert json.loads(saved_text(lab, switch))["PORT"]["Ethernet0"]["mtu"] == "9216"

    wait_for(lambda: on_switch(lab, switch, "commits/fate-2/fate"), "the switch's timer", REVERT_WAIT_S)

    assert on_switch(lab, switch, "commits/fate-2/fate") == "reverted-by-timer"
    assert running(lab, switch) == before and saved_text(lab, switch) == saved  # saved again, as before
    assert on_switch(lab, switch, "pending") is None
    root = tmp_path / "runs"
    journaled_run(root, "fate-2", "leaf1", SONIC_MTU)
    code, outcomes = rollback_run(read_run(root, "fate-2"), root, inventory_of(lab, switch, "leaf1", "sonic", sonic),
                                  [], force=False, yes=True, workers=1, ask=lambda question: False)
    assert code == 0
    assert (outcomes["leaf1"].state, outcomes["leaf1"].message) == (
        "restored", "already reverted by its timer (the device's own record)")
    assert running(lab, switch) == before


def slow_pending_sync(lab: Lab, host: str) -> None:
    """`sync` of the pending mark takes two seconds on `host`: a window, after the switch marked the commit
    pending and before it answers, in which the test cuts the link (a stand-in earlier in PATH, the real sync
    after)."""
    lab.run(host, "printf '%s\\n' '#!/bin/bash' "
                  "'for a; do [[ $a == */pending ]] && sleep 2; done' 'exec /usr/bin/sync \"$@\"' "
                  "> /usr/local/bin/sync && chmod +x /usr/local/bin/sync", check=True)


def test_a_sonic_apply_reaching_the_switch_after_its_timer_fired_is_refused(sonic_lab: Lab, switch: str) -> None:
    lab = sonic_lab
    before, saved = running(lab, switch), saved_text(lab, switch)
    slow_pending_sync(lab, switch)
    device = sonic_driver(lab, switch)
    try:
        device.load_replace_candidate(config=SONIC_MTU)
        with contextlib.ExitStack() as link:
            def cut_when_marked() -> bool:
                if on_switch(lab, switch, "pending") != "fate-3":
                    return False
                lab.run(switch, "ip link set dev eth0 down", check=True)
                link.callback(lambda: lab.run(switch, "ip link set dev eth0 up", check=True))
                return True

            failure: list[BaseException] = []

            def commit() -> None:
                try:
                    device.commit_config(message="fate-3", revert_in=TIMER_S)
                except BaseException as exc:  # the refusal, read below
                    failure.append(exc)

            committing = threading.Thread(target=commit)
            committing.start()
            wait_for(cut_when_marked, "the pending mark", 300)
            wait_for(lambda: on_switch(lab, switch, "commits/fate-3/fate"), "the switch's timer", REVERT_WAIT_S)
        committing.join(300)
        assert not committing.is_alive()
    finally:
        device.close()
    assert len(failure) == 1 and isinstance(failure[0], CommitError), failure
    assert "its revert timer fired before the apply reached the switch, so the apply was refused" in str(failure[0])
    assert on_switch(lab, switch, "commits/fate-3/fate") == "reverted-by-timer"
    assert running(lab, switch) == before and saved_text(lab, switch) == saved
    assert on_switch(lab, switch, "pending") is None and on_switch(lab, switch, "last") is None


# --- NVUE: fates from NVUE's own revisions and history, and the run's record in the login's home ------------

@pytest.fixture(scope="module")
def leaf3(mixed_rendered: Path) -> str:
    """leaf3's nvue.yaml as `fabricgen render` writes it from the bundled mixed example."""
    return (mixed_rendered / "leaf3" / "nvue.yaml").read_text()


@pytest.fixture
def cumulus(lab: Lab) -> str:
    """The NVUE switch, rebuilt: its starting configuration applied and saved, nothing pending."""
    host = host_of(lab, "nvue")
    lab.reset(host)
    return host


def nvue_driver(lab: Lab, host: str) -> Any:
    device = napalm.get_network_driver("fabricgen_nvue")(
        lab.address(host), "root", None, optional_args={"key_file": str(lab.key_file),
                                                        "known_hosts": str(lab.known_hosts)})
    device.open()
    return device


def nvue_state(lab: Lab, host: str) -> dict[str, Any]:
    """The NVUE target's revisions, history and pending confirm, read on the switch."""
    found: dict[str, Any] = nvue.read_state(lab.state_dir(host))
    return found


def nvue_fate(lab: Lab, host: str, run: str) -> str | None:
    found = lab.inside(host, f"/root/.fabricgen/commits/{run}/fate")
    return found.read_text().strip() if found.exists() else None


def test_an_nvue_apply_its_confirm_timer_rolled_back_reads_reverted_by_its_timer_and_rollback_says_so(
        lab: Lab, cumulus: str, leaf3: str, tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    startup = nvue.applied_config(lab.state_dir(cumulus))
    device = nvue_driver(lab, cumulus)
    try:
        device.load_replace_candidate(config=leaf3)
        device.commit_config(message="fate-4", revert_in=TIMER_S)
        assert device.commit_fate("fate-4") == "pending"
        wait_for(lambda: nvue_state(lab, cumulus)["confirm"] is None, "NVUE's confirm timer", TIMER_S + 60)
        fate = device.commit_fate("fate-4")
    finally:
        device.close()
    assert fate == "reverted-by-timer"
    assert nvue_state(lab, cumulus)["history"][-1]["reason"] == "Confirm timeout rollback"  # the target's words
    assert nvue_fate(lab, cumulus, "fate-4") is None  # NVUE's timer, not fabricgen, reverted it
    root = tmp_path / "runs"
    journaled_run(root, "fate-4", "leaf3", leaf3)
    # The journal stops at `committed` (the controller gave up, or died); the switch knows how it ended.
    assert verified(root, "fate-4", inputs) == (0, {"leaf3": {"journal": "committed", "on_device": "reverted-by-timer",
                                                              "agrees": True}})
    code, outcomes = rollback_run(read_run(root, "fate-4"), root, inventory_of(lab, cumulus, "leaf3", "nvue", nvue),
                                  [], force=False, yes=True, workers=1, ask=lambda question: False)
    assert (code, outcomes["leaf3"].state, outcomes["leaf3"].message) == (
        0, "restored", "already reverted by its timer (the device's own record)")
    assert nvue.applied_config(lab.state_dir(cumulus)) == startup


def test_an_nvue_confirm_records_confirmed_only_for_its_own_run_and_a_rollback_records_reverted_once(
        lab: Lab, cumulus: str, leaf3: str, tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    startup = nvue.applied_config(lab.state_dir(cumulus))
    device = nvue_driver(lab, cumulus)
    try:
        device.load_replace_candidate(config=leaf3)
        device.commit_config(message="fate-5", revert_in=120)
        with pytest.raises(CommitError, match="the apply waiting for its confirm is 'fabricgen-fate-5', not this "
                                              "run's"):
            device.confirm_own("fate-0")
        assert nvue_state(lab, cumulus)["confirm"] is not None  # still waiting: not confirmed by another run
        device.confirm_own("fate-5")
    finally:
        device.close()
    assert nvue_fate(lab, cumulus, "fate-5") == "confirmed" and nvue_state(lab, cumulus)["confirm"] is None
    confirmed = nvue.applied_config(lab.state_dir(cumulus))
    assert confirmed != startup
    root = tmp_path / "runs"
    journaled_run(root, "fate-5", "leaf3", leaf3)
    inventory = inventory_of(lab, cumulus, "leaf3", "nvue", nvue)
    # Another controller's journal says the run confirmed leaf3 (it did); the rollbacks below are this one's.
    journaled_run(tmp_path / "theirs", "fate-5", "leaf3", leaf3, ending="confirmed")
    assert verified(tmp_path / "theirs", "fate-5", inputs) == (0, {"leaf3": {
        "journal": "confirmed", "on_device": "confirmed", "agrees": True}})

    first = rollback_run(read_run(root, "fate-5"), root, inventory, [], force=False, yes=True, workers=1,
                         ask=lambda question: False)
    applies = len(nvue_state(lab, cumulus)["history"])
    second = rollback_run(read_run(root, "fate-5"), root, inventory, [], force=False, yes=True, workers=1,
                          ask=lambda question: False)

    assert (first[0], first[1]["leaf3"].state) == (0, "restored")
    assert first[1]["leaf3"].message == "reads back as before the run"
    assert nvue_fate(lab, cumulus, "fate-5") == "reverted"
    assert nvue.applied_config(lab.state_dir(cumulus)) == startup
    assert (second[0], second[1]["leaf3"].message) == (0, "already reverted (the device's own record)")
    assert len(nvue_state(lab, cumulus)["history"]) == applies  # the second rollback applied nothing
    # The other controller's journal still says confirmed: --verify says the switch disagrees, exit 3.
    assert verified(tmp_path / "theirs", "fate-5", inputs) == (3, {"leaf3": {
        "journal": "confirmed", "on_device": "reverted", "agrees": False}})


def test_an_nvue_confirm_checks_the_apply_is_its_own_under_the_switch_lock_in_the_same_step(
        lab: Lab, cumulus: str, leaf3: str) -> None:
    """The confirm's check ("the apply waiting is this run's") and the confirm are one shell under fabricgen's lock
    on the switch: while the confirm waits for that lock, the run's timer fires and another apply comes to wait
    for its confirm; once the lock is free, the confirm refuses it rather than confirming another's apply."""
    device = nvue_driver(lab, cumulus)
    holder = "/tmp/nvue-lock-holder.pid"
    try:
        device.load_replace_candidate(config=leaf3)
        device.commit_config(message="fate-10", revert_in=TIMER_S)
        lab.run(cumulus, f"mkdir -p /root/.fabricgen && setsid -f bash -c 'echo $$ > {holder}; "
                         "exec flock /root/.fabricgen/lock sleep 600' </dev/null >/dev/null 2>&1", check=True)
        wait_for(lambda: lab.inside(cumulus, holder).exists(), "the lock holder", 30)
        failure: list[BaseException] = []

        def confirm() -> None:
            try:
                device.confirm_own("fate-10")
            except BaseException as exc:  # the refusal, read below
                failure.append(exc)

        confirming = threading.Thread(target=confirm)
        confirming.start()
        try:
            wait_for(lambda: nvue_state(lab, cumulus)["confirm"] is None, "NVUE's confirm timer", TIMER_S + 40)
            # Another controller's apply, made by hand on the switch (not under fabricgen's lock), now waits.
            lab.run(cumulus, "nv config attach applied -y && nv config apply --confirm 300s -y -m fabricgen-other",
                    check=True)
            assert nvue_state(lab, cumulus)["confirm"] is not None
        finally:
            lab.run(cumulus, f"kill -- -$(cat {holder})", check=True)  # flock and its sleep
            confirming.join(120)
        assert not confirming.is_alive()
        fate = device.commit_fate("fate-10")
    finally:
        device.close()
    assert len(failure) == 1 and isinstance(failure[0], CommitError), failure
    assert "confirm failed: the apply waiting for its confirm is 'fabricgen-other', not this run's" in str(failure[0])
    # Read on the switch: the other apply still waits for its own confirm, and nothing recorded fate-10 confirmed.
    state = nvue_state(lab, cumulus)
    assert state["confirm"] is not None and state["revisions"][state["confirm"]["rev"]]["message"] == "fabricgen-other"
    assert nvue_fate(lab, cumulus, "fate-10") is None and fate == "reverted-by-timer"


# --- NX-OS: a TLS failure says why, on one line -------------------------------------------------------------

def test_an_nxos_login_whose_certificate_does_not_verify_says_why_on_one_line(lab: Lab) -> None:
    host = host_of(lab, "nxos")
    wait_for(lambda: nxos.lab_ready(lab, host), "the NX-API server", 30)
    options = nxos.napalm_optional_args(lab.state_dir(host), lab.key_file, lab.known_hosts)
    options["ssl_verify"] = True  # the system's CAs: they do not know the lab switch's certificate
    device = napalm.get_network_driver("fabricgen_nxos")(lab.address(host), nxos.LAB_USERNAME, nxos.LAB_PASSWORD,
                                                         timeout=10, optional_args=options)
    with pytest.raises(ConnectionException) as refused:
        device.open()
    message = str(refused.value)
    assert message.startswith(f"{lab.address(host)}: NX-API over HTTPS port 443: TLS: certificate verify failed: ")
    assert message.endswith("(optional_args ssl_verify: the CA bundle or the switch's own certificate)")
    assert "\n" not in message and "Cannot connect" not in message and len(message) < 300, message
    assert nxos.LAB_PASSWORD not in message
    pinned = napalm.get_network_driver("fabricgen_nxos")(
        lab.address(host), nxos.LAB_USERNAME, nxos.LAB_PASSWORD, timeout=10,
        optional_args=nxos.napalm_optional_args(lab.state_dir(host), lab.key_file, lab.known_hosts))
    pinned.open()  # the switch's own certificate pinned: the same switch answers
    pinned.close()


# --- NX-OS: fates from config-replace status, and the run's record on bootflash: --------------------------

def nxos_driver(lab: Lab, host: str) -> Any:
    device = napalm.get_network_driver("fabricgen_nxos")(
        lab.address(host), nxos.LAB_USERNAME, nxos.LAB_PASSWORD, timeout=30,
        optional_args=nxos.napalm_optional_args(lab.state_dir(host), lab.key_file, lab.known_hosts))
    device.open()
    return device


def bootflash(lab: Lab, host: str, name: str) -> str | None:
    """A file of the NX-OS switch's bootflash:, read on the switch (the target's state directory)."""
    found = lab.state_dir(host) / "bootflash" / name
    return found.read_text().strip() if found.exists() else None


def test_an_nxos_commit_reads_confirmed_reverted_and_reverted_by_its_commit_timeout_from_the_switch(
        lab: Lab, mixed_rendered: Path, tmp_path: Path) -> None:
    host = host_of(lab, "nxos")
    lab.reset(host)
    wait_for(lambda: nxos.lab_ready(lab, host), "the NX-API server", 30)
    leaf4 = (mixed_rendered / "leaf4" / "nxos.cfg").read_text()
    before = (lab.state_dir(host) / "running-config").read_text()
    device = nxos_driver(lab, host)
    try:
        device.load_replace_candidate(config=leaf4)
        device.commit_config(message="fate-6", revert_in=30)
        assert device.commit_fate("fate-6") == "pending"
        with pytest.raises(CommitError, match="commit fate-6 of another run is pending, not this one"):
            device.confirm_own("fate-0")
        device.confirm_own("fate-6")
        assert device.commit_fate("fate-6") == "confirmed"
    finally:
        device.close()
    assert bootflash(lab, host, "fabricgen-fate-6.fate") == "confirmed"
    assert bootflash(lab, host, "fabricgen-fate-6.cfg") is None  # the confirm removed its candidate
    root = tmp_path / "runs"
    journaled_run(root, "fate-6", "leaf4", leaf4)
    inventory = inventory_of(lab, host, "leaf4", "nxos", nxos)
    first = rollback_run(read_run(root, "fate-6"), root, inventory, [], force=False, yes=True, workers=1,
                         ask=lambda question: False)
    assert (first[0], first[1]["leaf4"].state) == (0, "restored"), first[1]["leaf4"].message
    assert bootflash(lab, host, "fabricgen-fate-6.fate") == "reverted"
    assert (lab.state_dir(host) / "running-config").read_text() == before

    # A second commit its commit-timeout rolls back (NX-OS's shortest: 30 s).
    device = nxos_driver(lab, host)
    try:
        device.load_replace_candidate(config=leaf4)
        device.commit_config(message="fate-7", revert_in=30)
    finally:
        device.close()
    wait_for(lambda: (lab.state_dir(host) / "running-config").read_text() == before, "the commit-timeout", 30 + 30)
    journaled_run(root, "fate-7", "leaf4", leaf4)
    second = rollback_run(read_run(root, "fate-7"), root, inventory, [], force=False, yes=True, workers=1,
                          ask=lambda question: False)
    assert (second[0], second[1]["leaf4"].message) == (0, "already reverted by its timer (the device's own record)")
    assert bootflash(lab, host, "fabricgen-fate-7.fate") is None  # the switch's own timer: no record of fabricgen's
    assert (lab.state_dir(host) / "running-config").read_text() == before


# --- EOS: fates from EOS's session list and the record checkpoints saved with each step -------------------

@pytest.fixture(scope="module")
def leaf2(mixed_rendered: Path) -> str:
    """leaf2's eos.cfg as `fabricgen render` writes it from the bundled mixed example."""
    return (mixed_rendered / "leaf2" / "eos.cfg").read_text()


@pytest.fixture
def arista(lab: Lab) -> str:
    """The EOS switch as new: its starting config, no session, no checkpoint."""
    host = host_of(lab, "eos")
    lab.reset(host)
    wait_for(lambda: eos.lab_ready(lab, host), "the eAPI server", 30)
    return host


def eos_driver(lab: Lab, host: str) -> Any:
    device = napalm.get_network_driver("fabricgen_eos")(
        lab.address(host), eos.LAB_USER, eos.LAB_PASSWORD, timeout=30,
        optional_args={"ca_file": str(lab.state_dir(host) / "ca.pem")})
    device.open()
    return device


def eos_running(lab: Lab, host: str) -> str:
    return (lab.state_dir(host) / "running-config").read_text()


def eos_records(lab: Lab, host: str, run: str) -> set[str]:
    """The run's record checkpoints, read on the switch (its checkpoint: store)."""
    return {path.name.rpartition(".")[2] for path in (lab.state_dir(host) / "checkpoints").glob(f"fabricgen-{run}.*")}


def eos_session_state(lab: Lab, host: str, run: str) -> str | None:
    sessions: dict[str, Any] = json.loads((lab.state_dir(host) / "sessions.json").read_text())
    state = sessions.get(f"fabricgen-{run}", {}).get("state")
    return None if state is None else str(state)


def eos_replaces(lab: Lab, host: str) -> int:
    """How many `configure replace` and session aborts the switch has run (its eAPI call log)."""
    calls = (lab.host_dir(host) / "nic" / "tool-calls.jsonl").read_text().splitlines()
    commands = [command for call in calls for command in json.loads(call).get("cmds", [])]
    return sum(command.startswith("configure replace") or (command.startswith("configure session")
                                                           and command.endswith(" abort")) for command in commands)


def eos_rollback(lab: Lab, host: str, root: Path, run: str) -> tuple[int, dict[str, Any]]:
    return rollback_run(read_run(root, run), root, inventory_of(lab, host, "leaf2", "eos", eos), [], force=False,
                        yes=True, workers=1, ask=lambda question: False)


def test_an_eos_commit_reads_confirmed_then_reverted_from_the_switch_and_a_second_rollback_changes_nothing(
        lab: Lab, arista: str, leaf2: str, tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    before = eos_running(lab, arista)
    device = eos_driver(lab, arista)
    try:
        device.load_replace_candidate(config=leaf2)
        device.commit_config(message="fate-8", revert_in=120)
        assert device.commit_fate("fate-8") == "pending"
        # What push --resume does with the interrupted run's pending commit: revert it, then commit again under
        # the same run id, whose earlier records go first.
        device.revert("fate-8")
        assert device.commit_fate("fate-8") == "reverted" and eos_running(lab, arista) == before
        assert eos_records(lab, arista, "fate-8") == {"committed", "reverted"}
        device.load_replace_candidate(config=leaf2)
        device.commit_config(message="fate-8", revert_in=120)
        assert eos_records(lab, arista, "fate-8") == {"committed"}
        assert device.commit_fate("fate-8") == "pending"
        assert eos_session_state(lab, arista, "fate-8") == "pendingCommitTimer"
        with pytest.raises(CommitError, match="commit fate-8 of another run is pending, not this one"):
            device.confirm_own("fate-0")
        assert eos_session_state(lab, arista, "fate-8") == "pendingCommitTimer"  # not confirmed by another run
        device.confirm_own("fate-8")
        assert device.commit_fate("fate-8") == "confirmed"
    finally:
        device.close()
    confirmed = eos_running(lab, arista)
    assert confirmed != before and (lab.state_dir(arista) / "startup-config").read_text() == confirmed
    assert eos_session_state(lab, arista, "fate-8") == "completed"
    assert eos_records(lab, arista, "fate-8") == {"committed", "confirmed"}
    root = tmp_path / "runs"
    journaled_run(root, "fate-8", "leaf2", leaf2)
    assert verified(root, "fate-8", inputs) == (0, {"leaf2": {"journal": "committed", "on_device": "confirmed",
                                                              "agrees": True}})

    first = eos_rollback(lab, arista, root, "fate-8")
    assert (first[0], first[1]["leaf2"].state, first[1]["leaf2"].message) == (
        0, "restored", "reads back as before the run")
    assert eos_records(lab, arista, "fate-8") == {"committed", "confirmed", "reverted"}
    assert eos_running(lab, arista) == before == (lab.state_dir(arista) / "startup-config").read_text()
    undone = eos_replaces(lab, arista)
    second = eos_rollback(lab, arista, root, "fate-8")
    assert (second[0], second[1]["leaf2"].message) == (0, "already reverted (the device's own record)")
    assert eos_replaces(lab, arista) == undone and eos_running(lab, arista) == before  # nothing undone again
    assert verified(root, "fate-8", inputs) == (0, {"leaf2": {"journal": "committed", "on_device": "reverted",
                                                              "agrees": True}})


def test_an_eos_commit_its_timer_rolled_back_reads_reverted_by_its_timer_and_the_switch_refuses_its_confirm(
        lab: Lab, arista: str, leaf2: str, tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    before = eos_running(lab, arista)
    device = eos_driver(lab, arista)
    try:
        device.load_replace_candidate(config=leaf2)
        device.commit_config(message="fate-9", revert_in=TIMER_S)
        assert eos_running(lab, arista) != before
        wait_for(lambda: eos_running(lab, arista) == before, "EOS's commit timer", TIMER_S + 60)
        assert eos_session_state(lab, arista, "fate-9") is None  # the switch ended the session itself
        assert device.commit_fate("fate-9") == "reverted-by-timer"
        with pytest.raises(CommitError, match="no commit is pending"):
            device.confirm_own("fate-9")
        # Named by hand, the session whose timer fired is refused by the switch: a late confirm changes nothing.
        with pytest.raises(CommandError, match="fabricgen-fate-9 does not exist"):
            device._run(["configure session fabricgen-fate-9 commit"])
    finally:
        device.close()
    assert eos_running(lab, arista) == before
    assert eos_records(lab, arista, "fate-9") == {"committed"}  # fabricgen recorded no confirm and no revert
    root = tmp_path / "runs"
    journaled_run(root, "fate-9", "leaf2", leaf2)
    assert verified(root, "fate-9", inputs) == (0, {"leaf2": {"journal": "committed",
                                                              "on_device": "reverted-by-timer", "agrees": True}})
    undone = eos_replaces(lab, arista)
    code, outcomes = eos_rollback(lab, arista, root, "fate-9")
    assert (code, outcomes["leaf2"].state, outcomes["leaf2"].message) == (
        0, "restored", "already reverted by its timer (the device's own record)")
    assert eos_replaces(lab, arista) == undone and eos_running(lab, arista) == before
