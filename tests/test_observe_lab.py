"""`fabricgen observe` and `fabricgen health` against the SSH lab's GPU hosts (tests/lab.py): real OpenSSH, the
host command run by the real shell; the counters are served on each host by tests/observe_stubs/ethtool and files
in the host's fake sysfs (FABRICGEN_SYSFS), so a test injects a fault *on the host* by changing a number there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabricgen.observe.store import History

from lab import HOST_LAB_DIR, NICS, Lab
from test_lab import require_lab

STUB = Path(__file__).parent / "observe_stubs" / "ethtool"
QUIET = {"rx_crc_errors_phy": 0, "rx_pcs_symbol_err_phy": 0, "rx_discards_phy": 0, "tx_pause_storm_error_events": 0,
         **{f"{d}_prio{p}_pause": 0 for d in ("rx", "tx") for p in range(8)},
         **{f"rx_prio{p}_{c}": 0 for p in range(8) for c in ("buf_discard", "cong_discard", "marked")}}


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    require_lab()
    with Lab.up(2, prefix=f"ob{os.getpid()}") as built:
        for host in built.hosts:
            install_stub(built, host)
        yield built


def set_counters(lab: Lab, host: str, nic: str, stats: dict[str, int], carrier: int = 1,
                 hw: dict[str, int] | None = None) -> None:
    """What the host's `ethtool -S nic`, its carrier_changes and its RDMA device's hw_counters say from now on."""
    sysfs = lab.inside(host, f"{HOST_LAB_DIR}/sys")
    lines = "".join(f"     {name}: {value}\n" for name, value in stats.items())
    (sysfs / "class" / "net" / nic / "ethtool-S").write_text("NIC statistics:\n" + lines)
    (sysfs / "class" / "net" / nic / "carrier_changes").write_text(f"{carrier}\n")
    rdma = lab.hosts[host].kind.rdma_devices[NICS.index(nic)]
    counters = sysfs / "class" / "infiniband" / rdma / "ports" / "1" / "hw_counters"
    counters.mkdir(parents=True, exist_ok=True)
    for name, value in (hw or {"np_cnp_sent": 0, "rp_cnp_handled": 0, "out_of_sequence": 0}).items():
        (counters / name).write_text(f"{value}\n")


def fabricgen(tmp_path: Path, inputs: tuple[Path, Path], command: str, *args: str) -> subprocess.CompletedProcess[str]:
    intent, inventory = inputs
    argv = [sys.executable, "-m", "fabricgen", command, str(intent), "-i", str(inventory),
            "--journal", str(tmp_path / "runs"), *args]
    if command == "observe":
        argv += ["--role", "gpu-host", "--limit", "20"]  # the lab's inventory keeps switches the lab does not have
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)


def test_observe_reads_the_hosts_and_health_names_the_fault(lab: Lab, tmp_path: Path) -> None:
    inputs = lab.write_inputs(tmp_path / "inputs")
    for host in lab.hosts:
        for nic in NICS:
            set_counters(lab, host, nic, QUIET)
    first = fabricgen(tmp_path, inputs, "observe", "--format", "json")
    assert first.returncode == 0, first.stdout + first.stderr
    devices = json.loads(first.stdout)["devices"]
    assert set(devices) == set(lab.hosts) and not any(d["error"] for d in devices.values())
    assert (tmp_path / "observe.sqlite").exists()  # beside runs/

    # On the first host: lossless priority 3 discarded on its first NIC, and that NIC's link flapped twice.
    sick = sorted(lab.hosts)[0]
    set_counters(lab, sick, NICS[0], {**QUIET, "rx_prio3_buf_discard": 42}, carrier=3)
    second = fabricgen(tmp_path, inputs, "observe")
    assert second.returncode == 0, second.stdout + second.stderr

    health = fabricgen(tmp_path, inputs, "health", "--format", "json")
    assert health.returncode == 1, health.stdout + health.stderr
    findings = [(f["rule"], f["layer"], f["device"], f["port"], f["counters"])
                for f in json.loads(health.stdout)["findings"]]
    assert findings == [("FG-OBS-201", "link", sick, NICS[0], {"carrier_transitions": 2}),
                        ("FG-OBS-202", "link", sick, NICS[0], {"prio_buffer_discards[3]": 42})]
    text = fabricgen(tmp_path, inputs, "health")
    assert f"FG-OBS-202 lossless-drops  {sick}:{NICS[0]}  prio_buffer_discards[3] +42" in text.stdout


def test_a_host_that_does_not_answer_is_named_and_the_others_still_read(lab: Lab, tmp_path: Path) -> None:
    inputs = lab.write_inputs(tmp_path / "inputs")
    for host in lab.hosts:
        for nic in NICS:
            set_counters(lab, host, nic, QUIET)
    down = sorted(lab.hosts)[1]
    lab.kill_sshd(down)
    try:
        done = fabricgen(tmp_path, inputs, "observe", "--format", "json")
    finally:
        lab.start_sshd(down)
    assert done.returncode == 3, done.stdout + done.stderr
    devices = json.loads(done.stdout)["devices"]
    assert devices[down]["error"] and devices[down]["readings"] == []
    assert all(not d["error"] and d["readings"] for name, d in devices.items() if name != down)
    assert "Traceback" not in done.stderr


def test_push_soak_reverts_the_host_whose_fec_errors_grow_and_confirms_the_quiet_one(lab: Lab,
                                                                                      tmp_path: Path) -> None:
    """Push's counter soak (fabricgen/deploy/soak.py) end to end: both hosts committed, their counters read after
    the commit; during the soak the first host's NIC starts counting symbol errors its FEC did not correct (on
    the host); that host is reverted (its script is gone again, read on the host) and the quiet one confirmed
    (its script's own --check, run on the host, matches); the run keeps both readings of each host and
    journals the soak."""
    for host in lab.hosts:
        lab.reset(host)
        install_stub(lab, host)
        for nic in NICS:
            set_counters(lab, host, nic, QUIET)
    sick, quiet = sorted(lab.hosts)
    intent, inventory = lab.write_inputs(tmp_path / "inputs")
    runs = tmp_path / "runs"
    push = subprocess.Popen([sys.executable, "-m", "fabricgen", "push", str(intent), "-i", str(inventory),
                             "--role", "gpu-host", "--journal", str(runs), "--yes", "--canary", "0", "--batch", "100%",
                             "--max-failures", "1",
                             "--confirm-timeout", "40", "--soak", "6", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        wait_for_event(runs, "soak-start", sick, push)
        set_counters(lab, sick, NICS[1], {**QUIET, "rx_pcs_symbol_err_phy": 9})  # FEC no longer corrects all
        stdout, stderr = push.communicate(timeout=240)
    finally:
        if push.poll() is None:
            push.kill()
    assert push.returncode == 1, stdout + stderr  # one device reverted: "failed or reverted"
    devices = json.loads(stdout)["devices"]
    assert devices[quiet]["state"] == "confirmed", devices[quiet]
    assert devices[sick]["state"] == "reverted", devices[sick]
    assert devices[sick]["message"] == (f"counters grew during the soak: {sick}:{NICS[1]} symbol errors FEC did "
                                        "not correct +9; reverted and read back as before")
    script = f"/usr/local/sbin/{lab.hosts[quiet].kind.script}"
    assert lab.run(quiet, f"bash {script} --check").returncode == 0  # holds the intent
    assert not lab.inside(sick, f"/usr/local/sbin/{lab.hosts[sick].kind.script}").exists()  # back as it was

    (run,) = runs.glob("*/journal.jsonl")
    events = [json.loads(line) for line in run.read_text().splitlines()]
    soaks = {(e["event"], e["device"]): e for e in events if e["event"] in ("soak-start", "soak")}
    assert set(soaks) == {(event, host) for event in ("soak-start", "soak") for host in lab.hosts}
    assert soaks["soak", quiet]["healthy"] and soaks["soak", quiet]["problems"] == []
    assert soaks["soak", sick]["problems"] == [f"{sick}:{NICS[1]} symbol errors FEC did not correct +9"]
    assert soaks["soak", sick]["window_s"] >= 6
    for host in lab.hosts:
        before = json.loads((run.parent / "soak" / f"{host}.before.json").read_text())
        after = json.loads((run.parent / "soak" / f"{host}.after.json").read_text())
        assert before["phase"] == "before" and after["phase"] == "after"
        assert len(before["readings"]) == soaks["soak-start", host]["readings"] > 0
    after = {(r["port"], r["metric"]): r["value"] for r in
             json.loads((run.parent / "soak" / f"{sick}.after.json").read_text())["readings"]}
    assert after[NICS[1], "fec_uncorrected_symbols"] == 9

    # The same readings in the counter history beside runs/, one snapshot per host and phase, with the run's id.
    history = History(tmp_path / "observe.sqlite")
    stored = history.run_snapshot_ids(run.parent.name)
    assert sorted(phase for _, phase in stored) == ["after", "after", "before", "before"]
    for snapshot_id, phase in stored:
        (host,) = history.load(snapshot_id).devices
        archived = json.loads((run.parent / "soak" / f"{host}.{phase}.json").read_text())["readings"]
        assert {(r["port"], r["metric"], -1 if r["index"] is None else r["index"]): r["value"] for r in archived} \
            == {key[1:]: value for key, value in history.load(snapshot_id).values().items()}
    assert history.snapshot_ids() == []  # no `observe` ran: health has nothing to compare yet
    history.close()


def install_stub(lab: Lab, host: str) -> None:
    target = lab.inside(host, "/usr/local/bin/ethtool")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(STUB, target)
    target.chmod(0o755)


def wait_for_event(runs: Path, event: str, device: str, process: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for journal in runs.glob("*/journal.jsonl"):
            if any(line.endswith("}") and json.loads(line).get("event") == event and
                   json.loads(line).get("device") == device for line in journal.read_text().splitlines()):
                return
        if process.poll() is not None:
            pytest.fail(f"push ended before {event} {device}: {process.communicate()}")
        time.sleep(0.2)
    pytest.fail(f"no {event} for {device} within {timeout:.0f} s")
