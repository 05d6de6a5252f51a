"""Restoring a GPU host's NIC settings to their values before a push (fabricgen/deploy/hostrestore.py).

The round trips run for real: bash, the rendered NIC script and the restore script against the stateful tool
models of tests/nic_stubs (ConnectX: mlnx_qos, dcb, ip, cma_roce_*) and tests/dcb_stubs (iproute2 dcb over a
bnxt_en-like driver), on the fake hosts that test_connectx_script.py and test_linux_dcb.py build. Each starts a
host away from the intent, takes the snapshot as the host driver does (``--check``), applies the rendered script,
runs the restore script, and then compares the models' NIC state with the state before the apply, and the
``--check`` output with the first one.

What the state comparison leaves out, and why: counters and records of past calls that no tool reads and no
packet sees -- the ConnectX model's ``link_toggles`` (how often PFC toggled the link) and ``ets_request`` (the
last ETS request, as sent rather than as held), the dcb model's ``writes`` counters -- and the order of the
kernel's APP list (dcb prints it sorted; the driver's per-DSCP hardware map, ``hw_dscp``, is compared) -- and
mlx5's firmware DSCP map (``dscp2prio``) while the NIC trusts PCP: it classifies nothing then, and the next switch
to DSCP trust (``mlnx_qos --trust dscp``) rewrites all 64 entries. Under DSCP trust it is compared.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import test_connectx_script as cx
import test_linux_dcb as ld
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricgen.deploy.hostrestore import RestorePlan, restore_script, snapshot_preparation

RESTORE = "restore-nic.sh"
SCRIPTS = {"connectx": "fabricgen-nic.sh", "linux-dcb": "fabricgen-dcb.sh"}
HISTORY = {"link_toggles", "ets_request", "writes"}  # see the module docstring
ETS_TCS = (0, 2, 3)  # the TCs the intent weights; a share elsewhere reads as 0 (the script's read_ets)
Host = cx.FakeHost | ld.FakeHost


# --- helpers --------------------------------------------------------------------------------------------------

def state(host: Host) -> dict[str, Any]:
    """The NIC state the models hold: their JSON (without the history fields) and the fake sysfs/configfs files."""
    shown: dict[str, Any] = {}
    for path, text in host.files().items():
        if path.startswith("state/") and path.endswith(".json"):
            data = {key: value for key, value in json.loads(text).items() if key not in HISTORY}
            if "app" in data:
                data["app"] = sorted(data["app"])
            if data.get("app_dscp") == {}:  # mlx5 under PCP trust
                del data["dscp2prio"]
            shown[path] = data
        elif path.startswith(("sysfs/", "configfs/")):
            shown[path] = text
    return shown


def check(host: Host) -> str:
    done = host.run("--check")
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def apply(host: Host) -> None:
    done = host.run("--apply")
    assert done.returncode == 0, f"--apply failed:\n{done.stdout}\n{done.stderr}"


def run_restore(host: Host, plan: RestorePlan, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The restore script run on ``host`` as the revert does (bash FILE); every tool call it makes must be bounded."""
    script = host.root / RESTORE
    script.write_text(plan.script)
    seen = len(host.calls())
    done = subprocess.run(["bash", str(script)], env={**host.env, **(env or {})}, capture_output=True, text=True,
                          timeout=300, check=False)
    unbounded = [call for call in host.calls()[seen:] if call["parent"] != "timeout"]
    assert unbounded == [], f"tool calls without a time limit: {unbounded}"
    return done


def round_trip(host: Host, platform: str, device: str) -> RestorePlan:
    """snapshot -> apply -> restore on ``host``: the NIC ends as it started, and --check says the same again."""
    before, snapshot = state(host), check(host)
    plan = restore_script(platform, device, snapshot)
    assert plan.unrestorable == [], plan.unrestorable
    assert plan.restored == cx.diff_names(snapshot)
    apply(host)
    assert state(host) != before
    done = run_restore(host, plan)
    assert done.returncode == 0, f"restore failed:\n{done.stdout}\n{done.stderr}"
    assert done.stdout.splitlines()[-1] == f"restored: {device}: {len(plan.restored)} NIC settings read as before " \
                                           "the push"
    assert state(host) == before
    assert check(host) == snapshot
    return plan


def connectx_host(root: Path) -> cx.FakeHost:
    return cx.make_host(root, cx.render(cx.ROOT / "intent" / "fabric.yaml"))


def dcb_host(root: Path) -> ld.FakeHost:
    """node3 of the mixed example, with apptrust (iproute2 6.2 and a driver with the ops) and its RDMA-CM groups,
    made as the host driver makes them before a snapshot."""
    device = ld.host("node3")
    netdev = {nic.interface: ["--apptrust"] for nic in ld.nics(device)}
    host = ld.make_host(root, device, netdev=netdev, env={"DCB_STUB_IPROUTE2": "6.2"})
    prepare(host, "linux-dcb")
    return host


def prepare(host: Host, platform: str) -> None:
    """snapshot_preparation's command run on ``host`` with sh, its tool calls bounded."""
    command = snapshot_preparation(platform, (host.root / SCRIPTS[platform]).read_text())
    seen = len(host.calls())
    shell = shutil.which("sh") or "/bin/sh"  # found here: the host's PATH is its fake bin/
    done = subprocess.run([shell, "-c", command or ":"], env=host.env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert [call for call in host.calls()[seen:] if call["parent"] != "timeout"] == []


# --- ConnectX ---------------------------------------------------------------------------------------------------

def test_connectx_host_away_from_the_intent_comes_back_exactly(tmp_path: Path) -> None:
    host = connectx_host(tmp_path)
    first, second = host.nics
    i = first.interface
    (host.sysfs / "class" / "net" / i / "mtu").write_text("4200\n")
    host.tool("mlnx_qos", "-i", i, "--trust", "dscp")  # every DSCP gets its firmware default entry, D:D>>3
    host.tool("mlnx_qos", "-i", i, "--dscp2prio", "set,10,2", "--dscp2prio", "set,26,5", "--dscp2prio", "set,48,6")
    host.tool("mlnx_qos", "-i", i, "--pfc", "0,0,0,0,1,0,0,0")
    host.tool("mlnx_qos", "-i", i, "--prio_tc", "0,1,2,3,4,5,6,7", "--tsa", "ets,strict,ets,ets,vendor,strict,"
              "strict,strict", "--tcbw", "20,0,30,50,0,0,0,0")
    (host.sysfs / "class" / "net" / i / "ecn" / "roce_np" / "cnp_dscp").write_text("26\n")
    (host.sysfs / "class" / "net" / i / "ecn" / "roce_rp" / "enable" / "3").write_text("1\n")
    host.tool("cma_roce_tos", "-d", first.rdma_device, "-p", "1", "-t", "32")
    # The second NIC stays as mlx5 initialises it: firmware DCBX, PCP trust, every TC vendor.
    snapshot = check(host)
    assert f'DIFF {i} mtu: have "4200", want "9000"' in snapshot
    assert f'DIFF {second.interface} trust: have "pcp", want "dscp"' in snapshot
    dscp = next(line for line in snapshot.splitlines() if line.startswith(f"DIFF {i} dscp-prio"))
    assert ' 10:2 ' in dscp and ' 26:5 ' in dscp and ' 9:1 ' in dscp and ' 48:' not in dscp and ':-' not in dscp
    plan = round_trip(host, "connectx", "node1")
    assert f"{i} dscp-prio" in plan.restored and f"{second.rdma_device} roce mode" in plan.restored


def test_connectx_restore_resets_replaced_dscp_entries_and_deletes_added_ones(tmp_path: Path) -> None:
    host = connectx_host(tmp_path)
    first, second = (nic.interface for nic in host.nics)
    host.tool("mlnx_qos", "-i", first, "--trust", "dscp")
    host.tool("mlnx_qos", "-i", first, "--dscp2prio", "set,26,5")  # the second NIC trusts PCP: no entry at all
    plan = restore_script("connectx", "node1", check(host))
    apply(host)
    seen = len(host.calls())
    assert run_restore(host, plan).returncode == 0
    writes = {call["argv"][1]: call["argv"][2:] for call in host.calls()[seen:]
              if call["tool"] == "mlnx_qos" and "--dscp2prio" in call["argv"]}
    assert "set,26,5" in writes[first] and "set,40,5" in writes[first] and "set,0,0" not in writes[first]
    assert len([arg for arg in writes[second] if arg.startswith("del,")]) == 64 and "del,26,3" in writes[second]
    assert host.netdev(first)["app_dscp"] == {str(dscp): 5 if dscp == 26 else dscp >> 3 for dscp in range(64)}
    assert (host.netdev(second)["app_dscp"], host.netdev(second)["trust"]) == ({}, "pcp")


def test_connectx_dscp_entries_missing_beside_others_are_refused(tmp_path: Path) -> None:
    # DSCP trust with a partial table: the DSCPs without an entry use mlx5's firmware map, which nothing reads.
    host = connectx_host(tmp_path)
    i = host.nics[0].interface
    host.tool("mlnx_qos", "-i", i, "--dscp2prio", "set,26,3")  # the first entry switches the NIC to DSCP trust
    plan = restore_script("connectx", "node1", check(host))
    assert plan.unrestorable == [f"{i} dscp-prio (63 DSCPs had no APP entry beside 1 that had one: under DSCP trust "
                                 "mlx5 classified them by its firmware map, which no tool reads, and deleting the "
                                 "entries the push adds would leave them at priority 0)"]


def test_connectx_restore_after_a_push_that_failed_half_way(tmp_path: Path) -> None:
    # The revert also runs after an apply that stopped part-way: the restore reads each setting first, so what the
    # push never reached is left alone and the rest still comes back.
    host = connectx_host(tmp_path)
    before, snapshot = state(host), check(host)
    plan = restore_script("connectx", "node1", snapshot)
    tool = host.root / "bin" / "cma_roce_tos"
    tool.unlink()
    tool.symlink_to(cx.STUBS / "hang")  # the first NIC's RoCE ToS hangs: its other settings are applied, the
    (host.root / "bin" / "sleep").symlink_to(shutil.which("sleep") or "/bin/sleep")  # second NIC's not at all
    stopped = host.run("--apply", env={"FABRICGEN_TOOL_TIMEOUT": "1"})
    assert stopped.returncode == 3, stopped.stderr
    assert host.read(f"class/net/{host.nics[0].interface}/mtu") == "9000"
    assert host.read(f"class/net/{host.nics[1].interface}/mtu") == "1500"
    tool.unlink()
    tool.symlink_to("nic_tool_models")
    done = run_restore(host, plan)
    assert done.returncode == 0, done.stderr
    assert state(host) == before and check(host) == snapshot


def test_a_failing_restore_step_is_named_and_the_others_still_run(tmp_path: Path) -> None:
    host = connectx_host(tmp_path)
    before, snapshot = state(host), check(host)
    plan = restore_script("connectx", "node1", snapshot)
    apply(host)
    (host.root / "bin" / "cma_roce_mode").unlink()  # the tool is gone by the time the revert runs
    done = run_restore(host, plan)
    rdma = [nic.rdma_device for nic in host.nics]
    assert done.returncode == 1
    assert f"error: {rdma[0]} roce mode: 'cma_roce_mode -d {rdma[0]} -p 1 -m 1' failed" in done.stderr
    assert done.stdout.splitlines()[-1] == (f"error: node1: 2 of {len(plan.restored)} NIC settings not back as "
                                            f"before the push: {rdma[1]} roce mode, {rdma[0]} roce mode")
    after = state(host)
    rdma_files = {f"state/rdma-{name}.json" for name in rdma}
    assert {path: value for path, value in after.items() if path not in rdma_files} == \
        {path: value for path, value in before.items() if path not in rdma_files}


def test_connectx_upstream_driver_knobs_in_debugfs_come_back(tmp_path: Path) -> None:
    # Without MLNX_OFED the CNP knobs live in debugfs, found through the netdev's PCI address as the NIC script
    # finds them; the DCQCN enables have no upstream knob (the script only notes it), so they are not in the diff.
    host = cx.make_host(tmp_path, cx.render(cx.ROOT / "intent" / "fabric.yaml"), upstream=True)
    plan = round_trip(host, "connectx", "node1")
    assert f"{host.nics[0].interface} cnp dscp" in plan.restored
    assert not [name for name in plan.restored if "dcqcn" in name]


def test_a_tool_that_hangs_during_the_restore_is_named_and_the_rest_still_comes_back(tmp_path: Path) -> None:
    host = connectx_host(tmp_path)
    before, snapshot = state(host), check(host)
    plan = restore_script("connectx", "node1", snapshot)
    apply(host)
    tool = host.root / "bin" / "cma_roce_tos"
    tool.unlink()
    tool.symlink_to(cx.STUBS / "hang")
    (host.root / "bin" / "sleep").symlink_to(shutil.which("sleep") or "/bin/sleep")
    # 5 s: a bound the hung tool meets and a healthy tool never does, even on a loaded runner (1 s was missed)
    done = run_restore(host, plan, env={"FABRICGEN_TOOL_TIMEOUT": "5"})  # fails unless every call was bounded
    rdma = [nic.rdma_device for nic in host.nics]
    assert done.returncode == 1
    assert f"error: 'cma_roce_tos -d {rdma[0]} -p 1 -t 0' did not finish within 5s (FABRICGEN_TOOL_TIMEOUT)" in \
        done.stderr
    assert done.stdout.splitlines()[-1].endswith(f"not back as before the push: {rdma[1]} roce tos, {rdma[0]} roce tos")
    tool.unlink()
    tool.symlink_to("nic_tool_models")
    unreached = {f"state/rdma-{name}.json" for name in rdma}
    assert {path: value for path, value in state(host).items() if path not in unreached} == \
        {path: value for path, value in before.items() if path not in unreached}


# --- linux-dcb ---------------------------------------------------------------------------------------------------

def test_linux_dcb_host_away_from_the_intent_comes_back_exactly(tmp_path: Path) -> None:
    host = dcb_host(tmp_path)
    first, second = host.nics
    i = first.interface
    host.tool("ip", "link", "set", "dev", i, "mtu", "4200")
    host.tool("dcb", "ets", "set", "dev", i, "prio-tc", "0:0", "1:1", "2:2", "3:3", "4:4", "5:5", "6:6", "7:7",
              "tc-tsa", "all:strict", "0:ets", "2:ets", "3:ets", "tc-bw", "all:0", "0:20", "2:30", "3:50")
    host.tool("dcb", "pfc", "set", "dev", i, "prio-pfc", "all:off", "4:on")
    host.tool("dcb", "app", "add", "dev", i, "dscp-prio", "10:1", "26:5", "48:6")
    host.tool("dcb", "apptrust", "set", "dev", i, "order", "pcp", "dscp")
    host.tool("dcb", "ets", "set", "dev", second.interface, "prio-tc", "all:0", "tc-tsa", "all:strict",
              "tc-bw", "all:0")
    host.tool("dcb", "pfc", "set", "dev", second.interface, "prio-pfc", "all:off")  # and no APP entries at all
    port = host.root / "configfs" / "rdma_cm" / first.rdma_device / "ports" / "1"
    (port / "default_roce_tos").write_text("32\n")
    host.tool("dcb", "dcbx", "set", "dev", i, "ieee")  # last: without host mode bnxt_en takes no IEEE set
    snapshot = check(host)
    assert f'DIFF {i} dscp-prio: have "dscp-prio 10:1 26:5 48:6", want "dscp-prio 0:0 ' in snapshot
    assert f'DIFF {second.interface} dscp-prio: have "<unset>", want "dscp-prio 0:0 ' in snapshot
    assert f'DIFF {i} dcbx: have "ieee", want "host ieee"' in snapshot
    assert f'DIFF {i} apptrust: have "order: pcp dscp", want "order: dscp"' in snapshot
    assert f'DIFF {second.interface} apptrust: have "order:", want "order: dscp"' in snapshot
    plan = round_trip(host, "linux-dcb", "node3")
    assert plan.script.index(f"restore_dcbx '{i}'") > plan.script.index(f"restore_ets '{i}'"), "DCBX last"


def test_an_rdma_cm_group_missing_before_the_snapshot_is_unrestorable_until_prepared(tmp_path: Path) -> None:
    # Without the configfs group the script cannot read the ToS in effect (the kernel keeps it when the group goes),
    # so nothing says what to put back: the host driver would refuse the push. The preparation creates the groups
    # (changing no value), and then the very same host comes back exactly.
    host = ld.make_host(tmp_path, ld.host("node3"))
    plan = restore_script("linux-dcb", "node3", check(host))
    rdma = host.nics[0].rdma_device
    assert f"{rdma} roce tos (the RDMA-CM configfs group did not exist before the push, so the value in effect " \
           "was not read; create it (mkdir rdma_cm/DEVICE under configfs, as cma_roce_tos does) and snapshot " \
           "again)" in plan.unrestorable
    assert f"{rdma} roce tos" not in plan.restored and f"{host.nics[0].interface} mtu" in plan.restored
    for nic in host.nics:  # a driver's "never set" ETS/PFC is not a state any tool writes back
        host.tool("dcb", "ets", "set", "dev", nic.interface, "prio-tc", "all:0", "tc-tsa", "all:strict", "tc-bw",
                  "all:0")
        host.tool("dcb", "pfc", "set", "dev", nic.interface, "prio-pfc", "all:off")
    prepare(host, "linux-dcb")
    assert f'DIFF {rdma} roce mode: have "IB/RoCE v1", want "RoCE v2"' in check(host)
    round_trip(host, "linux-dcb", "node3")


def test_snapshot_preparation_is_for_linux_dcb_rdma_devices_only() -> None:
    assert snapshot_preparation("connectx", cx.render(cx.ROOT / "intent" / "fabric.yaml").script) == ""
    command = snapshot_preparation("linux-dcb", ld.script_of(ld.host("node3")))
    assert "for device in 'bnxt_re0' 'bnxt_re1'; do" in command and "timeout -k 5 30 mkdir" in command
    hostile = ld.script_of(ld.with_nics(ld.host("node3"), rdma_device="x$(reboot)"))
    assert snapshot_preparation("linux-dcb", hostile) == ""


# --- random starting states (hypothesis) -------------------------------------------------------------------------

@st.composite
def ets_shares(draw: st.DrawFn, *, zero_allowed: bool) -> dict[int, int]:
    """ETS TCs (among those the intent weights) and their shares, summing to 100; none: every TC strict."""
    tcs = draw(st.lists(st.sampled_from(ETS_TCS), unique=True, max_size=3))
    if not tcs:
        return {}
    cuts = sorted(draw(st.lists(st.integers(0 if zero_allowed else 1, 99), min_size=len(tcs) - 1,
                                max_size=len(tcs) - 1)))
    shares = [high - low for low, high in zip([0, *cuts], [*cuts, 100], strict=True)]
    if not zero_allowed and 0 in shares:
        shares = [100 // len(tcs)] * len(tcs)
        shares[0] += 100 - sum(shares)
    return dict(zip(tcs, shares, strict=True))


NIC_STATE = st.fixed_dictionaries({
    "mtu": st.integers(1280, 9500),
    "prio_tc": st.lists(st.integers(0, 7), min_size=8, max_size=8),
    "pfc": st.lists(st.booleans(), min_size=8, max_size=8),
    "dscp": st.dictionaries(st.integers(0, 63), st.integers(0, 7), max_size=6),
    "tos": st.integers(0, 255),
    "mode": st.sampled_from(["IB/RoCE v1", "RoCE v2"]),
})


def _csv(values: list[Any]) -> str:
    return ",".join(str(value) for value in values)


def set_connectx_nic(host: cx.FakeHost, nic: Any, drawn: dict[str, Any], ets: dict[int, int],
                     knobs: list[int]) -> None:
    i = nic.interface
    (host.sysfs / "class" / "net" / i / "mtu").write_text(f"{drawn['mtu']}\n")
    if drawn["dscp_trust"]:  # PCP trust otherwise: no APP entry (a partial table is refused, see above)
        host.tool("mlnx_qos", "-i", i, "--trust", "dscp")
    if drawn["dscp_trust"] and drawn["dscp"]:
        host.tool("mlnx_qos", "-i", i, *[arg for dscp, prio in sorted(drawn["dscp"].items())
                                         for arg in ("--dscp2prio", f"set,{dscp},{prio}")])
    if drawn["os_dcbx"]:
        host.tool("mlnx_qos", "-i", i, "-d", "os")
    host.tool("mlnx_qos", "-i", i, "--pfc", _csv([int(flag) for flag in drawn["pfc"]]))
    tsa = ["ets" if tc in ets else drawn["non_ets"][tc] for tc in range(8)]
    host.tool("mlnx_qos", "-i", i, "--prio_tc", _csv(drawn["prio_tc"]), "--tsa", _csv(tsa),
              "--tcbw", _csv([ets.get(tc, 0) for tc in range(8)]))
    ecn = host.sysfs / "class" / "net" / i / "ecn"
    for path, value in zip(("roce_np/enable/3", "roce_rp/enable/3", "roce_np/cnp_dscp", "roce_np/cnp_802p_prio"),
                           knobs, strict=True):
        (ecn / path).write_text(f"{value}\n")
    host.tool("cma_roce_tos", "-d", nic.rdma_device, "-p", "1", "-t", str(drawn["tos"]))
    host.tool("cma_roce_mode", "-d", nic.rdma_device, "-p", "1", "-m", "1" if drawn["mode"] == "IB/RoCE v1" else "2")


CONNECTX_NIC = NIC_STATE.flatmap(lambda drawn: st.fixed_dictionaries({
    "os_dcbx": st.booleans(),
    "dscp_trust": st.booleans(),
    "non_ets": st.lists(st.sampled_from(["strict", "vendor"]), min_size=8, max_size=8),
}).map(lambda more: {**drawn, **more}))
KNOBS = st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 63), st.integers(0, 7)).map(list)


@settings(max_examples=3, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(drawn=CONNECTX_NIC, ets=ets_shares(zero_allowed=True), knobs=KNOBS)
def test_connectx_random_starting_states_come_back(tmp_path_factory: pytest.TempPathFactory, drawn: dict[str, Any],
                                                   ets: dict[int, int], knobs: list[int]) -> None:
    host = connectx_host(tmp_path_factory.mktemp("connectx"))
    set_connectx_nic(host, host.nics[0], drawn, ets, knobs)
    round_trip(host, "connectx", "node1")


def set_dcb_nic(host: ld.FakeHost, nic: Any, drawn: dict[str, Any], ets: dict[int, int]) -> None:
    i = nic.interface
    host.tool("ip", "link", "set", "dev", i, "mtu", str(drawn["mtu"]))
    host.tool("dcb", "ets", "set", "dev", i, "prio-tc", *[f"{prio}:{tc}" for prio, tc in enumerate(drawn["prio_tc"])],
              "tc-tsa", *[f"{tc}:{'ets' if tc in ets else 'strict'}" for tc in range(8)],
              "tc-bw", *[f"{tc}:{ets.get(tc, 0)}" for tc in range(8)])
    host.tool("dcb", "pfc", "set", "dev", i, "prio-pfc", *[f"{prio}:{'on' if flag else 'off'}"
                                                           for prio, flag in enumerate(drawn["pfc"])])
    if drawn["dscp"]:
        host.tool("dcb", "app", "add", "dev", i, "dscp-prio", *[f"{d}:{p}" for d, p in sorted(drawn["dscp"].items())])
    host.tool("dcb", "apptrust", "set", "dev", i, "order", *drawn["apptrust"])
    port = host.root / "configfs" / "rdma_cm" / nic.rdma_device / "ports" / "1"
    (port / "default_roce_tos").write_text(f"{drawn['tos']}\n")
    (port / "default_roce_mode").write_text(f"{drawn['mode']}\n")
    if not drawn["host_dcbx"]:
        host.tool("dcb", "dcbx", "set", "dev", i, "ieee")


DCB_NIC = NIC_STATE.flatmap(lambda drawn: st.fixed_dictionaries({
    "host_dcbx": st.booleans(),
    "apptrust": st.lists(st.sampled_from(["ethtype", "port", "dscp", "pcp"]), unique=True, max_size=3),
}).map(lambda more: {**drawn, **more}))


@settings(max_examples=3, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(drawn=DCB_NIC, ets=ets_shares(zero_allowed=False))  # bnxt_en refuses an ETS TC at 0 % ("starving")
def test_linux_dcb_random_starting_states_come_back(tmp_path_factory: pytest.TempPathFactory, drawn: dict[str, Any],
                                                    ets: dict[int, int]) -> None:
    host = dcb_host(tmp_path_factory.mktemp("dcb"))
    for nic in host.nics:  # a set ETS and PFC on both: a driver's "never set" is not a state any tool writes
        if nic is not host.nics[0]:
            host.tool("dcb", "ets", "set", "dev", nic.interface, "prio-tc", "all:0", "tc-tsa", "all:strict",
                      "tc-bw", "all:0")
            host.tool("dcb", "pfc", "set", "dev", nic.interface, "prio-pfc", "all:off")
    set_dcb_nic(host, host.nics[0], drawn, ets)
    round_trip(host, "linux-dcb", "node3")


# --- refused: what cannot be put back, and hostile text -----------------------------------------------------------

CX_WANT_ETS = ("prio-tc 0:0 1:0 2:2 3:3 4:0 5:0 6:6 7:0 | tc-tsa 0:ets 1:strict 2:ets 3:ets 4:strict 5:strict "
               "6:strict 7:strict | tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0")


def diff_line(name: str, have: str, want: str = "x") -> str:
    return f'DIFF {name}: have "{have}", want "{want}"\n'


@pytest.mark.parametrize(("platform", "line", "reason"), [
    ("connectx", diff_line("ens1f0np0 mtu", "<unset>", "9000"), "could not read its value before the push"),
    ("connectx", diff_line("mlx5_0 roce tos", "<unset>", "104"), "could not read its value before the push"),
    ("connectx", diff_line("ens1f0np0 trust", "dscp", "pcp"), "deletes the DSCP APP entries"),
    ("connectx", diff_line("ens1f0np0 dscp-prio", "26:0,26:3", "26:3"), "mlx5 keeps one per DSCP"),
    # TC 1 held 30 %, which the script shows as 0 (the intent wants it at 0 %): its share is not in the snapshot.
    ("connectx", diff_line("ens1f0np0 ets", "prio-tc 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7 | tc-tsa 0:ets 1:ets 2:ets "
                           "3:ets 4:strict 5:strict 6:strict 7:strict | tc-bw 0:20 1:0 2:10 3:50 4:0 5:0 6:0 7:0",
                           CX_WANT_ETS), "sum to 80 %"),
    ("connectx", diff_line("ens1f0np0 dcbx", "Auto", "OS controlled"), "not a DCBX mode mlnx_qos sets"),
    ("connectx", diff_line("ens1f0np0 speed", "100000", "200000"), "fabricgen does not know this setting"),
    ("linux-dcb", diff_line("ens1f0np0 dscp-prio", "dscp-prio 26:3 10:0", "dscp-prio 0:0"), "sorted, each entry once"),
    ("linux-dcb", diff_line("ens1f0np0 apptrust", "order: dscp dscp", "order: dscp"), "not an apptrust order"),
    ("linux-dcb", diff_line("ens1f0np0 dcbx", "ieee host", "host ieee"), "not DCBX flags as dcb prints them"),
])
def test_values_that_cannot_be_put_back_are_refused_with_the_reason(platform: str, line: str, reason: str) -> None:
    plan = restore_script(platform, "node1", line)
    assert plan.restored == [] and len(plan.unrestorable) == 1
    assert reason in plan.unrestorable[0], plan.unrestorable
    assert "restore_all() {\n  :\n}" in plan.script


HOSTILE = [
    "$(touch PWNED)", "`touch PWNED`", "1500'; touch PWNED; echo '", '1500"; touch PWNED; "', "1500; touch PWNED",
    "1500 && touch PWNED", "1500\ntouch PWNED", "${IFS}touch${IFS}PWNED", "1500 | touch PWNED", "15\\'00PWNED",
]


@pytest.mark.parametrize("platform", ["connectx", "linux-dcb"])
@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_are_refused_and_never_reach_the_script(tmp_path: Path, platform: str, value: str) -> None:
    settings_names = ["ens1f0np0 mtu", "mlx5_0 roce tos", "ens1f0np0 pfc", "ens1f0np0 ets", "ens1f0np0 dcbx",
                      "ens1f0np0 dscp-prio", "mlx5_0 roce mode"]
    output = "".join(diff_line(name, value) for name in settings_names)
    output += "DIFF $(touch PWNED) mtu: have \"1500\", want \"9000\"\n"  # a hostile name too
    plan = restore_script(platform, "node1", output)
    assert plan.restored == []
    assert "PWNED" not in plan.script and "PWNED" not in " ".join(plan.unrestorable)
    script = tmp_path / RESTORE
    script.write_text(plan.script)
    done = subprocess.run(["bash", str(script)], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0 and not (tmp_path / "PWNED").exists()
    assert done.stdout.splitlines()[-1] == "restored: node1: 0 NIC settings read as before the push"


def test_a_value_with_a_newline_forges_only_lines_that_are_checked_like_any_other() -> None:
    # A value with a newline can forge a second DIFF line. It is then one more line from the same host, held to
    # the same patterns: a second value for a setting refuses both, a malformed one is refused, and at most a
    # well-formed value is set back with the usual tool -- never code.
    forged = '1500", want "9000"\nDIFF ens1f0np0 mtu: have "68'
    plan = restore_script("connectx", "node1", diff_line("ens1f0np0 mtu", forged, "9000"))
    assert (plan.restored, plan.unrestorable) == ([], ["ens1f0np0 mtu (two DIFF lines with different values)"])
    forged = '1500", want "9000"\nDIFF ens1f0np0 pfc: have "$(reboot)'
    plan = restore_script("connectx", "node1", diff_line("ens1f0np0 mtu", forged, "9000"))
    assert plan.restored == ["ens1f0np0 mtu"]
    assert plan.unrestorable == ["ens1f0np0 pfc (not a prio-pfc array as dcb prints it)"]
    assert "reboot" not in plan.script


def test_unknown_platforms_and_device_names_are_errors() -> None:
    with pytest.raises(ValueError, match="not a GPU-host platform"):
        restore_script("sonic", "node1", "")
    with pytest.raises(ValueError, match="not a device name"):
        restore_script("connectx", "node1; reboot", "")


# --- the script itself ------------------------------------------------------------------------------------------

def functions(script: str) -> dict[str, str]:
    """Each bash function of ``script`` (``name() { ... }`` on one line, or up to a ``}`` line), comments left out."""
    found = dict(re.findall(r"^([a-z_]+)\(\) (\{.*\})$", script, re.M))
    found.update(re.findall(r"^([a-z_]+)\(\) \{(?:  #[^\n]*)?\n(.*?)^\}$", script, re.M | re.S))
    return found


@pytest.mark.parametrize(("platform", "rendered", "shared"), [
    ("connectx", lambda: cx.render(cx.ROOT / "intent" / "fabric.yaml").script,
     ("words", "read_file", "write_file", "mlnx_qos_field", "read_ets", "dscp_entries", "roce_tos", "roce_mode",
      "cc_dir", "cc_setting")),
    ("linux-dcb", lambda: ld.script_of(ld.host("node3")),
     ("words", "read_file", "write_file", "netdev_mtu", "read_ets", "dscp_sync")),
])
def test_the_restore_script_reads_settings_with_the_nic_scripts_own_readers(
        platform: str, rendered: Callable[[], str], shared: tuple[str, ...]) -> None:
    # "Restored" means the NIC script would print the snapshot's value again: a reader changed there must change here.
    theirs, ours = functions(rendered()), functions(restore_script(platform, "node1", "").script)
    assert {name: ours.get(name) for name in shared} == {name: theirs.get(name) for name in shared}


@pytest.mark.parametrize("host", ["connectx", "linux-dcb"])
def test_the_script_is_deterministic_valid_bash_and_passes_shellcheck(tmp_path: Path, host: str) -> None:
    snapshot = (diff_line("ens1f0np0 mtu", "1500", "9000") + diff_line("mlx5_0 roce tos", "0", "104") +
                diff_line("ens1f0np0 pfc", "prio-pfc 0:off 1:off 2:off 3:off 4:on 5:off 6:off 7:off", "x"))
    plan = restore_script(host, "node1", snapshot)
    assert plan == restore_script(host, "node1", snapshot)
    assert plan.restored == ["ens1f0np0 mtu", "mlx5_0 roce tos", "ens1f0np0 pfc"]
    lines = plan.script.split("restore_all() {\n", 1)[1].split("\n}\n", 1)[0].splitlines()
    assert [line.split()[:2] for line in lines] == [["restore_pfc", "'ens1f0np0'"],
                                                          ["restore_roce_tos", "'mlx5_0'"],
                                                          ["restore_mtu", "'ens1f0np0'"]], "undone in reverse"
    script = tmp_path / RESTORE
    script.write_text(plan.script)
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    shellcheck = subprocess.run(["sh", "-c", "command -v shellcheck"], capture_output=True, text=True, check=False)
    if shellcheck.returncode != 0:
        pytest.skip(reason="shellcheck is not installed (Debian/Ubuntu: apt-get install shellcheck)")
    done = subprocess.run([shellcheck.stdout.strip(), "--severity=warning", str(script)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stdout
