"""linux-dcb: the renderer, the rendered fabricgen-dcb.sh run for real, the reader and the round trip.

No dcbnl NIC exists here. The script tests build a fake GPU host under tmp_path:

* ``bin/`` -- the models from tests/dcb_stubs/ (iproute2 ``dcb`` over a bnxt_en-like driver, ``ip``, configfs
  ``mkdir``; dcb_tool_models.py says what each enforces and where each rule comes from) plus symlinks to exactly
  the system utilities the script uses. PATH is that directory only, so this machine's own /usr/sbin/dcb and ip
  can never answer;
* ``sysfs/`` -- a fake /sys (FABRICGEN_SYSFS) with the netdev MTUs; ``configfs/`` -- a fake configfs
  (FABRICGEN_CONFIGFS) with ``rdma_cm/`` (the module is loaded) where ``mkdir rdma_cm/DEV`` works as the kernel's;
* ``state/`` -- the models' NIC state; ``log.jsonl`` -- every tool call with its exit status and the program that
  started it: each run checks that the script started every one under coreutils ``timeout``.

The mixed example (intent/mixed.yaml, inventory/mixed/) has the two linux-dcb hosts, node3 and node4.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from pydantic import ValidationError
from test_roundtrip import intents, scramble

import fabricgen.platforms.common.hostscript as hostscript
import fabricgen.platforms.linux_dcb.read as reader
from fabricgen.api import render_device
from fabricgen.load.fabric import load
from fabricgen.models.device import DeviceModel, Fabric, NicModel
from fabricgen.models.diagnostics import InputError
from fabricgen.models.intent import Intent, check_intent
from fabricgen.models.inventory import Inventory
from fabricgen.platforms import ConfigReadError, get_platform
from fabricgen.platforms.linux_dcb.capability import CAPABILITY, NCCL_ENV, SCRIPT, UNIT
from fabricgen.platforms.linux_dcb.render import dscp_map
from fabricgen.resolve import resolve

from conftest import ROOT

STUBS = ROOT / "tests" / "dcb_stubs"
HOSTS = ("node3", "node4")
# What fabricgen-dcb.sh runs besides the models and bash builtins. A new one must be added here on purpose.
UTILITIES = ("bash", "timeout", "cat", "tee", "sed")
TSA = {"strict": 0, "ets": 2}


# --- the mixed example ------------------------------------------------------------------------------------

def _importable(platform: str) -> bool:
    try:
        get_platform(platform)
    except ModuleNotFoundError:
        return False
    return True


@functools.cache
def mixed_inventory(switches_as_eos: bool = False) -> tuple[Intent, Inventory]:
    """The mixed example. A GPU host's model does not depend on its switches' platform, so a switch whose
    platform package is missing (they land separately) -- or, with ``switches_as_eos``, every switch -- resolves
    as EOS: generated intents then only have to pass linux-dcb's limits, not those of NVUE or NX-OS."""
    source = load(ROOT / "intent" / "mixed.yaml", ROOT / "inventory" / "mixed")
    devices = {name: device if device.role == "gpu-host" or (_importable(device.platform) and not switches_as_eos)
               else device.model_copy(update={"platform": "eos"}) for name, device in source.inventory.devices.items()}
    return source.intent, source.inventory.model_copy(update={"devices": devices})


@functools.cache
def mixed() -> Fabric:
    intent, inventory = mixed_inventory()
    return resolve(intent, inventory)


def host(name: str) -> DeviceModel:
    return mixed().devices[name]


def nics(device: DeviceModel) -> list[NicModel]:
    assert device.host is not None
    return list(device.host.nics)


def script_of(device: DeviceModel) -> str:
    return render_device(device)[SCRIPT]


def with_nics(device: DeviceModel, **update: Any) -> DeviceModel:
    """``device`` with every NIC changed by ``update``."""
    assert device.host is not None
    changed = [nic.model_copy(update=update) for nic in device.host.nics]
    return device.model_copy(update={"host": device.host.model_copy(update={"nics": changed})})


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def edit(text: str, old: str, new: str, count: int = 1) -> str:
    assert text.count(old) >= count, f"{old!r} not in the text"
    return text.replace(old, new, count)


# --- the renderer ---------------------------------------------------------------------------------------

def test_platform_is_registered_with_its_capability() -> None:
    platform = get_platform("linux-dcb")
    assert platform.capability is CAPABILITY
    assert platform.read is reader.read and platform.owned is reader.owned
    assert (CAPABILITY.kind, CAPABILITY.output_files) == ("host", (SCRIPT, UNIT, NCCL_ENV))
    assert [host(name).platform for name in HOSTS] == ["linux-dcb", "linux-dcb"]


def test_mixed_hosts_get_their_nics_and_the_fabric_recipe() -> None:
    device = host("node3")
    first, second = nics(device)
    assert [(nic.interface, nic.rdma_device) for nic in (first, second)] == [("ens1f0np0", "bnxt_re0"),
                                                                            ("ens2f0np0", "bnxt_re1")]
    script = script_of(device)
    # Priorities no class uses ride the default class's TC 0; TCs nothing maps to are strict at 0 %, which bnxt_en
    # accepts (ETS TCs at 0 % beside an ETS total of 100 it refuses as "starving a TC").
    ets = ("prio-tc 0:0 1:0 2:2 3:3 4:0 5:0 6:6 7:0 tc-tsa 0:ets 1:strict 2:ets 3:ets 4:strict 5:strict 6:strict "
           "7:strict tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0")
    pfc = "prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"
    lines = [
        "  local ifname=ens1f0np0 rdma=bnxt_re0 port",
        f"""  setting "$ifname ets" "$(read_ets "$ifname" 1 4 5 6 7)" '{ets}' -- dcb ets set dev "$ifname" {ets}""",
        '  dcb_caps "$ifname" 7 1',
        f"""  setting "$ifname pfc" "$(words dcb pfc show dev "$ifname" prio-pfc)" '{pfc}' -- dcb pfc set dev """
        f'"$ifname" {pfc}',
        """  setting "$ifname dcbx" "$(words dcb dcbx show dev "$ifname")" 'host ieee' -- dcb dcbx set dev "$ifname" """
        "host ieee",
        '  apptrust "$ifname" dscp',
        """  note "$ifname: no generic interface for DCQCN/CNP; set with the NIC vendor's tool: DCQCN on for """
        """priority 3, CNP DSCP 48 and 802.1p priority 6\"""",
        """  setting "$rdma roce tos" "$(read_file "$port/default_roce_tos")" '104' -- write_file """
        """"$port/default_roce_tos" '104'""",
    ]
    body = script.split("\nnic_ens1f0np0() {\n", 1)[1].split("\n}\n", 1)[0] + "\n"
    for line in lines:
        assert body.count(line + "\n") == 1, line
    assert body.index("dcb ets set") < body.index("dcb pfc set"), "bnxt_en refuses PFC before ETS"
    assert "delay" not in body and "dcb app replace" not in body


def test_every_dscp_gets_its_app_entry_as_its_leaf_classifies_it() -> None:
    # A DSCP no class lists rides the default class's priority on the leaf, so on the host too: DSCP>>3 would put
    # DSCP 24-31 beside RDMA on lossless priority 3 and 48-55 on the CNP's strict priority 6.
    device = host("node3")
    nic = nics(device)[0]
    leaf = mixed().devices[(nic.peer or "").split(":")[0]]
    assert leaf.qos is not None and nic.dscp2prio == leaf.qos.dscp_to_tc
    assert (nic.dscp2prio[16], nic.dscp2prio[26], nic.dscp2prio[27], nic.dscp2prio[48], nic.dscp2prio[50]) == \
        (2, 3, 0, 6, 0)
    entries = [f"{dscp}:{prio}" for dscp, prio in sorted(nic.dscp2prio.items())]
    assert f'  dscp_setting "$ifname" {" ".join(entries)}\n' in script_of(device)
    overridden = with_nics(device, dscp2prio={**nic.dscp2prio, 10: 2, 26: 5})
    line = next(line for line in script_of(overridden).splitlines() if line.startswith("  dscp_setting"))
    assert " 10:2 " in line and " 26:5 " in line and " 11:0 " in line and line.count(":") == 64


def test_pcp_trust_flushes_dscp_entries() -> None:
    script = script_of(with_nics(host("node3"), trust="pcp"))
    assert script.count('  dscp_setting "$ifname"\n') == 2
    assert script.count('  apptrust "$ifname" pcp\n') == 2


def test_values_from_the_model_are_shell_quoted() -> None:
    device = with_nics(host("node3"), interface="eth 0", rdma_device="odd$dev")
    script = script_of(device)
    assert "  local ifname='eth 0' rdma='odd$dev' port\n" in script
    assert "\neth_0() {" not in script and "\nnic_eth_0() {" in script


def test_unit_and_nccl_env() -> None:
    files = render_device(host("node4"))
    # At boot: a commit still pending is reverted first (its undo under /var/lib/fabricgen), then the script runs.
    assert "/var/lib/fabricgen/commits/$$p/revert.sh boot || exit 1; fi; [ ! -e /usr/local/sbin/fabricgen-dcb.sh ] " \
           "|| exec /usr/local/sbin/fabricgen-dcb.sh --apply'\n" in files[UNIT]
    assert "Type=oneshot\n" in files[UNIT]
    assert f"\nTimeoutStartSec={hostscript.START_TIMEOUT}\n" in files[UNIT]  # a oneshot unit has none by default
    env = [line for line in files[NCCL_ENV].splitlines() if not line.startswith("#")]
    assert env == ["NCCL_IB_GID_INDEX=3", "NCCL_IB_HCA==bnxt_re0:1,bnxt_re1:1", "NCCL_IB_TC=104",
                   "NCCL_SOCKET_IFNAME==eno1"]


def test_rendering_is_deterministic() -> None:
    assert render_device(host("node3")) == render_device(host("node3").model_copy(deep=True))


def variants() -> list[DeviceModel]:
    """node3 as resolved, with PCP trust, and without RDMA NICs."""
    device = host("node3")
    assert device.host is not None
    no_nics = device.model_copy(update={"host": device.host.model_copy(update={"nics": []})})
    return [device, with_nics(device, trust="pcp"), no_nics]


def test_script_is_valid_bash(tmp_path: Path) -> None:
    for device in variants():
        script = tmp_path / SCRIPT
        script.write_text(script_of(device))
        done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr


def test_script_passes_shellcheck(tmp_path: Path) -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip(reason="shellcheck is not installed (Debian/Ubuntu: apt-get install shellcheck)")
    for device in variants():
        script = tmp_path / SCRIPT
        script.write_text(script_of(device))
        done = subprocess.run([shellcheck, "--severity=warning", str(script)], capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stdout


# --- the script, run against the behaviour models ------------------------------------------------------------

@dataclass
class FakeHost:
    """A GPU host made of files: the script, the tool models on PATH, fake /sys and configfs, the models' state."""

    root: Path
    nics: list[NicModel]
    env: dict[str, str]

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """The script run with ``args`` (and ``env`` added to the host's); every tool call it made must have
        had a time limit (run under coreutils timeout, through the script's ``bounded``)."""
        seen = len(self.calls())
        done = subprocess.run([str(self.root / SCRIPT), *args], env={**self.env, **(env or {})},
                              capture_output=True, text=True, timeout=120, check=False)
        unbounded = [call for call in self.calls()[seen:] if call["parent"] != "timeout"]
        assert unbounded == [], f"tool calls without a time limit: {unbounded}"
        return done

    def tool(self, *argv: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        """Run one tool model the way the script does."""
        done = subprocess.run([str(self.root / "bin" / argv[0]), *argv[1:]], env=self.env, capture_output=True,
                              text=True, timeout=30, check=False)
        if ok:
            assert done.returncode == 0, done.stderr
        return done

    def netdev(self, ifname: str) -> dict[str, Any]:
        state: dict[str, Any] = json.loads(self.tool("dcb-model", "show", ifname).stdout)
        return state

    def calls(self) -> list[dict[str, Any]]:
        log = Path(self.env["DCB_STUB_LOG"])
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def read(self, relative: str) -> str:
        return (self.root / relative).read_text().strip()

    def files(self) -> dict[str, str]:
        return {str(p.relative_to(self.root)): p.read_text() for p in sorted(self.root.rglob("*"))
                if p.is_file() and p.parent.name != "bin" and p.name != "log.jsonl"}


def make_host(root: Path, device: DeviceModel, *, netdev: dict[str, list[str]] | None = None,
              env: dict[str, str] | None = None, omit: tuple[str, ...] = (), rdma: tuple[str, ...] = ()) -> FakeHost:
    """A fresh host for ``device``: ``netdev`` gives `dcb-model netdev` options per interface (default: a PF
    with the driver's defaults); ``rdma`` lists the RDMA devices that exist (default: the NICs')."""
    root.mkdir(parents=True, exist_ok=True)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "dcb_tool_models"
    launcher.write_text(f"#!{sys.executable} -S\nimport sys\nsys.path.insert(0, {str(STUBS)!r})\n"
                        "import dcb_tool_models\nsys.exit(dcb_tool_models.main())\n")
    launcher.chmod(0o755)
    for stub in sorted(STUBS.iterdir()):
        if stub.is_symlink() and stub.name not in omit:
            (bin_dir / stub.name).symlink_to(launcher.name)
    for utility in UTILITIES:
        found = shutil.which(utility)
        assert found, f"{utility} is needed to run the script"
        (bin_dir / utility).symlink_to(found)
    host_nics = nics(device)
    for nic in host_nics:
        (root / "sysfs" / "class" / "net" / nic.interface).mkdir(parents=True)
        (root / "sysfs" / "class" / "net" / nic.interface / "mtu").write_text("1500\n")
    (root / "configfs" / "rdma_cm").mkdir(parents=True)
    script = root / SCRIPT
    script.write_text(script_of(device))
    script.chmod(0o755)
    fake = FakeHost(root, host_nics, {
        "PATH": str(bin_dir), "FABRICGEN_SYSFS": str(root / "sysfs"), "FABRICGEN_CONFIGFS": str(root / "configfs"),
        "LC_ALL": "C", "DCB_STUB_STATE": str(root / "state"), "DCB_STUB_LOG": str(root / "log.jsonl"), **(env or {})})
    for nic in host_nics:
        fake.tool("dcb-model", "netdev", nic.interface, *(netdev or {}).get(nic.interface, []))
    # Upstream rdma_cm defaults to RoCE v2; start at v1 so the mode setting has something to do.
    for device_name in rdma or tuple(nic.rdma_device for nic in host_nics):
        fake.tool("dcb-model", "rdma", device_name, "--mode", "IB/RoCE v1")
    Path(fake.env["DCB_STUB_LOG"]).unlink()
    return fake


def diff_names(stdout: str) -> list[str]:
    return [line[5:].split(": have ", 1)[0] for line in stdout.splitlines() if line.startswith("DIFF ")]


def changes(call: dict[str, Any]) -> bool:
    """A tool call that writes: ip, mkdir, or a dcb command other than show."""
    if call["tool"] != "dcb":
        return bool(call["tool"] != "dcb-model")
    words = [word for word in call["argv"] if not word.startswith("-")]
    return len(words) > 1 and words[1] != "show"


def applied(fake: FakeHost) -> subprocess.CompletedProcess[str]:
    done = fake.run("--apply")
    assert done.returncode == 0, f"--apply failed:\n{done.stdout}\n{done.stderr}"
    return done


def assert_nic_holds_intent(fake: FakeHost, nic: NicModel) -> None:
    state = fake.netdev(nic.interface)
    assert fake.read(f"sysfs/class/net/{nic.interface}/mtu") == str(nic.mtu)
    assert state["dcbx"] == 0x9  # host | ieee
    assert state["ets"] == {"prio_tc": nic.prio_tc, "tsa": [TSA[t] for t in nic.tsa], "tc_bw": nic.tcbw}
    assert state["pfc"]["pfc_en"] == sum(flag << prio for prio, flag in enumerate(nic.pfc))
    want = dscp_map(nic)
    assert sorted(tuple(entry) for entry in state["app"]) == sorted(want.items()), "the kernel's APP table"
    assert state["hw_dscp"] == {str(dscp): prio for dscp, prio in want.items()}, "the driver's hardware map"
    port = f"configfs/rdma_cm/{nic.rdma_device}/ports/1"
    assert (fake.read(f"{port}/default_roce_tos"), fake.read(f"{port}/default_roce_mode")) == (str(nic.roce_tos),
                                                                                                "RoCE v2")


@pytest.fixture
def node3(tmp_path: Path) -> FakeHost:
    return make_host(tmp_path, host("node3"))


def test_check_on_fresh_nics_reports_every_setting_and_changes_nothing(node3: FakeHost) -> None:
    before = node3.files()
    done = node3.run("--check")
    assert done.returncode == 1, done.stderr
    every = [f"{nic.interface} {what}" for nic in node3.nics for what in ("mtu", "ets", "pfc", "dscp-prio")]
    every += [f"{nic.rdma_device} {what}" for nic in node3.nics for what in ("roce tos", "roce mode")]
    assert sorted(diff_names(done.stdout)) == sorted(every)  # DCBX: a bnxt_en PF starts as "host ieee"
    assert [call for call in node3.calls() if changes(call)] == []
    assert node3.files() == before


def test_apply_configures_fresh_nics_as_the_intent_says(node3: FakeHost) -> None:
    done = applied(node3)
    assert "ok: node3 NIC settings hold" in done.stdout
    for nic in node3.nics:
        assert_nic_holds_intent(node3, nic)
        assert f"note: {nic.interface}: no generic interface for DCQCN/CNP" in done.stderr
        assert f"note: {nic.interface}: no dcb apptrust (iproute2 < 6.2" in done.stderr
    assert done.stderr.count("no generic interface for DCQCN/CNP") == 2, "notes are said once, not on verify"
    assert [call for call in node3.calls() if call["status"] != 0 and changes(call)] == []


def test_second_apply_changes_nothing_and_check_passes(node3: FakeHost) -> None:
    applied(node3)
    writes = {nic.interface: node3.netdev(nic.interface)["writes"] for nic in node3.nics}
    seen = len(node3.calls())
    applied(node3)
    assert [call["argv"] for call in node3.calls()[seen:] if changes(call)] == []
    assert {nic.interface: node3.netdev(nic.interface)["writes"] for nic in node3.nics} == writes
    done = node3.run("--check")
    assert (done.returncode, diff_names(done.stdout)) == (0, [])
    assert "ok: node3 NIC settings match" in done.stdout


def test_check_names_only_the_drifted_nic_and_setting(node3: FakeHost) -> None:
    applied(node3)
    drifted = node3.nics[1].interface
    node3.tool("dcb", "pfc", "set", "dev", drifted, "prio-pfc", "3:off", "4:on")  # lossless moved to priority 4
    done = node3.run("--check")
    assert done.returncode == 1
    assert diff_names(done.stdout) == [f"{drifted} pfc"]
    assert '"prio-pfc 0:off 1:off 2:off 3:off 4:on 5:off 6:off 7:off"' in done.stdout
    applied(node3)
    assert_nic_holds_intent(node3, node3.nics[1])


def test_a_second_priority_for_a_dscp_is_drift_and_apply_leaves_the_hardware_right(node3: FakeHost) -> None:
    applied(node3)
    ifname = node3.nics[0].interface
    node3.tool("dcb", "app", "add", "dev", ifname, "dscp-prio", "26:0")  # `add` keeps 26:3: a table, not an array
    assert "26:0 26:3" in node3.tool("dcb", "-N", "app", "show", "dev", ifname, "dscp-prio").stdout
    done = node3.run("--check")
    assert (done.returncode, diff_names(done.stdout)) == (1, [f"{ifname} dscp-prio"])
    seen = len(node3.calls())
    applied(node3)
    writes = [call["argv"] for call in node3.calls()[seen:] if changes(call)]
    # Deleting 26:0 alone would clear DSCP 26 in bnxt_en's hardware map although 26:3 stays in the table.
    assert writes == [["app", "del", "dev", ifname, "dscp-prio", "26:0", "26:3"],
                      ["app", "add", "dev", ifname, "dscp-prio", "26:3"]]
    assert_nic_holds_intent(node3, node3.nics[0])


def test_a_moved_dscp_is_deleted_then_added(node3: FakeHost) -> None:
    applied(node3)
    ifname = node3.nics[0].interface
    node3.tool("dcb", "app", "replace", "dev", ifname, "dscp-prio", "26:5")
    seen = len(node3.calls())
    applied(node3)
    writes = [call["argv"] for call in node3.calls()[seen:] if changes(call)]
    assert writes == [["app", "del", "dev", ifname, "dscp-prio", "26:5"],
                      ["app", "add", "dev", ifname, "dscp-prio", "26:3"]]
    assert node3.netdev(ifname)["hw_dscp"]["26"] == 3


def test_iproute2_replace_would_leave_the_hardware_without_the_dscp(node3: FakeHost) -> None:
    # Why the script does not call `dcb app replace`: it adds before it deletes, and bnxt_en's delete clears the
    # DSCP's hardware entry, so the kernel table says 26:3 while the driver's map has nothing for DSCP 26.
    applied(node3)
    ifname = node3.nics[0].interface
    node3.tool("dcb", "app", "replace", "dev", ifname, "dscp-prio", "26:5")
    node3.tool("dcb", "app", "replace", "dev", ifname, "dscp-prio", "26:3")
    assert "26:3" in node3.tool("dcb", "-N", "app", "show", "dev", ifname).stdout.split()
    assert "26" not in node3.netdev(ifname)["hw_dscp"]


def test_a_refused_setting_does_not_stop_the_others(tmp_path: Path) -> None:
    device = host("node3")
    first, second = nics(device)
    fake = make_host(tmp_path, device, netdev={first.interface: ["--max-lltc", "0"]})  # pfc-cap 0
    done = fake.run("--apply")
    assert done.returncode == 1
    assert f"note: {first.interface}: the driver's pfc-cap is 0, fewer than the 1 lossless priorities" in done.stderr
    assert f"error: {first.interface} pfc: 'dcb pfc set dev {first.interface} prio-pfc" in done.stderr
    assert "Error when attempting to set attribute: Unknown error 234" in done.stderr  # EINVAL as dcbnl's u8
    assert "error: settings above did not take effect" in done.stderr
    assert f"DIFF {first.interface} pfc:" in done.stdout
    assert_nic_holds_intent(fake, second)
    assert fake.netdev(first.interface)["ets"] is not None and fake.read(
        f"configfs/rdma_cm/{first.rdma_device}/ports/1/default_roce_tos") == "104"


def test_too_few_traffic_classes_are_named(tmp_path: Path) -> None:
    device = host("node3")
    first, second = nics(device)
    fake = make_host(tmp_path, device, netdev={first.interface: ["--max-tc", "4"]})  # ets-cap 4
    done = fake.run("--apply")
    assert done.returncode == 1
    assert f"note: {first.interface}: the driver's ets-cap is 4, fewer than the 7 traffic classes" in done.stderr
    assert f"error: {first.interface} ets: " in done.stderr and f"error: {first.interface} pfc: " in done.stderr
    assert sorted(diff_names(done.stdout)) == [f"{first.interface} ets", f"{first.interface} pfc"]
    assert_nic_holds_intent(fake, second)


def test_pcp_trust_removes_the_dscp_entries(tmp_path: Path) -> None:
    device = with_nics(host("node3"), trust="pcp")
    fake = make_host(tmp_path, device)
    first = fake.nics[0].interface
    fake.tool("dcb", "app", "add", "dev", first, "dscp-prio", "26:3", "48:6")
    applied(fake)
    assert fake.netdev(first)["app"] == [] and fake.netdev(first)["hw_dscp"] == {}
    assert fake.run("--check").returncode == 0


def test_firmware_dcbx_agent_is_reported_not_overridden(tmp_path: Path) -> None:
    device = host("node3")
    first = nics(device)[0]
    fake = make_host(tmp_path, device, netdev={first.interface: ["--fw-lldp-agent"]})
    done = fake.run("--apply")
    assert done.returncode == 1
    assert f"error: {first.interface} dcbx: 'dcb dcbx set dev {first.interface} host ieee' failed" in done.stderr
    assert "Error when attempting to set attribute: Operation not permitted" in done.stderr
    assert f'note: {first.interface}: DCBX is "ieee", not host: if the NIC firmware' in done.stderr
    assert f"DIFF {first.interface} dcbx: have \"ieee\", want \"host ieee\"" in done.stdout
    assert_nic_holds_intent(fake, nics(device)[1])


def test_apptrust_where_iproute2_and_the_driver_have_it(tmp_path: Path) -> None:
    device = host("node4")
    first, second = nics(device)
    fake = make_host(tmp_path, device, netdev={first.interface: ["--apptrust"]}, env={"DCB_STUB_IPROUTE2": "6.2"})
    done = applied(fake)
    assert f'SET  {first.interface} apptrust: "order:" -> "order: dscp"' in done.stdout
    assert fake.netdev(first.interface)["apptrust"] == ["dscp"]
    assert f"note: {second.interface}: no dcb apptrust" in done.stderr
    assert f"note: {first.interface}: no dcb apptrust" not in done.stderr
    fake.tool("dcb", "apptrust", "set", "dev", first.interface, "order", "pcp", "dscp")
    check = fake.run("--check")
    assert (check.returncode, diff_names(check.stdout)) == (1, [f"{first.interface} apptrust"])


def test_rdma_cm_group_is_created_for_a_device_that_exists_only(tmp_path: Path) -> None:
    device = host("node3")
    first, second = nics(device)
    fake = make_host(tmp_path, device, rdma=(first.rdma_device,))  # the second RDMA device does not exist
    done = fake.run("--apply")
    assert done.returncode == 1
    assert f"error: cannot create {fake.root}/configfs/rdma_cm/{second.rdma_device} (no RDMA device" in done.stderr
    assert f"DIFF {second.rdma_device} roce tos: have \"<unset>\", want \"104\"" in done.stdout
    assert_nic_holds_intent(fake, first)


def test_check_never_creates_the_rdma_cm_group(node3: FakeHost) -> None:
    node3.run("--check")
    assert list((node3.root / "configfs" / "rdma_cm").iterdir()) == []


def test_netdev_without_dcbnl_is_named(tmp_path: Path) -> None:
    device = host("node3")
    first = nics(device)[0]
    fake = make_host(tmp_path, device, netdev={first.interface: ["--no-dcbnl"]})
    done = fake.run("--apply")
    assert done.returncode == 1
    assert done.stderr.count(f"error: {first.interface}: no DCB netlink ETS (no such netdev") == 1
    assert_nic_holds_intent(fake, nics(device)[1])


def test_missing_tool_exits_2_before_touching_anything(tmp_path: Path) -> None:
    fake = make_host(tmp_path, host("node3"), omit=("dcb",))
    done = fake.run("--apply")
    assert (done.returncode, done.stderr.strip()) == (2, "error: dcb not found (install iproute2)")
    assert fake.calls() == []


def test_usage(node3: FakeHost) -> None:
    assert node3.run("--bogus").returncode == 2
    helped = node3.run("--help")
    assert helped.returncode == 0 and "--check  change nothing" in helped.stdout
    assert all(line.startswith("#") for line in helped.stdout.splitlines()), "--help prints the header only"
    assert "FABRICGEN_TOOL_TIMEOUT" in helped.stdout


# --- time limits: a tool that never answers ---------------------------------------------------------------

HANG = ROOT / "tests" / "nic_stubs" / "hang"  # shared with the ConnectX tests
# Seconds; the default is hostscript.TOOL_TIMEOUT_S. Short, yet long enough for the models' healthy calls on a
# loaded machine: a full suite run on 2 busy cores saw one take more than 0.3 s.
SHORT = {"FABRICGEN_TOOL_TIMEOUT": "2"}


def hang(fake: FakeHost, tool: str) -> None:
    """``tool`` on the host's PATH replaced by one that never answers, as a wedged driver or firmware leaves it."""
    bin_dir = fake.root / "bin"
    (bin_dir / tool).unlink(missing_ok=True)
    (bin_dir / tool).symlink_to(HANG)
    if not (bin_dir / "sleep").exists():
        sleep = shutil.which("sleep")
        assert sleep, "sleep is needed by the hanging stub"
        (bin_dir / "sleep").symlink_to(sleep)


# A tool of each kind the script bounds -- dcb, a sysfs read, a configfs write and mkdir, modprobe -- and a mode that
# reaches it first. (FakeHost.run proves every call of a model ran under timeout.)
HANGING = [("dcb", "--check"), ("cat", "--check"), ("tee", "--apply"), ("mkdir", "--apply"), ("modprobe", "--apply")]


@pytest.mark.parametrize(("tool", "mode"), HANGING)
def test_a_tool_that_never_answers_stops_the_script_with_its_name(node3: FakeHost, tool: str, mode: str) -> None:
    hang(node3, tool)
    done = node3.run(mode, env=SHORT)  # fails unless every tool call ran under timeout (the stub sleeps 600 s)
    assert done.returncode == 3, done.stderr
    assert re.search(rf"^error: '{tool} .*' did not finish within 2s \(FABRICGEN_TOOL_TIMEOUT\): stopped$",
                     done.stderr, re.MULTILINE), done.stderr
    assert done.stderr.count("did not finish within") == 1, "the script stops at the first timeout"
    assert "ok:" not in done.stdout


@pytest.mark.parametrize("value", ["0", "-1", "abc", "5s"])
def test_a_bad_time_limit_is_a_usage_error_before_touching_anything(node3: FakeHost, value: str) -> None:
    done = node3.run("--apply", env={"FABRICGEN_TOOL_TIMEOUT": value})
    assert done.returncode == 2
    assert f"error: FABRICGEN_TOOL_TIMEOUT={value}: expected seconds, a number above 0" in done.stderr
    assert node3.calls() == []


# --- the models themselves: what makes "every call passed" above mean something -------------------------------

FRESH_NIC_REFUSES = [
    (["pfc", "set", "dev", "IF", "prio-pfc", "3:on"], "Unknown error 234"),  # bnxt_en: no PFC before ETS
    (["ets", "set", "dev", "IF", "tc-tsa", "all:ets", "tc-bw", "0:50"], "sum to 50%, expected 100%"),
    (["ets", "set", "dev", "IF", "tc-tsa", "all:vendor"], "Unknown error 244"),  # ENOTSUPP
    # bnxt_en: ETS TCs at 0 % beside an ETS total of 100, "rejecting ETS config starving a TC" (fabricgen's old layout)
    (["ets", "set", "dev", "IF", "tc-tsa", "all:ets", "6:strict", "tc-bw", "all:0", "0:40", "2:10", "3:50"],
     "Unknown error 234"),
    (["ets", "set", "dev", "IF", "prio-tc", "3:8"], "expected to be 0..7"),
    (["app", "add", "dev", "IF", "dscp-prio", "64:3"], "expected to be 0..63"),
    (["app", "del", "dev", "IF", "dscp-prio", "26:3"], "Unknown error 254"),  # ENOENT
    (["apptrust", "show", "dev", "IF"], 'Object "apptrust" is unknown'),  # iproute2 6.1, as on Debian 12
    (["buffer", "show", "dev", "IF"], "not modelled"),
]


@pytest.mark.parametrize(("args", "message"), FRESH_NIC_REFUSES, ids=[" ".join(a) for a, _ in FRESH_NIC_REFUSES])
def test_dcb_model_refuses_what_dcb_and_the_driver_refuse(node3: FakeHost, args: list[str], message: str) -> None:
    ifname = node3.nics[0].interface
    before = node3.netdev(ifname)
    done = node3.tool("dcb", *[ifname if arg == "IF" else arg for arg in args], ok=False)
    assert done.returncode != 0
    assert message in done.stderr
    assert node3.netdev(ifname) == before


def test_dcb_model_app_table_keeps_conflicting_entries(node3: FakeHost) -> None:
    ifname = node3.nics[0].interface
    node3.tool("dcb", "app", "add", "dev", ifname, "dscp-prio", "all:0", "26:3")  # `all` is 64 entries, not a default
    shown = node3.tool("dcb", "-N", "app", "show", "dev", ifname, "dscp-prio").stdout.split()
    assert shown[0] == "dscp-prio" and len(shown) == 66 and "26:0" in shown and "26:3" in shown
    assert node3.tool("dcb", "app", "show", "dev", ifname).stdout.split()[1:3] == ["default:0", "1:0"]


def test_dcb_model_replace_exits_0_when_it_fails(tmp_path: Path) -> None:
    device = host("node3")
    first = nics(device)[0]
    fake = make_host(tmp_path, device, netdev={first.interface: ["--fw-lldp-agent"]})
    done = fake.tool("dcb", "app", "replace", "dev", first.interface, "dscp-prio", "26:3", ok=False)
    assert done.returncode == 0 and "Could not add new APP entries" in done.stderr
    assert fake.netdev(first.interface)["app"] == []


def test_dcb_model_refuses_to_touch_the_real_sys(node3: FakeHost) -> None:
    done = subprocess.run([str(node3.root / "bin" / "ip"), "link", "set", "dev", "x", "mtu", "9000"],
                          env={**node3.env, "FABRICGEN_SYSFS": "/sys"}, capture_output=True, text=True, check=False)
    assert done.returncode == 3 and "fake tree" in done.stderr


# --- the reader -----------------------------------------------------------------------------------------

def files_of(device: DeviceModel) -> dict[str, str]:
    files = render_device(device)
    return {SCRIPT: files[SCRIPT], NCCL_ENV: files[NCCL_ENV]}


def skeleton() -> DeviceModel:
    """A skeleton that differs from node3 in every owned field."""
    return scramble(host("node3"))


def read_nics(script: str, env: str | None = None) -> list[NicModel]:
    files = {SCRIPT: script} if env is None else {SCRIPT: script, NCCL_ENV: env}
    result = reader.read(skeleton(), files).host
    assert result is not None
    return list(result.nics)


def test_reader_gives_back_what_was_rendered() -> None:
    device = host("node3")
    assert reader.owned(skeleton()) != reader.owned(device)  # else the test would prove nothing
    assert reader.owned(reader.read(skeleton(), files_of(device))) == reader.owned(device)


def test_reader_hand_edited_values() -> None:
    script = script_of(host("node3"))
    script = edit(script, 'dcb pfc set dev "$ifname" prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n',
                  'dcb pfc set dev "$ifname" prio-pfc all:on 4:off all:off 3:on 4:on 3:off\n')  # left to right
    script = edit(script, "tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0\n", "tc-bw all:0 0:50 3:50\n")
    script = edit(script, " 26:3 ", " 26:5 ")
    script = edit(script, 'apptrust "$ifname" dscp', 'apptrust "$ifname" pcp', 2)
    script = edit(script, "write_file \"$port/default_roce_tos\" '104'", "write_file \"$port/default_roce_tos\" '106'")
    first, second = read_nics(script)
    assert first.pfc == [0, 0, 0, 0, 1, 0, 0, 0] and second.pfc == [0, 0, 0, 1, 0, 0, 0, 0]
    assert first.tcbw == [50, 0, 0, 50, 0, 0, 0, 0] and second.tcbw == [40, 0, 10, 50, 0, 0, 0, 0]
    assert (first.trust, first.dscp2prio[26], first.roce_tos) == ("pcp", 5, 106)
    assert (second.trust, second.dscp2prio, second.roce_tos) == ("pcp", nics(host("node3"))[1].dscp2prio, 104)


def test_reader_takes_bounded_commands_as_the_commands() -> None:
    pfc = 'dcb pfc set dev "$ifname" prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n'
    script = edit(script_of(host("node3")), f"-- {pfc}", f"-- bounded {pfc.replace('3:on 4:off', '3:off 4:on')}")
    # A hand edit, written like the script's own helpers: another DSCP entry on the first NIC.
    script = edit(script, '  apptrust "$ifname" dscp\n', '  apptrust "$ifname" dscp\n'
                  '  bounded dcb app add dev "$ifname" dscp-prio 30:3\n')
    first, second = read_nics(script)
    assert first.pfc == [0, 0, 0, 0, 1, 0, 0, 0] and second.pfc == [0, 0, 0, 1, 0, 0, 0, 0]
    assert (first.dscp2prio[30], second.dscp2prio[30]) == (3, nics(host("node3"))[1].dscp2prio[30])


def test_reader_reads_the_command_and_names_a_check_that_disagrees() -> None:
    """Apply never runs a command whose check the NIC already passes: the reader reads the command, and the conflict
    says that the NIC may run the checked value instead."""
    script = edit(script_of(host("node3")), "'prio-pfc 0:off 1:off 2:off 3:on", "'prio-pfc 0:off 1:off 2:on 3:off")
    assert read_nics(script)[0].pfc == [0, 0, 0, 1, 0, 0, 0, 0]
    [conflict] = reader.conflicts({SCRIPT: script})
    assert (conflict.line, conflict.port) == (line_of(script, "'prio-pfc 0:off 1:off 2:on 3:off"), "ens1f0np0")
    assert conflict.message == ("`setting $ifname pfc` checks for 'prio-pfc 0:off 1:off 2:on 3:off 4:off 5:off 6:off "
                                "7:off' but its command sets 'prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off'")


@pytest.mark.parametrize(("old", "new", "sets"), [
    ("-- dcb dcbx set dev \"$ifname\" host ieee", "-- dcb dcbx set dev \"$ifname\" cee host", "'host cee'"),
    ("-- write_file \"$port/default_roce_mode\" 'RoCE v2'", "-- write_file \"$port/default_roce_mode\" 'IB/RoCE v1'",
     "'IB/RoCE v1'"),
    ("-- write_file \"$port/default_roce_tos\" '104'", "-- write_file \"$port/default_roce_tos\" '106'", "'106'"),
    ("tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0\n", "tc-bw all:0 0:50 3:50\n",
     "'prio-tc 0:0 1:0 2:2 3:3 4:0 5:0 6:6 7:0 tc-tsa 0:ets 1:strict 2:ets 3:ets 4:strict 5:strict 6:strict 7:strict "
     "tc-bw 0:50 1:0 2:0 3:50 4:0 5:0 6:0 7:0'"),
])
def test_reader_conflicts_of_every_kind_the_script_checks(old: str, new: str, sets: str) -> None:
    rendered = script_of(host("node3"))
    assert reader.conflicts({SCRIPT: rendered}) == []
    script = edit(rendered, old, new)
    found = reader.conflicts({SCRIPT: script})
    assert [c.line for c in found] == [line_of(script, new.strip())] and f"its command sets {sets}" in found[0].message


def test_reader_dscp_without_entry_reads_as_priority_0() -> None:
    rendered = nics(host("node3"))
    script = edit(script_of(host("node3")), " 26:3 27:0 ", " 27:0 ")
    first, second = read_nics(script)
    assert (first.dscp2prio, second.dscp2prio) == ({**rendered[0].dscp2prio, 26: 0}, rendered[1].dscp2prio)
    names = edit(script_of(host("node3")), " 26:3 ", " AF31:3 ").replace(' 0:0 ', ' default:0 ', 1)
    assert read_nics(names)[0].dscp2prio == rendered[0].dscp2prio


def test_reader_ignores_brownfield_extras() -> None:
    script = script_of(host("node3"))
    extras = ('  setting "$ifname maxrate" "" \'x\' -- dcb maxrate set dev "$ifname" tc-maxrate all:100Gbit\n'
              '  # a comment someone added\n'
              '  setting "$ifname delay" "" \'x\' -- dcb pfc set dev "$ifname" delay 4096 macsec-bypass off\n')
    script = edit(script, '  dcb_caps "$ifname" 7 1\n', '  dcb_caps "$ifname" 7 1\n' + extras)
    script = edit(script, "\nall_nics() {", "\nlocal_tuning() {\n  ethtool -G ens1f0np0 rx 8192\n}\n\nall_nics() {")
    got = reader.owned(reader.read(skeleton(), {SCRIPT: script, NCCL_ENV: files_of(host("node3"))[NCCL_ENV]}))
    assert got == reader.owned(host("node3"))


def test_reader_nics_follow_all_nics_and_new_nics_are_added() -> None:
    script = edit(script_of(host("node3")), "  nic_ens2f0np0\n}", "}")  # defined, never called
    result = reader.read(skeleton(), {SCRIPT: script}).host  # and no nccl.env
    assert result is not None
    assert [nic.interface for nic in result.nics] == ["ens1f0np0"] and result.nccl_env == {}
    bare = host("node3").model_copy(update={"host": None})
    added = reader.read(bare, files_of(host("node3"))).host
    assert added is not None and added.path_mtu == reader.DEFAULT_PATH_MTU
    assert [(n.interface, n.rdma_device, n.cnp_dscp, n.peer) for n in added.nics] == [
        ("ens1f0np0", "bnxt_re0", 0, None), ("ens2f0np0", "bnxt_re1", 0, None)]


BAD_SCRIPTS = [  # (in the first NIC's function: the command, not the quoted wanted value before it)
    ("prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n", "prio-pfc 3:on\n", "leaves out 0, 1, 2, 4, 5, 6, 7"),
    ("6:strict 7:strict tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0\n",
     "6:vendor 7:strict tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0\n", "not strict or ets"),
    (" 26:3 ", " 26:3 26:0 ", "DSCP 26 priorities 3 and 0"),
    (" 26:3 ", " 26:9 ", "expected a number 0-7"),
    ("mtu '9000'\n", "mtu '9000\n", "shell words"),
    ('apptrust "$ifname" dscp', 'apptrust "$ifname" port', "dscp|pcp"),
    ('  apptrust "$ifname" dscp\n', "", "does not set trust"),
    ("7:strict tc-bw 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0\n",
     "7:strict tc-bandwidth 0:40 1:0 2:10 3:50 4:0 5:0 6:0 7:0\n",
     "unknown keyword 'tc-bandwidth'"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD_SCRIPTS, ids=[m for _, _, m in BAD_SCRIPTS])
def test_reader_bad_script_names_file_and_line(old: str, new: str, message: str) -> None:
    script = edit(script_of(host("node3")), old, new)
    with pytest.raises(ConfigReadError, match=message) as error:
        reader.read(skeleton(), {SCRIPT: script})
    expected = line_of(script, new.strip()) if new.strip() else line_of(script, "nic_ens1f0np0() {")
    assert (error.value.file, error.value.line) == (SCRIPT, expected)


def test_reader_refuses_other_scripts() -> None:
    with pytest.raises(ConfigReadError, match="not a script fabricgen wrote") as error:
        reader.read(skeleton(), {SCRIPT: "#!/bin/sh\ndcb pfc set dev eth0 prio-pfc 3:on\n"})
    assert error.value.line == 1
    with pytest.raises(ConfigReadError, match="file missing"):
        reader.read(skeleton(), {NCCL_ENV: ""})


def test_reader_nccl_env() -> None:
    script = script_of(host("node3"))
    env = "# hand written\nexport NCCL_IB_TC='106'\nNCCL_IB_HCA=\"=bnxt_re0:1\"\n\nNCCL_DEBUG=INFO\n"
    result = reader.read(skeleton(), {SCRIPT: script, NCCL_ENV: env}).host
    assert result is not None
    assert result.nccl_env == {"NCCL_IB_TC": "106", "NCCL_IB_HCA": "=bnxt_re0:1", "NCCL_DEBUG": "INFO"}
    bad = env + "not an assignment\n"
    with pytest.raises(ConfigReadError) as error:
        reader.read(skeleton(), {SCRIPT: script, NCCL_ENV: bad})
    assert (error.value.file, error.value.line) == (NCCL_ENV, len(bad.splitlines()))


# --- round trip: owned(read(skeleton, render(m))) == owned(m) ------------------------------------------------

def round_trip(device: DeviceModel, base: DeviceModel) -> tuple[dict[str, Any], dict[str, Any]]:
    read_back = reader.read(base, render_device(device))
    return reader.owned(read_back), reader.owned(device)


@pytest.mark.parametrize("name", HOSTS)
def test_mixed_hosts_round_trip(name: str) -> None:
    device = host(name)
    other = host(next(h for h in HOSTS if h != name))
    connectx = host("node1").model_copy(update={"platform": "linux-dcb"})
    for base in (scramble(device), other, connectx):
        got, want = round_trip(device, base)
        assert got == want


@pytest.mark.parametrize("name", HOSTS)
def test_scrambled_skeleton_differs_in_every_owned_field(name: str) -> None:
    def leaves(view: Any, path: str = "") -> dict[str, Any]:
        if isinstance(view, dict) and view:
            return {k: v for key, value in view.items() for k, v in leaves(value, f"{path}/{key}").items()}
        return {path: view}

    original, scrambled = leaves(reader.owned(host(name))), leaves(reader.owned(scramble(host(name))))
    assert [path for path, value in original.items() if scrambled.get(path) == value] == []


def _resolve_generated(raw: dict[str, Any]) -> Fabric:
    try:
        intent = Intent.model_validate(raw)
    except ValidationError:
        assume(False)
        raise
    assume(not check_intent(intent))
    try:
        return resolve(intent, mixed_inventory(switches_as_eos=True)[1])
    except InputError:  # e.g. a host MTU above linux-dcb's 9500
        assume(False)
        raise


@settings(max_examples=30, deadline=None, derandomize=True)
@given(raw=intents())
def test_generated_intents_round_trip(raw: dict[str, Any]) -> None:
    fabric = _resolve_generated(raw)
    for name in HOSTS:
        device = fabric.devices[name]
        for base in (scramble(device), host(name)):
            got, want = round_trip(device, base)
            assert got == want, name
