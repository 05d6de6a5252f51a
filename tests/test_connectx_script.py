"""Runs the rendered fabricgen-nic.sh for real -- bash, against recorded behaviour models of its tools.

No ConnectX hardware exists here. Each test builds a fake host under tmp_path:

* ``bin/`` -- the models from tests/nic_stubs/ (mlnx_qos 1.2, iproute2 ``dcb`` and ``ip``, ``cma_roce_tos``
  and ``cma_roce_mode``; nic_tool_models.py says what each enforces and where each rule comes from) plus
  symlinks to exactly the system utilities the script uses. PATH is that directory only, so this machine's
  own /usr/sbin/ip and dcb can never answer;
* ``sysfs/`` -- a fake /sys (FABRICGEN_SYSFS): netdev MTU and either MLNX_OFED's ``ecn/`` DCQCN files or, for
  the upstream driver, a ``device`` symlink and debugfs ``cc_params``;
* ``state/`` -- the models' NIC state; ``log.jsonl`` -- every tool call with its exit status and the program that
  started it: each run checks that the script started every one under coreutils ``timeout``.

The fake NICs behave like mlx5 as released, which reads the bandwidth of a strict TC back as 100 %. The tests
whose outcome depends on that read-back also run against NVIDIA's 2026 patch "net/mlx5e: Report zero bandwidth
for non-ETS traffic classes" (merge status unknown), which reads it back as 0.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import fabricgen.platforms.common.hostscript as hostscript
import fabricgen.platforms.connectx.read as reader
from fabricgen.api import generate, render_device
from fabricgen.load.fabric import load
from fabricgen.models.device import DeviceModel, NicModel
from fabricgen.platforms.connectx.capability import SCRIPT as SCRIPT_FILE
from fabricgen.platforms.connectx.capability import UNIT
from fabricgen.resolve import resolve

ROOT = Path(__file__).resolve().parent.parent
STUBS = ROOT / "tests" / "nic_stubs"
HOST = "node1"
SCRIPT = f"{HOST}/fabricgen-nic.sh"
# What fabricgen-nic.sh runs besides the NIC tools and bash builtins. A new one must be added here on purpose.
UTILITIES = ("bash", "timeout", "cat", "tee", "sed", "grep", "tr", "head", "tail", "readlink")
KERNELS = {"released-mlx5": False, "mlx5-zero-non-ets-bw": True}
DIFF = re.compile(r'^DIFF (?P<name>.+?): have "')


@dataclass(frozen=True)
class Rendered:
    script: str
    nics: list[NicModel]


def render(intent: Path) -> Rendered:
    source = load(intent, ROOT / "inventory")
    fabric = resolve(source.intent, source.inventory, source.locate)
    host = fabric.devices[HOST].host
    assert host is not None
    return Rendered(generate(fabric)[SCRIPT], list(host.nics))


@dataclass
class FakeHost:
    """A GPU host made of files: the script, the tool models on PATH, a fake /sys, the models' state."""

    root: Path
    nics: list[NicModel]
    env: dict[str, str]

    @property
    def sysfs(self) -> Path:
        return self.root / "sysfs"

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """The script run with ``args`` (and ``env`` added to the host's); every tool call it made must have
        had a time limit (run under coreutils timeout, through the script's ``bounded``)."""
        seen = len(self.calls())
        done = subprocess.run([str(self.root / "fabricgen-nic.sh"), *args], env={**self.env, **(env or {})},
                              capture_output=True, text=True, timeout=120, check=False)
        unbounded = [call for call in self.calls()[seen:] if call["parent"] != "timeout"]
        assert unbounded == [], f"tool calls without a time limit: {unbounded}"
        return done

    def tool(self, *argv: str) -> str:
        """Run one tool model the way the script does; its stdout."""
        done = subprocess.run([str(self.root / "bin" / argv[0]), *argv[1:]], env=self.env,
                              capture_output=True, text=True, timeout=30, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def netdev(self, ifname: str) -> dict[str, Any]:
        state: dict[str, Any] = json.loads(self.tool("nic-model", "show", ifname))
        return state

    def calls(self, tool: str | None = None) -> list[dict[str, Any]]:
        log = Path(self.env["NIC_STUB_LOG"])
        entries = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        return [entry for entry in entries if tool is None or entry["tool"] == tool]

    def read(self, relative: str) -> str:
        return (self.sysfs / relative).read_text().strip()

    def files(self) -> dict[str, str]:
        return {str(p.relative_to(self.root)): p.read_text() for p in sorted(self.root.rglob("*"))
                if p.is_file() and p.parent.name != "bin" and p.name != "log.jsonl"}


def install_tools(bin_dir: Path, omit: tuple[str, ...]) -> None:
    """The models under their tool names, started by this interpreter (stdlib only, hence -S)."""
    bin_dir.mkdir()
    launcher = bin_dir / "nic_tool_models"
    launcher.write_text(f"#!{sys.executable} -S\nimport sys\nsys.path.insert(0, {str(STUBS)!r})\n"
                        "import nic_tool_models\nsys.exit(nic_tool_models.main())\n")
    launcher.chmod(0o755)
    for stub in sorted(STUBS.iterdir()):
        if stub.is_symlink() and stub.name not in omit:
            (bin_dir / stub.name).symlink_to(launcher.name)
    for utility in UTILITIES:
        found = shutil.which(utility)
        assert found, f"{utility} is needed to run the script"
        (bin_dir / utility).symlink_to(found)


def make_fake_sysfs(sysfs: Path, nics: list[NicModel], *, upstream: bool) -> None:
    """Every knob starts away from the intent (DCQCN off, CNP DSCP/priority 0): each has something to do."""
    for index, nic in enumerate(nics):
        net = sysfs / "class" / "net" / nic.interface
        net.mkdir(parents=True)
        (net / "mtu").write_text("1500\n")
        if upstream:  # no ecn/: the script finds debugfs through the PCI address of the netdev
            bdf = f"0000:{0x1a + index:02x}:00.0"
            device = sysfs / "devices" / "pci0000:00" / bdf
            device.mkdir(parents=True)
            (net / "device").symlink_to(os.path.relpath(device, net))
            cc_params = sysfs / "kernel" / "debug" / "mlx5" / bdf / "cc_params"
            cc_params.mkdir(parents=True)
            for name in ("np_cnp_dscp", "np_cnp_prio", "np_cnp_prio_mode", "np_min_time_between_cnps"):
                (cc_params / name).write_text("0\n")
            continue
        for role in ("roce_np", "roce_rp"):
            (net / "ecn" / role / "enable").mkdir(parents=True)
            for prio in range(8):
                (net / "ecn" / role / "enable" / str(prio)).write_text("0\n")
        (net / "ecn" / "roce_np" / "cnp_dscp").write_text("0\n")
        (net / "ecn" / "roce_np" / "cnp_802p_prio").write_text("0\n")


def make_host(root: Path, rendered: Rendered, *, zero_non_ets_bw: bool = False, upstream: bool = False,
              omit: tuple[str, ...] = ()) -> FakeHost:
    root.mkdir(parents=True, exist_ok=True)
    install_tools(root / "bin", omit)
    make_fake_sysfs(root / "sysfs", rendered.nics, upstream=upstream)
    script = root / "fabricgen-nic.sh"
    script.write_text(rendered.script)
    script.chmod(0o755)
    env = {"PATH": str(root / "bin"), "FABRICGEN_SYSFS": str(root / "sysfs"), "LC_ALL": "C",
           "NIC_STUB_STATE": str(root / "state"), "NIC_STUB_LOG": str(root / "log.jsonl")}
    host = FakeHost(root, rendered.nics, env)
    for nic in rendered.nics:
        kernel = ["--report-non-ets-bw-as-zero"] if zero_non_ets_bw else []
        host.tool("nic-model", "netdev", nic.interface, *kernel)
        # Upstream rdma_cm already defaults to RoCE v2; start at v1 so the mode setting has something to do.
        host.tool("nic-model", "rdma", nic.rdma_device, "--mode", "IB/RoCE v1")
    Path(env["NIC_STUB_LOG"]).unlink()
    return host


def diff_names(stdout: str) -> list[str]:
    return [m["name"] for line in stdout.splitlines() if (m := DIFF.match(line))]


def expected_diffs(nic: NicModel) -> set[str]:
    """Every setting the script owns for one NIC, named as it prints them."""
    i, rdma = nic.interface, nic.rdma_device
    return {f"{i} mtu", f"{i} dcbx", f"{i} trust", f"{i} pfc", f"{i} ets", f"{i} cnp dscp",
            f"{i} cnp 802.1p priority", f"{rdma} roce tos", f"{rdma} roce mode",
            f"{i} dscp-prio",
            *(f"{i} dcqcn {role} prio {prio}" for prio in nic.dcqcn_priorities for role in ("np", "rp"))}


def changes_something(call: dict[str, Any]) -> bool:
    tool: str = call["tool"]
    argv: list[str] = call["argv"]
    if tool == "mlnx_qos":
        return argv[2:] != []  # anything but `mlnx_qos -i IF` (which only reports)
    if tool in ("cma_roce_tos", "cma_roce_mode"):
        return "-t" in argv or "-m" in argv
    return tool == "ip"


def assert_nic_holds_intent(host: FakeHost, nic: NicModel) -> None:
    i = nic.interface
    assert host.read(f"class/net/{i}/mtu") == str(nic.mtu)
    report = host.tool("mlnx_qos", "-i", i).splitlines()
    assert "DCBX mode: OS controlled" in report
    assert "Priority trust state: dscp" in report
    pfc = [f"{prio}:{'on' if flag else 'off'}" for prio, flag in enumerate(nic.pfc)]
    assert host.tool("dcb", "pfc", "show", "dev", i, "prio-pfc").split() == ["prio-pfc", *pfc]
    state = host.netdev(i)
    assert state["ets_request"] == {"prio_tc": nic.prio_tc, "tsa": nic.tsa, "tc_bw": nic.tcbw}
    readback = state["ets_readback"]
    assert (readback["prio_tc"], readback["tsa"]) == (nic.prio_tc, nic.tsa)
    weighted = [tc for tc, bw in enumerate(nic.tcbw) if bw]  # mlx5 reports 0 % TCs in more than one way
    assert [readback["tc_bw"][tc] for tc in weighted] == [nic.tcbw[tc] for tc in weighted]
    want_map = [nic.dscp2prio[dscp] for dscp in range(64)]
    assert state["dscp2prio"] == want_map, "the NIC classifies some DSCP to the wrong priority"
    for prio in range(8):
        enabled = "1" if prio in nic.dcqcn_priorities and nic.dcqcn_enabled else "0"
        assert host.read(f"class/net/{i}/ecn/roce_np/enable/{prio}") == enabled
        assert host.read(f"class/net/{i}/ecn/roce_rp/enable/{prio}") == enabled
    assert host.read(f"class/net/{i}/ecn/roce_np/cnp_dscp") == str(nic.cnp_dscp)
    assert host.read(f"class/net/{i}/ecn/roce_np/cnp_802p_prio") == str(nic.cnp_priority)
    assert host.tool("cma_roce_tos", "-d", nic.rdma_device, "-p", "1").strip() == str(nic.roce_tos)
    assert host.tool("cma_roce_mode", "-d", nic.rdma_device, "-p", "1").strip() == "RoCE v2"


def applied(host: FakeHost) -> subprocess.CompletedProcess[str]:
    done = host.run("--apply")
    assert done.returncode == 0, f"--apply failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def example() -> Rendered:
    return render(ROOT / "intent" / "fabric.yaml")


@pytest.fixture(params=sorted(KERNELS))
def zero_non_ets_bw(request: pytest.FixtureRequest) -> bool:
    return KERNELS[request.param]


@pytest.fixture
def host(tmp_path: Path, example: Rendered) -> FakeHost:
    return make_host(tmp_path, example)


@pytest.fixture
def kernel_host(tmp_path: Path, example: Rendered, zero_non_ets_bw: bool) -> FakeHost:
    return make_host(tmp_path, example, zero_non_ets_bw=zero_non_ets_bw)


@pytest.fixture(scope="module")
def pristine_host(tmp_path_factory: pytest.TempPathFactory, example: Rendered) -> FakeHost:
    return make_host(tmp_path_factory.mktemp("models"), example)


@pytest.fixture
def model_host(pristine_host: FakeHost) -> Iterator[FakeHost]:
    """One fresh host for the model checks below, its NIC state restored after each."""
    state = pristine_host.root / "state"
    saved = {path: path.read_bytes() for path in state.iterdir()}
    yield pristine_host
    for path in state.iterdir():
        if path not in saved:
            path.unlink()
    for path, data in saved.items():
        path.write_bytes(data)


def test_check_on_fresh_nics_reports_every_setting_and_changes_nothing(host: FakeHost) -> None:
    before = host.files()
    done = host.run("--check")
    assert done.returncode == 1, done.stderr
    assert len(host.nics) == 2
    every_setting = {name for nic in host.nics for name in expected_diffs(nic)}
    assert sorted(diff_names(done.stdout)) == sorted(every_setting)
    assert not [call for call in host.calls() if changes_something(call)]
    assert host.files() == before


def test_apply_configures_fresh_nics_as_the_intent_says(kernel_host: FakeHost, example: Rendered) -> None:
    # The bundled example: lossless RDMA on priority 3 (DSCP 26 -> ToS 104), CNPs on DSCP 48 / priority 6.
    nic = example.nics[0]
    assert (nic.mtu, nic.pfc, nic.roce_tos) == (9000, [0, 0, 0, 1, 0, 0, 0, 0], 104)
    assert (nic.cnp_dscp, nic.cnp_priority) == (48, 6)
    done = applied(kernel_host)
    assert f"ok: {HOST} NIC settings hold" in done.stdout
    for nic in kernel_host.nics:
        assert_nic_holds_intent(kernel_host, nic)


def test_second_apply_changes_nothing_and_check_passes(kernel_host: FakeHost) -> None:
    host = kernel_host
    applied(host)
    toggles = {nic.interface: host.netdev(nic.interface)["link_toggles"] for nic in host.nics}
    assert set(toggles.values()) == {1}, "the first apply changes PFC once per NIC (one link flap)"
    seen = len(host.calls())
    applied(host)
    assert [call["argv"] for call in host.calls()[seen:] if changes_something(call)] == []
    assert {nic.interface: host.netdev(nic.interface)["link_toggles"] for nic in host.nics} == toggles
    done = host.run("--check")
    assert (done.returncode, diff_names(done.stdout)) == (0, [])
    assert f"ok: {HOST} NIC settings match" in done.stdout


def test_check_names_only_the_drifted_nic_and_setting(host: FakeHost) -> None:
    applied(host)
    drifted = host.nics[1].interface
    host.tool("mlnx_qos", "-i", drifted, "--pfc", "0,0,0,0,1,0,0,0")  # someone moved lossless to priority 4
    done = host.run("--check")
    assert done.returncode == 1
    assert diff_names(done.stdout) == [f"{drifted} pfc"]
    assert '"prio-pfc 0:off 1:off 2:off 3:off 4:on 5:off 6:off 7:off"' in done.stdout


def test_every_mlnx_qos_call_of_apply_passes_the_models_checks(host: FakeHost) -> None:
    host.run("--apply")  # whether the result verifies is the business of the tests above
    calls = [call["argv"] for call in host.calls("mlnx_qos") if changes_something(call)]
    assert len(calls) >= 4 * len(host.nics)  # dcbx, trust, pfc, ets
    assert [call for call in host.calls("mlnx_qos") if call["status"] != 0] == []
    assert {call["parent"] for call in host.calls()} == {"timeout"}, "every tool call has a time limit"
    for argv in calls:
        assert ("--tsa" in argv) == ("--tcbw" in argv), argv
        assert not ("--trust" in argv and "--dscp2prio" in argv), argv


def test_upstream_driver_gets_cnp_through_debugfs(tmp_path: Path, example: Rendered) -> None:
    host = make_host(tmp_path, example, upstream=True)
    done = applied(host)
    for index, nic in enumerate(host.nics):
        cc_params = f"kernel/debug/mlx5/0000:{0x1a + index:02x}:00.0/cc_params"
        assert host.read(f"{cc_params}/np_cnp_dscp") == str(nic.cnp_dscp)
        assert host.read(f"{cc_params}/np_cnp_prio") == str(nic.cnp_priority)
        assert not (host.sysfs / "class" / "net" / nic.interface / "ecn").exists()
        assert f"note: {nic.interface}: no dcqcn np prio 3 knob without MLNX_OFED" in done.stderr
    assert "ROCE_CC_PRIO_MASK" in done.stderr


def test_missing_tool_exits_2_before_touching_anything(tmp_path: Path, example: Rendered) -> None:
    host = make_host(tmp_path, example, omit=("dcb",))
    done = host.run("--apply")
    assert done.returncode == 2
    assert "error: dcb not found" in done.stderr
    assert host.calls() == []


def test_usage(host: FakeHost) -> None:
    assert host.run("--bogus").returncode == 2
    helped = host.run("--help")
    assert helped.returncode == 0 and "--check  change nothing" in helped.stdout
    assert all(line.startswith("#") for line in helped.stdout.splitlines()), "--help prints the header only"
    assert "FABRICGEN_TOOL_TIMEOUT" in helped.stdout


def test_script_is_valid_bash(tmp_path: Path, example: Rendered) -> None:
    script = tmp_path / "fabricgen-nic.sh"
    script.write_text(example.script)
    done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_script_passes_shellcheck(tmp_path: Path, example: Rendered) -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip(reason="shellcheck is not installed (Debian/Ubuntu: apt-get install shellcheck)")
    script = tmp_path / "fabricgen-nic.sh"
    script.write_text(example.script)
    done = subprocess.run([shellcheck, "--severity=warning", str(script)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout


def test_dscp_off_its_default_priority_gets_its_own_mapping(tmp_path: Path) -> None:
    # Management on DSCP 10 (AF11) but priority 2: trust dscp alone would put DSCP 10 on priority 10>>3 = 1.
    text = (ROOT / "intent" / "fabric.yaml").read_text()
    assert text.count("dscp: [16]") == 1
    (tmp_path / "fabric.yaml").write_text(text.replace("dscp: [16]", "dscp: [10]"))
    rendered = render(tmp_path / "fabric.yaml")
    assert rendered.nics[0].dscp2prio[10] == 2
    dscp_lines = [line.split() for line in rendered.script.splitlines() if line.lstrip().startswith("dscp_setting ")]
    assert len(dscp_lines) == len(rendered.nics)
    assert all("10:2" in words and len(words) == 2 + 64 for words in dscp_lines)

    host = make_host(tmp_path / "host", rendered)
    applied(host)
    for nic in host.nics:
        calls = [call["argv"] for call in host.calls("mlnx_qos") if call["argv"][1] == nic.interface]
        trust = calls.index(["-i", nic.interface, "--trust", "dscp"])
        mapping = next(index for index, argv in enumerate(calls) if "set,10,2" in argv)
        assert trust < mapping, "--trust dscp resets every DSCP to d>>3, so it must come first"
        assert "--trust" not in calls[mapping], "mlnx_qos refuses --trust and --dscp2prio in one call"
        assert "10:2" in host.tool("dcb", "-N", "app", "show", "dev", nic.interface, "dscp-prio").split()
        assert_nic_holds_intent(host, nic)
    assert host.run("--check").returncode == 0


def test_every_dscp_rides_the_priority_its_leaf_gives_it(tmp_path: Path) -> None:
    # The intent's default class (priority 0) takes every DSCP no class lists. The ConnectX firmware map would put
    # DSCP 24-31 on the RoCE priority 3 and 48-55 on the CNP's strict priority 6: the host must not keep it.
    rendered = render(ROOT / "intent" / "fabric.yaml")
    source = load(ROOT / "intent" / "fabric.yaml", ROOT / "inventory")
    fabric = resolve(source.intent, source.inventory, source.locate)
    for nic in rendered.nics:
        leaf = fabric.devices[(nic.peer or "").split(":")[0]]
        assert leaf.qos is not None
        assert nic.dscp2prio == leaf.qos.dscp_to_tc
    assert rendered.nics[0].dscp2prio[27] == 0 != 27 >> 3
    assert rendered.nics[0].dscp2prio[50] == 0 != 50 >> 3

    host = make_host(tmp_path / "host", rendered)
    applied(host)
    for nic in host.nics:
        assert host.netdev(nic.interface)["dscp2prio"] == [nic.dscp2prio[dscp] for dscp in range(64)]


def test_check_names_only_the_dscps_that_drifted_and_apply_puts_them_back(tmp_path: Path) -> None:
    rendered = render(ROOT / "intent" / "fabric.yaml")
    host = make_host(tmp_path / "host", rendered)
    applied(host)
    ifname = host.nics[0].interface
    host.tool("mlnx_qos", "-i", ifname, "--dscp2prio", "set,30,3", "--dscp2prio", "set,26,0")  # a hand edit
    done = host.run("--check")
    assert done.returncode == 1
    assert f'DIFF {ifname} dscp-prio: have "26:0 30:3", want "26:3 30:0"' in done.stdout.splitlines()
    fixed = applied(host)
    assert f'SET  {ifname} dscp-prio: "26:0 30:3" -> "26:3 30:0"' in fixed.stdout.splitlines()
    assert host.run("--check").returncode == 0


def test_apply_converges_when_one_class_has_all_the_bandwidth(tmp_path: Path, zero_non_ets_bw: bool) -> None:
    # Default traffic DWRR 100 %, the rest strict: TC 0 is the only ETS TC, and every other TC (strict, 0 %) reads
    # back from released mlx5 drivers as 100 %, which the script must not take for drift.
    intent = (ROOT / "intent" / "fabric.yaml").read_text()
    for old, new in (("scheduling: {dwrr: 40}", "scheduling: {dwrr: 100}"),
                     ("scheduling: {dwrr: 10}", "scheduling: strict"),
                     ("scheduling: {dwrr: 50}", "scheduling: strict")):
        assert intent.count(old) == 1
        intent = intent.replace(old, new)
    (tmp_path / "fabric.yaml").write_text(intent)
    rendered = render(tmp_path / "fabric.yaml")
    assert (rendered.nics[0].tsa, rendered.nics[0].tcbw) == (["ets"] + ["strict"] * 7, [100] + [0] * 7)
    host = make_host(tmp_path / "host", rendered, zero_non_ets_bw=zero_non_ets_bw)
    applied(host)
    for nic in host.nics:
        assert_nic_holds_intent(host, nic)
    assert host.run("--check").returncode == 0


# --- The models themselves: the checks that make "every call passed" above mean something -------------------

FRESH_NIC_REFUSES = [
    (["--tcbw", "40,0,10,50,0,0,0,0"], "ETS BW for a strict/vendor TC must be 0"),  # TSA still vendor
    (["--tsa", "ets,ets,ets,ets,ets,ets,strict,ets"], "Netlink error"),  # resends BW 100 x 8: sum is illegal
    (["--tsa", "ets,ets,ets,ets,ets,ets,strict,ets", "--tcbw", "40,0,10,50,0,0,10,0"],
     "ETS BW for a strict/vendor TC must be 0"),
    (["--tsa", "ets,ets,ets,ets,ets,ets,strict,ets", "--tcbw", "40,0,10,40,0,0,0,0"], "Netlink error"),
    (["--tsa", "ets,ets,ets,ets,ets,ets,cbs,ets", "--tcbw", "40,0,10,50,0,0,0,0"], "Bad TSA value"),
    (["--tsa", "ets,ets,ets", "--tcbw", "40,0,10,50,0,0,0,0"], "tsa list must have 8 items"),
    (["--pfc", "0,0,0,1"], "pfc list must have 8 items"),
    (["--pfc", "0,0,0,2,0,0,0,0"], "Bad value for PFC"),
    (["--pfc", "0,0,0,1,0,0,0,0,0"], "Too many items for PFC"),
    (["--prio_tc", "0,1,2,3,4,5,6,8"], "Bad value for UP => TC mapping"),
    (["--trust", "dscp", "--dscp2prio", "set,26,3"], "cannot be used at the same time"),
    (["--trust", "tos"], "Invalid trust state command"),
    (["--dscp2prio", "set,64,3"], "Invalid dscp2prio command"),
    (["--dscp2prio", "del,26,3"], "dscp2prio command failed"),  # no such APP entry
    (["-d", "host"], "Invalid dcbx mode command"),
]


@pytest.mark.parametrize(("args", "message"), FRESH_NIC_REFUSES,
                         ids=[" ".join(args) for args, _ in FRESH_NIC_REFUSES])
def test_mlnx_qos_model_refuses_what_mlnx_qos_refuses(model_host: FakeHost, args: list[str],
                                                       message: str) -> None:
    host = model_host
    ifname = host.nics[0].interface
    before = host.netdev(ifname)
    done = subprocess.run([str(host.root / "bin" / "mlnx_qos"), "-i", ifname, *args], env=host.env,
                          capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert message in done.stderr
    assert host.netdev(ifname) == before


def test_mlnx_qos_model_accepts_the_canonical_roce_sequence(model_host: FakeHost) -> None:
    host = model_host
    ifname = host.nics[0].interface
    for args in (["-d", "os"], ["--trust", "dscp"], ["--pfc", "0,0,0,1,0,0,0,0"],
                 ["--prio_tc", "0,1,2,3,4,5,6,7", "--tsa", "ets,ets,ets,ets,ets,ets,strict,ets",
                  "--tcbw", "50,0,0,50,0,0,0,0"]):
        host.tool("mlnx_qos", "-i", ifname, *args)
    assert host.tool("dcb", "ets", "show", "dev", ifname, "tc-tsa").split()[7] == "6:strict"
    assert host.tool("dcb", "-N", "app", "show", "dev", ifname, "dscp-prio").split()[27] == "26:3"


# --- time limits: a tool that never answers ---------------------------------------------------------------

HANG = STUBS / "hang"
# Seconds; the default is hostscript.TOOL_TIMEOUT_S. Short, yet long enough for the models' healthy calls on a
# loaded machine: a full suite run on 2 busy cores saw one take more than 0.3 s.
SHORT = {"FABRICGEN_TOOL_TIMEOUT": "2"}


def hang(host: FakeHost, tool: str) -> None:
    """``tool`` on the host's PATH replaced by one that never answers (tests/nic_stubs/hang), as a wedged driver
    or firmware leaves it."""
    bin_dir = host.root / "bin"
    (bin_dir / tool).unlink(missing_ok=True)
    (bin_dir / tool).symlink_to(HANG)
    if not (bin_dir / "sleep").exists():
        sleep = shutil.which("sleep")
        assert sleep, "sleep is needed by the hanging stub"
        (bin_dir / "sleep").symlink_to(sleep)


# A tool of each kind the script bounds -- a NIC tool read in a pipeline, a sysfs read and write, a setting's command,
# modprobe -- and a mode that reaches it first. (FakeHost.run proves every call of a model ran under timeout.)
HANGING = [("mlnx_qos", "--check"), ("cat", "--check"), ("ip", "--apply"), ("tee", "--apply"), ("modprobe", "--apply")]


@pytest.mark.parametrize(("tool", "mode"), HANGING)
def test_a_tool_that_never_answers_stops_the_script_with_its_name(tmp_path: Path, example: Rendered, tool: str,
                                                                  mode: str) -> None:
    host = make_host(tmp_path, example)
    hang(host, tool)
    done = host.run(mode, env=SHORT)  # fails unless every tool call ran under timeout (the stub sleeps 600 s)
    assert done.returncode == 3, done.stderr
    assert re.search(rf"^error: '{tool} .*' did not finish within 2s \(FABRICGEN_TOOL_TIMEOUT\): stopped$",
                     done.stderr, re.MULTILINE), done.stderr
    assert "ok:" not in done.stdout


def test_upstream_debugfs_lookup_is_bounded_too(tmp_path: Path, example: Rendered) -> None:
    host = make_host(tmp_path, example, upstream=True)  # no ecn/: readlink finds the PCI address
    hang(host, "readlink")
    done = host.run("--check", env=SHORT)  # fails unless every tool call ran under timeout (the stub sleeps 600 s)
    assert done.returncode == 3 and "error: 'readlink -f " in done.stderr, done.stderr


def test_a_tool_that_ignores_sigterm_is_killed(tmp_path: Path, example: Rendered) -> None:
    host = make_host(tmp_path, example)
    hang(host, "mlnx_qos")
    # SIGTERM ignored: without timeout's -k (hostscript.KILL_AFTER_S) the script would wait out the stub's 600 s
    # sleep and host.run's 120 s guard would fail the test; it ends, so SIGKILL ended the tool.
    done = host.run("--check", env={**SHORT, "HANG_STUB_IGNORE_TERM": "1"})
    assert done.returncode == 3 and "error: 'mlnx_qos -i " in done.stderr, done.stderr


def test_apply_stops_at_the_first_timeout_and_says_so(tmp_path: Path, example: Rendered) -> None:
    host = make_host(tmp_path, example)
    hang(host, "cma_roce_tos")  # the last tool of the first NIC: settings before it are applied
    done = host.run("--apply", env=SHORT)
    assert done.returncode == 3
    assert done.stderr.count("did not finish within") == 1, done.stderr
    first, second = host.nics
    assert host.read(f"class/net/{first.interface}/mtu") == str(first.mtu)
    assert host.read(f"class/net/{second.interface}/mtu") == "1500", "the script went on past the timeout"


@pytest.mark.parametrize("value", ["0", "0.0", "-1", "abc", "5s", "1e3", "30 "])
def test_a_bad_time_limit_is_a_usage_error_before_touching_anything(host: FakeHost, value: str) -> None:
    done = host.run("--apply", env={"FABRICGEN_TOOL_TIMEOUT": value})
    assert done.returncode == 2
    assert f"error: FABRICGEN_TOOL_TIMEOUT={value}: expected seconds, a number above 0" in done.stderr
    assert host.calls() == []


def resolved_host() -> DeviceModel:
    source = load(ROOT / "intent" / "fabric.yaml", ROOT / "inventory")
    return resolve(source.intent, source.inventory, source.locate).devices[HOST]


def test_unit_bounds_the_whole_run(example: Rendered) -> None:
    unit = render_device(resolved_host())[UNIT]
    service = unit.split("[Service]\n", 1)[1].split("\n[", 1)[0].splitlines()
    assert "Type=oneshot" in service  # which has no start timeout unless given one
    assert f"TimeoutStartSec={hostscript.START_TIMEOUT}" in service
    assert f'TOOL_TIMEOUT="${{FABRICGEN_TOOL_TIMEOUT:-{hostscript.TOOL_TIMEOUT_S}}}"' in example.script
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip(reason="systemd-analyze is not installed: the time span is not parsed by systemd")
    done = subprocess.run([analyze, "timespan", hostscript.START_TIMEOUT], capture_output=True, text=True,
                          check=False)
    parsed = re.search(r"μs: (\d+)", done.stdout)
    assert done.returncode == 0 and parsed is not None, done.stderr
    # Room for a healthy run of many NICs plus the few calls that may time out before the script stops.
    assert int(parsed.group(1)) >= 10 * (hostscript.TOOL_TIMEOUT_S + hostscript.KILL_AFTER_S) * 1_000_000


def test_reader_takes_bounded_commands_as_the_commands() -> None:
    device = resolved_host()
    assert device.host is not None
    files = render_device(device)
    script = files[SCRIPT_FILE]
    trust = '-- mlnx_qos -i "$ifname" --trust \'dscp\''
    assert script.count(trust) == len(device.host.nics)
    wrapped = script.replace(trust, '-- bounded mlnx_qos -i "$ifname" --trust \'pcp\'')
    # A hand edit in the last NIC function, written like the script's own helpers.
    wrapped = wrapped.replace("\n}\n\nall_nics() {",
                              '\n  bounded mlnx_qos -i "$ifname" --pfc 1,0,0,1,0,0,0,0\n}\n\nall_nics() {', 1)
    host = reader.read(device, {**files, SCRIPT_FILE: wrapped}).host
    assert host is not None
    assert [nic.trust for nic in host.nics] == ["pcp"] * len(device.host.nics)
    assert [nic.pfc for nic in host.nics] == [nic.pfc for nic in device.host.nics[:-1]] + [[1, 0, 0, 1, 0, 0, 0, 0]]
