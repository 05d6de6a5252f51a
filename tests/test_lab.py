"""The GPU-host SSH lab itself (tests/lab.py): real sshd per host, private filesystems, the rendered scripts
running over SSH against the NIC models, the injected faults, and a teardown that leaves nothing behind.

The lab needs root (namespaces, mounts) and OpenSSH's sshd. Without them these tests skip and say why; with
FABRICGEN_REQUIRE_LAB=1 (set by .ci/run) they fail instead, so CI cannot silently lose them.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from fabricgen.load.fabric import load

from conftest import ROOT
from lab import (
    KINDS,
    STATE_ROOT,
    Lab,
    LabHost,
    alive,
    netns_names,
    pids_in_netns,
    plan_hosts,
    root_links,
)

TOOLS = ("ip", "nsenter", "unshare", "ssh", "ssh-keygen")


def lab_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "the SSH lab needs root (network namespaces, mounts)"
    if not Path("/usr/sbin/sshd").is_file():
        return "the SSH lab needs OpenSSH's sshd (Debian: apt-get install openssh-server)"
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    return f"the SSH lab needs {', '.join(missing)}" if missing else None


def require_lab() -> None:
    reason = lab_unavailable()
    if reason and os.environ.get("FABRICGEN_REQUIRE_LAB") == "1":
        pytest.fail(f"FABRICGEN_REQUIRE_LAB=1 but {reason}")
    if reason:
        pytest.skip(reason=reason)


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    require_lab()
    with Lab.up(3, prefix=f"lt{os.getpid()}") as built:
        yield built


def ssh(lab: Lab, address: str, command: str, known_hosts: Path | None = None) -> subprocess.CompletedProcess[str]:
    """OpenSSH's client as a user runs it: the lab key, host keys checked against the lab's known_hosts."""
    argv = ["ssh", "-F", "/dev/null", "-i", str(lab.key_file), "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
            "-o", f"UserKnownHostsFile={known_hosts or lab.known_hosts}", "-o", "GlobalKnownHostsFile=/dev/null",
            "-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=5", f"root@{address}", command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def connect(lab: Lab, host: str) -> paramiko.SSHClient:
    """paramiko (what netmiko and NAPALM drivers use), refusing any host key not in the lab's known_hosts."""
    client = paramiko.SSHClient()
    client.load_host_keys(str(lab.known_hosts))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    client.connect(lab.address(host), username="root", key_filename=str(lab.key_file), allow_agent=False,
                   look_for_keys=False, timeout=10)
    return client


def execute(client: paramiko.SSHClient, command: str) -> tuple[int, str]:
    _, stdout, stderr = client.exec_command(command, timeout=120)
    output = stdout.read().decode() + stderr.read().decode()
    return stdout.channel.recv_exit_status(), output


def host_of(lab: Lab, platform: str) -> LabHost:
    return next(host for host in lab.hosts.values() if host.platform == platform)


# --- SSH, identities, private filesystems ---------------------------------------------------------------


def test_each_host_answers_ssh_with_its_own_name_and_host_key(lab: Lab) -> None:
    for host in lab.hosts.values():
        done = ssh(lab, host.address, "hostname")
        assert (done.returncode, done.stdout.strip()) == (0, host.name), done.stderr


def test_a_host_presenting_another_hosts_key_is_refused(lab: Lab, tmp_path: Path) -> None:
    first, second = list(lab.hosts.values())[:2]
    lines = dict(line.split(" ", 1) for line in lab.known_hosts.read_text().splitlines())
    assert lines[first.address] != lines[second.address]
    swapped = tmp_path / "known_hosts"
    swapped.write_text(f"{second.address} {lines[first.address]}\n")
    done = ssh(lab, second.address, "hostname", known_hosts=swapped)
    assert done.returncode == 255
    assert "HOST IDENTIFICATION HAS CHANGED" in done.stderr


def test_password_login_is_off(lab: Lab) -> None:
    host = next(iter(lab.hosts.values()))
    argv = ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "PubkeyAuthentication=no",
            "-o", f"UserKnownHostsFile={lab.known_hosts}", f"root@{host.address}", "true"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 255
    assert "Permission denied (publickey)" in done.stderr


def test_var_lib_tmp_and_etc_are_private_to_each_host(lab: Lab) -> None:
    first, second = list(lab.hosts)[:2]
    written = ssh(lab, lab.address(first), "mkdir -p /var/lib/fabricgen && echo mine > /var/lib/fabricgen/state"
                  " && echo mine > /tmp/scratch && echo mine > /etc/fabricgen-lab-probe")
    assert written.returncode == 0, written.stderr
    for path in ("/var/lib/fabricgen/state", "/tmp/scratch", "/etc/fabricgen-lab-probe"):
        assert lab.run(first, ["cat", path]).stdout == "mine\n"
        assert lab.run(second, ["test", "-e", path]).returncode == 1, f"{path} leaked to {second}"
        assert not Path(path).exists(), f"{path} leaked to the machine"
    assert (lab.upper(first, "var_lib") / "fabricgen" / "state").read_text() == "mine\n"


def test_sessions_get_the_environment_the_scripts_need(lab: Lab) -> None:
    for host in lab.hosts.values():
        done = ssh(lab, host.address, "env")
        env = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        assert {key: env.get(key) for key in host.session_env()} == host.session_env()
        assert ssh(lab, host.address, "command -v ip").stdout.strip() == "/usr/sbin/ip"  # the real one


def test_the_fake_sysfs_mtu_is_the_veths_real_mtu(lab: Lab) -> None:
    host = next(iter(lab.hosts))
    done = lab.run(host, 'ip link set dev ens2f0np0 mtu 4200 && cat "$FABRICGEN_SYSFS/class/net/ens2f0np0/mtu"'
                         " && ip -o link show ens2f0np0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "4200"
    assert " mtu 4200 " in done.stdout.splitlines()[1]
    assert lab.nic_state(host)["mtu"] == {"ens1f0np0": 1500, "ens2f0np0": 4200}
    lab.reset(host)
    assert lab.nic_state(host)["mtu"] == {"ens1f0np0": 1500, "ens2f0np0": 1500}


# --- the rendered scripts, uploaded by SFTP and run over SSH ------------------------------------------------


@pytest.fixture(scope="module")
def rendered(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Path:
    inputs = tmp_path_factory.mktemp("lab-inputs")
    intent, inventory = lab.write_inputs(inputs)
    out = inputs / "out"
    done = subprocess.run([sys.executable, "-m", "fabricgen", "render", str(intent), "-i", str(inventory),
                           "-o", str(out)], capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_lab_inputs_lint_clean_and_carry_the_connection_options(lab: Lab, tmp_path: Path) -> None:
    intent, inventory = lab.write_inputs(tmp_path)
    done = subprocess.run([sys.executable, "-m", "fabricgen", "lint", str(intent), "-i", str(inventory)],
                          capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(lab.hosts) + 7} devices" in done.stdout  # 4 leaves, 2 spines, the OOB switch
    devices = load(intent, inventory).inventory.devices
    for host in lab.hosts.values():
        device = devices[host.name]
        assert (device.hostname, device.platform, device.username) == (host.address, host.platform, "root")
        napalm = (device.connection_options or {})["napalm"]
        assert napalm["platform"] == "fabricgen_host"
        assert napalm["extras"]["optional_args"] == {"key_file": str(lab.key_file),
                                                     "known_hosts": str(lab.known_hosts)}


@pytest.mark.parametrize("platform", sorted(KINDS))
def test_rendered_script_over_ssh_checks_applies_and_then_holds(lab: Lab, rendered: Path, platform: str) -> None:
    host = host_of(lab, platform)
    lab.reset(host.name)
    fresh = lab.nic_state(host.name)
    script = rendered / host.name / host.kind.script
    remote = f"/tmp/{script.name}"
    with connect(lab, host.name) as client:
        with client.open_sftp() as sftp:
            sftp.put(str(script), remote)
            sftp.chmod(remote, 0o755)
        status, output = execute(client, f"{remote} --check")
        assert status == 1, output
        assert "ens1f0np0 mtu" in output
        assert lab.nic_state(host.name) == fresh, "--check changed something"
        status, output = execute(client, f"{remote} --apply")
        assert status == 0, output
        applied = lab.nic_state(host.name)
        assert applied["mtu"] == {"ens1f0np0": 9000, "ens2f0np0": 9000}
        assert applied["models"] != fresh["models"]
        status, output = execute(client, f"{remote} --check")
        assert status == 0, output
    assert lab.nic_state(host.name) == applied
    assert {call["tool"] for call in lab.tool_calls(host.name)} >= {"dcb"}


# --- faults ------------------------------------------------------------------------------------------------------


def test_killed_sshd_refuses_logins_until_restarted_and_the_host_keeps_its_state(lab: Lab) -> None:
    host = list(lab.hosts)[1]
    assert lab.run(host, "echo kept > /tmp/kept").returncode == 0
    lab.kill_sshd(host)
    assert lab.sshd_pid(host) is None
    assert ssh(lab, lab.address(host), "true").returncode == 255
    lab.start_sshd(host)
    done = ssh(lab, lab.address(host), "cat /tmp/kept")
    assert (done.returncode, done.stdout) == (0, "kept\n"), done.stderr


def test_full_disk_refuses_writes_to_var_lib_fabricgen_until_freed(lab: Lab) -> None:
    host = list(lab.hosts)[1]
    assert lab.run(host, "mkdir -p /var/lib/fabricgen && echo before > /var/lib/fabricgen/journal").returncode == 0
    lab.fill_disk(host)
    done = ssh(lab, lab.address(host), "cat /var/lib/fabricgen/journal && echo more > /var/lib/fabricgen/next")
    assert done.returncode == 1
    assert done.stdout == "before\n"  # what was there survives
    assert "No space left on device" in done.stderr
    lab.free_disk(host)
    assert ssh(lab, lab.address(host), "echo more > /var/lib/fabricgen/next").returncode == 0
    lab.reset(host)
    assert lab.run(host, ["test", "-e", "/var/lib/fabricgen"]).returncode == 1


def test_changed_address_moves_ssh_and_reset_moves_it_back(lab: Lab) -> None:
    host = list(lab.hosts)[2]
    old, new = lab.address(host), lab.spare_address()
    with connect(lab, host) as client:
        lab.change_address(host, new)
        transport = client.get_transport()
        assert transport is not None
        with pytest.raises(paramiko.SSHException, match="Timeout opening channel"):
            transport.open_session(timeout=3)  # the open session's packets now go nowhere
    assert ssh(lab, new, "hostname").stdout.strip() == host
    assert ssh(lab, old, "true").returncode == 255
    lab.reset(host)
    assert lab.address(host) == old
    assert ssh(lab, old, "hostname").stdout.strip() == host


# --- teardown ------------------------------------------------------------------------------------------------


def assert_no_trace(prefix: str, pids: list[int]) -> None:
    assert netns_names(prefix) == []
    assert not any(alive(pid) for pid in pids)
    assert root_links(prefix) == []
    assert not (STATE_ROOT / prefix).exists()


def test_down_leaves_no_namespace_process_link_or_file() -> None:
    require_lab()
    prefix = f"ld{os.getpid()}"
    with Lab.up(2, prefix=prefix) as built:
        started = ssh(built, built.address(f"{prefix}-h1"), "setsid -f sleep 600 >/dev/null 2>&1 < /dev/null")
        assert started.returncode == 0, started.stderr
        pids = pids_in_netns(netns_names(prefix))
        assert len(pids) >= 5  # two anchors, two sshds, the detached sleep (a revert timer would be one)
    assert_no_trace(prefix, pids)
    built.down()  # once more: nothing to do, no error


def test_the_lab_of_a_killed_test_run_is_removed_by_the_next_lab() -> None:
    require_lab()
    prefix = f"lk{os.getpid()}"
    program = (f"import sys, time; sys.path.insert(0, {str(ROOT / 'tests')!r}); from lab import Lab\n"
               f"Lab.up(2, prefix={prefix!r}); print('up', flush=True); time.sleep(600)")
    run = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    try:
        assert run.stdout is not None and run.stdout.readline() == "up\n"
        pids = pids_in_netns(netns_names(prefix))
    finally:
        run.kill()  # SIGKILL: no finally, no teardown in the run itself
        run.wait()
        assert run.stdout is not None
        run.stdout.close()
    assert len(netns_names(prefix)) == 2 and all(alive(pid) for pid in pids)  # left behind
    with Lab.up(1, prefix=f"ln{os.getpid()}"):
        assert_no_trace(prefix, pids)


def test_command_line_up_status_down(tmp_path: Path) -> None:
    require_lab()
    prefix = f"lc{os.getpid()}"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "tests/lab.py", "--prefix", prefix, *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=120, check=False)

    try:
        up = cli("up", "2", "--inputs", str(tmp_path))
        assert up.returncode == 0, up.stderr
        assert (tmp_path / "inventory" / "hosts.yaml").is_file()
        status = cli("status")
        assert status.returncode == 0
        assert status.stdout.count(f"{prefix}-h") == 2
        assert "sshd down" not in status.stdout
    finally:
        down = cli("down")
    assert down.returncode == 0, down.stderr
    assert netns_names(prefix) == []
    assert cli("status").returncode == 1


def test_inputs_for_a_64_host_lab_lint_clean_without_building_it(tmp_path: Path) -> None:
    """No root needed: the inventory of a big lab (uplinks moved past 32 host ports per leaf) is valid."""
    block = ipaddress.IPv4Network("198.18.4.0/22")
    planned = Lab("fgplan", block, plan_hosts("fgplan", block, 64), {}, {})
    intent, inventory = planned.write_inputs(tmp_path)
    done = subprocess.run([sys.executable, "-m", "fabricgen", "lint", str(intent), "-i", str(inventory)],
                          capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    devices = load(intent, inventory).inventory.devices
    assert [devices[f"fgplan-h{i}"].platform for i in range(1, 9)] == ["connectx"] * 2 + ["linux-dcb"] * 2 + \
        ["connectx"] * 2 + ["linux-dcb"] * 2
    assert devices["fgplan-h64"].hostname == "198.18.4.74"


def test_no_lab_or_bench_inventory_names_an_address_outside_the_labs_block(tmp_path: Path) -> None:
    """A lab or a benchmark sends packets only to addresses the lab created: every device of a lab's inventory
    (the switches it does not run included) has an address of the lab's block, and bench/push.py selects only
    the lab's hosts."""
    block = ipaddress.IPv4Network("198.18.8.0/22")
    planned = Lab("fgaddr", block, plan_hosts("fgaddr", block, 8), {}, {})
    intent, inventory = planned.write_inputs(tmp_path)
    devices = load(intent, inventory).inventory.devices
    outside = {name: device.hostname for name, device in devices.items()
               if ipaddress.ip_address(device.hostname) not in block}
    assert outside == {}
    spec = importlib.util.spec_from_file_location("bench_push", ROOT / "bench" / "push.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    selected: list[str] = bench.lab_selection(planned)
    assert selected[0] == "--hosts" and sorted(selected[1].split(",")) == sorted(planned.hosts)
    assert all(ipaddress.ip_address(devices[name].hostname) in block for name in selected[1].split(","))


def test_without_root_the_lab_skips_and_says_why_unless_ci_requires_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.delenv("FABRICGEN_REQUIRE_LAB", raising=False)
    with pytest.raises(pytest.skip.Exception, match="needs root"):
        require_lab()
    monkeypatch.setenv("FABRICGEN_REQUIRE_LAB", "1")
    with pytest.raises(pytest.fail.Exception, match="FABRICGEN_REQUIRE_LAB=1 but the SSH lab needs root"):
        require_lab()
