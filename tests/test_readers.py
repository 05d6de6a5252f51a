"""Config readers: golden files read back to the resolved model, hand edits, brownfield extras, bad files.

Every read here goes over a skeleton that is NOT the model the file came from (the minimal example's
device), so a value can only come out right if the reader took it from the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from types import ModuleType

import pytest

import fabricgen.platforms.connectx.read as connectx
import fabricgen.platforms.eos.read as eos
import fabricgen.platforms.sonic.read as sonic
from fabricgen.models.device import DeviceModel, Fabric, PortModel
from fabricgen.platforms import ConfigReadError, get_platform
from fabricgen.resolve import resolve

from conftest import ROOT, load_example

GOLDEN = ROOT / "golden" / "fabric"
FILES = {"sonic": ("config_db.json",), "eos": ("eos.cfg",), "connectx": ("fabricgen-nic.sh", "nccl.env")}
READERS: dict[str, ModuleType] = {"sonic": sonic, "eos": eos, "connectx": connectx}


@pytest.fixture(scope="module")
def minimal_fabric() -> Fabric:
    loaded = load_example("minimal")
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


def golden(device: str, platform: str) -> dict[str, str]:
    return {name: (GOLDEN / device / name).read_text() for name in FILES[platform]}


def edit(text: str, old: str, new: str, count: int = 1) -> str:
    assert text.count(old) >= count, f"{old!r} not in the file"
    return text.replace(old, new, count)


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def port(device: DeviceModel, name: str) -> PortModel:
    return next(p for p in device.ports if p.name == name)


@pytest.fixture
def read_over(example_fabric: Fabric, minimal_fabric: Fabric) -> Callable[[str, dict[str, str]], DeviceModel]:
    """read(files) of a fabric device over the minimal example's device of the same name."""
    def read(device: str, files: dict[str, str]) -> DeviceModel:
        platform = example_fabric.devices[device].platform
        result: DeviceModel = READERS[platform].read(minimal_fabric.devices[device], files)
        return result
    return read


# --- wiring and goldens -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(READERS))
def test_platforms_expose_their_reader(name: str) -> None:
    platform = get_platform(name)
    assert platform.read is READERS[name].read and platform.owned is READERS[name].owned


@pytest.mark.parametrize("device", sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()))
def test_golden_file_reads_back_to_the_resolved_model(device: str, example_fabric: Fabric,
                                                      minimal_fabric: Fabric) -> None:
    model = example_fabric.devices[device]
    reader = READERS[model.platform]
    # The examples agree on the OOB switch: stale descriptions and admin states keep the skeleton different.
    skeleton = minimal_fabric.devices[device]
    skeleton = skeleton.model_copy(update={"ports": [
        p.model_copy(update={"description": "stale", "admin_up": not p.admin_up}) for p in skeleton.ports]})
    assert reader.owned(skeleton) != reader.owned(model)  # else the test would prove nothing
    assert reader.owned(reader.read(skeleton, golden(device, model.platform))) == reader.owned(model)


# --- SONiC --------------------------------------------------------------------------------------------

def test_sonic_hand_edited_pfc_enable(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    db = json.loads(golden("leaf1", "sonic")["config_db.json"])
    db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "2"
    device = read_over("leaf1", {"config_db.json": json.dumps(db)})
    assert port(device, "Ethernet0").pfc_priorities == [2] and port(device, "Ethernet0").lossless
    # leaf1's lossless PGs are 3-4 (the SKU template's, dynamic buffer model): no buffer for priority 2
    assert port(device, "Ethernet0").headroom is None
    assert port(device, "Ethernet8").pfc_priorities == [3]


def test_sonic_brownfield_tables_are_ignored(example_fabric: Fabric,
                                             read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    db = json.loads(golden("leaf1", "sonic")["config_db.json"])
    db["DEVICE_METADATA"] = {"localhost": {"hostname": "leaf1", "hwsku": "ACS-MSN4700", "bgp_asn": "65100"}}
    db["BGP_NEIGHBOR"] = {"10.0.0.1": {"asn": "65200", "name": "spine1"}}
    db["LOOPBACK_INTERFACE"] = {"Loopback0": {}, "Loopback0|10.1.0.1/32": {}}
    # SONiC's own PGs (the dynamic model's template: lossy 0, lossless 3-4) and an AZURE map nobody references.
    db.setdefault("BUFFER_PG", {}).update({"Ethernet0|0": {"profile": "ingress_lossy_profile"},
                                           "Ethernet0|3-4": {"profile": "NULL"}})
    db.setdefault("BUFFER_PROFILE", {})["ingress_lossy_profile"] = {"pool": "ingress_lossless_pool", "size": "0",
                                                                    "dynamic_th": "3"}
    db["DSCP_TO_TC_MAP"]["AZURE"] = {str(d): "1" for d in range(64)}
    device = read_over("leaf1", {"config_db.json": json.dumps(db, indent=4)})
    assert sonic.owned(device) == sonic.owned(example_fabric.devices["leaf1"])


def test_sonic_reads_the_maps_the_ports_use(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    db = json.loads(golden("leaf1", "sonic")["config_db.json"])
    db["DSCP_TO_TC_MAP"]["AZURE"] = {str(d): "1" for d in range(64)}
    for name, entry in db["PORT_QOS_MAP"].items():
        if name != "global":
            entry["dscp_to_tc_map"] = "AZURE"
    qos = read_over("leaf1", {"config_db.json": json.dumps(db)}).qos
    assert qos is not None and set(qos.dscp_to_tc.values()) == {1}


def test_sonic_each_port_is_read_on_its_own_when_bindings_repeat(
        read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    """Ports whose PORT_QOS_MAP entry, QUEUE rows and PFC_WD entry are alike are worked out once; a port that
    differs in any of those, before or after such ports in the file, still reads its own."""
    db = json.loads(golden("leaf1", "sonic")["config_db.json"])
    data = [name for name in db["PORT_QOS_MAP"] if name != "global"]
    last = data[-1]
    db["QUEUE"][f"{last}|3"]["wred_profile"] = "HALF"
    db["WRED_PROFILE"]["HALF"] = {**db["WRED_PROFILE"][db["QUEUE"][f"{data[0]}|3"]["wred_profile"]],
                                  "green_max_threshold": "1000"}
    db["PFC_WD"][data[1]]["detection_time"] = "400"
    device = read_over("leaf1", {"config_db.json": json.dumps(db)})
    own = {p.name: p.qos for p in device.ports if p.name in data}
    assert {name for name, qos in own.items() if qos is not None} == {last, data[1]}
    ecn = next(q.ecn for q in own[last].queues if q.index == 3)  # type: ignore[union-attr]
    assert ecn is not None and ecn.max_bytes == 1000
    assert own[data[1]].watchdog is not None and own[data[1]].watchdog.detection_ms == 400  # type: ignore[union-attr]


def test_sonic_missing_and_extra_ports(read_over: Callable[[str, dict[str, str]], DeviceModel],
                                       example_fabric: Fabric) -> None:
    db = json.loads(golden("leaf1", "sonic")["config_db.json"])
    del db["PORT"]["Ethernet8"]
    db["PORT"]["Ethernet64"] = {"admin_status": "up", "mtu": "9100", "speed": "100000"}
    device = read_over("leaf1", {"config_db.json": json.dumps(db)})
    missing = port(device, "Ethernet8")
    assert not missing.admin_up and missing.mtu == port(example_fabric.devices["leaf1"], "Ethernet8").mtu
    extra = port(device, "Ethernet64")
    assert (extra.role, extra.admin_up, extra.speed_mbps) == ("unused", True, 100000)


def test_sonic_bad_json_names_file_and_line() -> None:
    text = golden("leaf1", "sonic")["config_db.json"]
    lines = text.splitlines()
    lines.insert(9, "        oops")
    with pytest.raises(ConfigReadError) as error:
        sonic.read(DeviceModel(name="x", role="leaf", platform="sonic", hardware=None, asic=None, ports=[]),
                   {"config_db.json": "\n".join(lines)})
    assert (error.value.file, error.value.line) == ("config_db.json", 10)


def test_sonic_bad_value_names_its_line(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    text = golden("leaf1", "sonic")["config_db.json"]
    start = line_of(text, '"PORT": {')
    bad = edit(text, '"mtu": "9100"', '"mtu": "jumbo"')
    with pytest.raises(ConfigReadError, match="expected a number") as error:
        read_over("leaf1", {"config_db.json": bad})
    assert error.value.line == line_of(bad, '"jumbo"') and error.value.line > start


@pytest.mark.parametrize(("old", "new", "message"), [
    ('"mtu": "9100"', '"mtu": "-1"', "PORT|Ethernet0|mtu: -1 is outside 68..9216 (sonic-port.yang)"),
    ('"speed": "400000"', '"speed": "0"', "PORT|Ethernet0|speed: 0 is outside 1..800000 (sonic-port.yang of 202411)"),
    ('"speed": "400000"', '"speed": "1600000"',
     "PORT|Ethernet0|speed: 1600000 is outside 1..800000 (sonic-port.yang of 202411)"),
])
def test_sonic_value_outside_the_yang_range_names_its_line(
        old: str, new: str, message: str, read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    text = golden("leaf1", "sonic")["config_db.json"]
    start = text.index('"PORT": {')
    bad = text[:start] + text[start:].replace(old, new, 1)
    with pytest.raises(ConfigReadError, match=re.escape(message)) as error:
        read_over("leaf1", {"config_db.json": bad})
    assert error.value.line == bad.count("\n", 0, bad.index(new, start)) + 1


def test_sonic_reads_where_the_lossless_pg_pauses(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    """A profile's dynamic_th and its pool's BUFFER_POOL size are read with its headroom (FG-ECN-002 computes the
    pause point from them); buffermgrd's own profiles take DEFAULT_LOSSLESS_BUFFER_PARAMETER's default_dynamic_th.
    A dynamic_th outside sonic-buffer-profile.yang's -8..7 is an error at its line."""
    db = json.loads(golden("leaf1", "sonic")["config_db.json"])
    db["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] = {"AZURE": {"default_dynamic_th": "-1"}}
    db["BUFFER_POOL"] = {"ingress_lossless_pool": {"size": "30000000", "type": "ingress", "mode": "dynamic"},
                         "other_pool": {"size": "1000000", "type": "ingress", "mode": "dynamic"}}
    db["BUFFER_PROFILE"] = {"mine": {"pool": "other_pool", "size": "90000", "xon": "20000", "xoff": "70000",
                                     "dynamic_th": "1"}}
    db["BUFFER_PG"] = {"Ethernet16|3": {"profile": "mine"}}
    device = read_over("leaf1", {"config_db.json": json.dumps(db, indent=4)})
    computed, own = port(device, "Ethernet0").headroom, port(device, "Ethernet16").headroom
    assert computed is not None and (computed.dynamic_th, computed.pool_bytes) == (-1, 30000000)
    assert own is not None and (own.size, own.dynamic_th, own.pool_bytes) == (90000, 1, 1000000)
    db["BUFFER_PROFILE"]["mine"]["dynamic_th"] = "9"
    text = json.dumps(db, indent=4)
    with pytest.raises(ConfigReadError) as error:
        read_over("leaf1", {"config_db.json": text})
    assert error.value.message == "BUFFER_PROFILE|mine|dynamic_th: 9 is outside -8..7 (an exponent: alpha = " \
                                  "2^dynamic_th)"
    assert error.value.line == line_of(text, '"dynamic_th": "9"')


def test_sonic_weight_outside_the_yang_range_names_its_line(
        read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    """A DWRR weight SONiC's YANG refuses (uint8 1..100) is the config's error at its line, not a share of -7 %."""
    bad = edit(golden("leaf1", "sonic")["config_db.json"], '"weight": "40"', '"weight": "-4"')
    with pytest.raises(ConfigReadError, match=r"weight: -4 is outside 1-100 \(sonic-scheduler.yang\)") as error:
        read_over("leaf1", {"config_db.json": bad})
    assert error.value.line == line_of(bad, '"weight": "-4"')


# --- EOS ----------------------------------------------------------------------------------------------

def test_eos_hand_edited_mtu(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    text = edit(golden("spine1", "eos")["eos.cfg"], "   mtu 9100\n", "   mtu 1500\n")
    device = read_over("spine1", {"eos.cfg": text})
    assert port(device, "Ethernet1/1").mtu == 1500 and port(device, "Ethernet2/1").mtu == 9100


def test_eos_interface_entered_again_adds_to_the_first_block(
        read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    """A hand edit appended as a second `interface` block: the CLI applies its lines to the same port, later ones
    winning; the port keeps everything else its first block says."""
    text = golden("spine1", "eos")["eos.cfg"] + "interface Ethernet1/1\n   mtu 9000\n"
    device = read_over("spine1", {"eos.cfg": text})
    assert port(device, "Ethernet1/1").mtu == 9000
    assert port(device, "Ethernet1/1").model_copy(update={"mtu": 9100}) == \
        port(read_over("spine1", golden("spine1", "eos")), "Ethernet1/1")


@pytest.mark.parametrize(("old", "new"), [
    ("interface Ethernet1/1\n", "int et1/1\n"),  # the keyword and the type abbreviated, the type in lower case
    ("interface Ethernet1/1\n", "interface Ethernet 1/1\n"),
    ("   mtu 9100\n", "   mtu   9100\n"),
])
def test_eos_commands_as_typed_read_as_the_running_config_prints_them(
        old: str, new: str, read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    """EOS takes an abbreviated keyword, a prefix of an interface type in any case, and stray spaces, and prints
    the whole words: a hand edit typed so reads as the port it configures."""
    files = golden("spine1", "eos")
    assert read_over("spine1", {"eos.cfg": edit(files["eos.cfg"], old, new)}) == read_over("spine1", files)


def test_eos_interface_entered_again_as_typed_adds_to_the_first_block(
        read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    files = golden("spine1", "eos")
    device = read_over("spine1", {"eos.cfg": files["eos.cfg"] + "int et1/1\n   shutdown\n"})
    first = port(device, "Ethernet1/1")
    assert not first.admin_up and first.description == port(read_over("spine1", files), "Ethernet1/1").description
    reset = read_over("spine1", {"eos.cfg": files["eos.cfg"] + "no int Et1/1\nint et1/1\n   shutdown\n"})
    assert port(reset, "Ethernet1/1").description is None  # `no interface` reset what the first block said


def test_eos_shut_is_shutdown(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    text = edit(golden("spine1", "eos")["eos.cfg"], "   no shutdown\n", "   shut\n")  # Ethernet1/1
    device = read_over("spine1", {"eos.cfg": text})
    assert not port(device, "Ethernet1/1").admin_up and port(device, "Ethernet2/1").admin_up
    text = edit(text, "   shut\n", "   shut\n   no shut\n")
    assert port(read_over("spine1", {"eos.cfg": text}), "Ethernet1/1").admin_up  # the last one applies


def test_cli_blocks_entered_again_merge_as_the_cli_applies_them() -> None:
    from fabricgen.platforms.common.clitext import tree

    def shape(text: str) -> list[tuple[str, list[str]]]:
        root = tree(text, "x.cfg", lambda _line: None)
        return [(node.text, [f"{child.text}@{child.line}" for child in node.children]) for node in root.children]

    assert shape("interface E1\n mtu 9100\n shutdown\nhostname a\ninterface E1\n mtu 9000\n") == [
        ("interface E1", ["mtu 9100@2", "shutdown@3", "mtu 9000@6"]), ("hostname a", [])]
    # A reset between the two blocks: the second starts afresh, as the CLI's does.
    assert shape("interface E1\n mtu 9100\ndefault interface E1\ninterface E1\n mtu 9000\n") == [
        ("interface E1", ["mtu 9100@2"]), ("default interface E1", []), ("interface E1", ["mtu 9000@5"])]
    # Repeated lines without a block keep their order (the last one applies); nested blocks merge too.
    assert shape("ip routing\nno ip routing\nip routing\n") == [("ip routing", []), ("no ip routing", []),
                                                                   ("ip routing", [])]
    merged = tree("policy-map P\n class C\n  set dscp 1\npolicy-map P\n class C\n  set dscp 2\n", "x.cfg",
                  lambda _line: None)
    [policy] = merged.children
    [klass] = policy.children
    assert [child.text for child in klass.children] == ["set dscp 1", "set dscp 2"]


BROWNFIELD_HEAD = """! Command: show running-config
! device: spine1 (DCS-7280DR3-24, EOS-4.32.2F)
!
no aaa root
!
username admin privilege 15 role network-admin secret sha512 $6$abc
!
transceiver qsfp default-mode 4x10G
!
hostname spine1
!
spanning-tree mode mstp
!
banner motd
interface Ethernet9/1
   shutdown
EOF
!
"""

BROWNFIELD_TAIL = """!
interface Loopback0
   ip address 10.1.0.21/32
!
router bgp 65000
   router-id 10.1.0.21
   neighbor 10.0.0.1 remote-as 65100
   !
   address-family ipv4
      neighbor 10.0.0.1 activate
!
management api http-commands
   no shutdown
   !
   vrf mgmt
      no shutdown
!
end
"""


def running_config(text: str) -> str:
    """fabricgen's eos.cfg as a device would show it: defaults (`no shutdown`) left out, interfaces carrying
    routing and physical settings, and sections fabricgen does not own around it."""
    text = text.replace("   no shutdown\n", "")
    text = edit(text, "   description P2P_leaf1_Ethernet224\n", "   description P2P_leaf1_Ethernet224\n"
                "   load-interval 5\n   speed forced 400gfull\n   no switchport\n   ip address 10.0.0.0/31\n"
                "   bfd interval 100 min-rx 100 multiplier 3\n")
    return BROWNFIELD_HEAD + text + BROWNFIELD_TAIL


def test_eos_running_config_extras_are_ignored(example_fabric: Fabric,
                                               read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    device = read_over("spine1", {"eos.cfg": running_config(golden("spine1", "eos")["eos.cfg"])})
    assert eos.owned(device) == eos.owned(example_fabric.devices["spine1"])
    assert "Loopback0" not in {p.name for p in device.ports}
    assert "Ethernet9/1" not in {p.name for p in device.ports}  # banner text, not an interface


def test_eos_pfc_on_the_interface_itself(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    text = golden("spine1", "eos")["eos.cfg"]
    block = "   service-profile FABRICGEN_ROCE\n"  # the profile line alone: what precedes it depends on the port's mode
    text = edit(text, block, "   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n")
    text = edit(text, block, "")  # second port: no profile, no PFC
    text = edit(text, block, block + "   priority-flow-control priority 4 no-drop\n")  # third: profile + extra
    device = read_over("spine1", {"eos.cfg": text})
    pfc = {p.name: p.pfc_priorities for p in device.ports if p.role == "fabric"}
    assert pfc == {"Ethernet1/1": [3], "Ethernet2/1": [], "Ethernet3/1": [3, 4], "Ethernet4/1": [3]}


def test_eos_missing_and_extra_interfaces(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    text = golden("spine1", "eos")["eos.cfg"]
    text = edit(text, "interface Ethernet4/1\n", "interface Ethernet5/1\n")
    device = read_over("spine1", {"eos.cfg": text})
    missing = port(device, "Ethernet4/1")
    # Not there, so down and not lossless: its PFC is not the skeleton's (a lint would see a watchdog-less
    # lossless port that does not exist).
    assert (missing.admin_up, missing.pfc_priorities, missing.lossless) == (False, [], False)
    extra = port(device, "Ethernet5/1")
    assert (extra.role, extra.admin_up, extra.mtu, extra.description) == ("unused", True, 9100, "P2P_leaf2_Ethernet232")


def test_eos_bad_value_names_file_and_line(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    text = edit(golden("spine1", "eos")["eos.cfg"], "   mtu 9100\n", "   mtu jumbo\n")
    with pytest.raises(ConfigReadError) as error:
        read_over("spine1", {"eos.cfg": text})
    assert (error.value.file, error.value.line) == ("eos.cfg", line_of(text, "mtu jumbo"))


# --- ConnectX -----------------------------------------------------------------------------------------

def test_connectx_hand_edited_trust_and_pfc(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    files = golden("node1", "connectx")
    script = edit(files["fabricgen-nic.sh"], "--trust 'dscp'", "--trust 'pcp'")  # the first NIC only
    script = edit(script, "--pfc '0,0,0,1,0,0,0,0'", "--pfc '0,0,0,1,1,0,0,0'")
    host = read_over("node1", {**files, "fabricgen-nic.sh": script}).host
    assert host is not None
    first, second = host.nics
    assert (first.trust, first.pfc) == ("pcp", [0, 0, 0, 1, 1, 0, 0, 0])
    assert (second.trust, second.pfc) == ("dscp", [0, 0, 0, 1, 0, 0, 0, 0])


def test_connectx_nics_follow_all_nics(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    files = golden("node1", "connectx")
    script = edit(files["fabricgen-nic.sh"], "  nic_ens2f0np0\n}", "}")  # defined, never called
    host = read_over("node1", {"fabricgen-nic.sh": script}).host  # and no nccl.env
    assert host is not None
    assert [nic.interface for nic in host.nics] == ["ens1f0np0"] and host.nccl_env == {}


@pytest.mark.parametrize(("old", "new", "message"), [
    ("--pfc '0,0,0,1,0,0,0,0'", "--pfc '0,0,1'", "expected 8"),
    ("--trust 'dscp'", "--trust 'vlan'", "not dscp or pcp"),
    ("--tcbw '40,0,10,50,0,0,0,0'", "--tcbw '40,0,10,50,0,0,0,0", "shell words"),
    ("cc_setting \"$ifname\" 'cnp dscp' 'roce_np/cnp_dscp' 'np_cnp_dscp' '48'", "", "does not set cnp_dscp"),
])
def test_connectx_bad_script_names_file_and_line(old: str, new: str, message: str,
                                                 read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    files = golden("node1", "connectx")
    script = edit(files["fabricgen-nic.sh"], old, new)
    with pytest.raises(ConfigReadError, match=message) as error:
        read_over("node1", {**files, "fabricgen-nic.sh": script})
    expected = line_of(script, "nic_ens1f0np0() {") if not new else line_of(script, new)
    assert (error.value.file, error.value.line) == ("fabricgen-nic.sh", expected)


@pytest.mark.parametrize(("old", "new", "conflict"), [
    ("'prio-pfc 0:off 1:off 2:off 3:on", "'prio-pfc 0:off 1:off 2:off 3:off",  # the check edited
     "checks for 'prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off' but its command sets "
     "'prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off'"),
    ("--tcbw '40,0,10,50,0,0,0,0'", "--tcbw '50,0,10,40,0,0,0,0'", "but its command sets 'prio-tc 0:0 1:0 2:2 3:3 "
     "4:0 5:0 6:6 7:0 | tc-tsa 0:ets 1:strict 2:ets 3:ets 4:strict 5:strict 6:strict 7:strict | tc-bw 0:50 1:0 2:10 "
     "3:40 4:0 5:0 6:0 7:0'"),  # the command edited
    ("-- mlnx_qos -i \"$ifname\" -d os", "-- mlnx_qos -i \"$ifname\" -d fw",
     "`setting $ifname dcbx` checks for 'OS controlled' but its command sets 'Firmware controlled'"),
    ("-- mlnx_qos -i \"$ifname\" -d os", "-- mlnx_qos -i \"$ifname\" --trust dscp",
     "`setting $ifname dcbx` checks for 'OS controlled' but its command (mlnx_qos -i ...) does not set its dcbx"),
    ("-p 1 -m 2", "-p 1 -m 1", "`setting $rdma roce mode` checks for 'RoCE v2' but its command sets 'IB/RoCE v1'"),
])
def test_connectx_setting_whose_check_and_command_disagree(old: str, new: str, conflict: str) -> None:
    """The reader reads the command; the conflict says the NIC may run the checked value instead."""
    files = golden("node1", "connectx")
    assert connectx.conflicts(files) == []  # as rendered: every check is its command's value
    script = edit(files["fabricgen-nic.sh"], old, new)
    [found] = connectx.conflicts({**files, "fabricgen-nic.sh": script})
    assert (found.file, found.line, found.port) == ("fabricgen-nic.sh", line_of(script, new), "ens1f0np0")
    assert conflict in found.message, found.message


@pytest.mark.parametrize("written", ["-f '0,0,0,1,1,0,0,0'", "--pfc='0,0,0,1,1,0,0,0'", "--pf '0,0,0,1,1,0,0,0'",
                                     "-f0,0,0,1,1,0,0,0"])
def test_connectx_mlnx_qos_options_read_as_the_tool_reads_them(
        written: str, read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    """mlnx_qos parses its options with optparse: a short option, an attached value, a unique prefix."""
    files = golden("node1", "connectx")
    script = edit(files["fabricgen-nic.sh"], "--pfc '0,0,0,1,0,0,0,0'", written)
    host = read_over("node1", {**files, "fabricgen-nic.sh": script}).host
    assert host is not None and host.nics[0].pfc == [0, 0, 0, 1, 1, 0, 0, 0]


def test_connectx_mlnx_qos_calls_beside_the_scripts_own(
        read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    """Hand-added calls: --specific_pfc changes the priorities it gives and keeps the rest; --defltprio and -d get
    set nothing fabricgen reads."""
    files = golden("node1", "connectx")
    extra = ("  mlnx_qos -i \"$ifname\" --specific_pfc x,x,x,x,1,x,x,x\n  mlnx_qos -i \"$ifname\" --defltprio set,0\n"
             "  mlnx_qos -i \"$ifname\" -d get\n")
    script = edit(files["fabricgen-nic.sh"], "  cc_setting \"$ifname\" 'dcqcn np prio 3'",
                  extra + "  cc_setting \"$ifname\" 'dcqcn np prio 3'")
    host = read_over("node1", {**files, "fabricgen-nic.sh": script}).host
    assert host is not None and host.nics[0].pfc == [0, 0, 0, 1, 1, 0, 0, 0] and host.nics[0].dcbx is None


def test_connectx_mlnx_qos_option_the_tool_refuses(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    files = golden("node1", "connectx")
    script = edit(files["fabricgen-nic.sh"], "--pfc '0,0,0,1,0,0,0,0'", "--pfcs '0,0,0,1,0,0,0,0'")
    with pytest.raises(ConfigReadError, match="mlnx_qos refuses this call: no such option: --pfcs") as error:
        read_over("node1", {**files, "fabricgen-nic.sh": script})
    assert error.value.line == line_of(script, "--pfcs")


def test_connectx_script_must_be_fabricgens(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    with pytest.raises(ConfigReadError, match="not a script fabricgen wrote") as error:
        read_over("node1", {"fabricgen-nic.sh": "#!/bin/sh\nmlnx_qos -i ens1f0np0 --trust dscp\n"})
    assert error.value.line == 1


def test_connectx_bad_nccl_env_line(read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    files = golden("node1", "connectx")
    env = files["nccl.env"] + "this is not an assignment\n"
    with pytest.raises(ConfigReadError) as error:
        read_over("node1", {**files, "nccl.env": env})
    assert (error.value.file, error.value.line) == ("nccl.env", len(env.splitlines()))


SHELL_LINES = ["a 'b c' d", 'x"y z"w', "''", '""', "a  b", "'", '"a', "it's", '"it\'s"', "a'b'c", " lead", "trail ",
               "a\\ b", "a # c", 'mlnx_qos -i "$ifname" --pfc \'0,0,0,1,0,0,0,0\'', "", "   "]


def test_host_script_words_split_as_shlex_splits_them() -> None:
    """The readers split each host-script line into words with a fast path (no shlex for lines without a backslash
    or `#`): every line of the golden host scripts, and the quoting corner cases, split exactly as shlex does — or
    the fast path declines and shlex decides (unbalanced quotes are still the script's error)."""
    import shlex

    from fabricgen.platforms.common.hostscript import plain_words

    lines = [line for path in sorted(ROOT.glob("golden/**/*.sh")) for line in path.read_text().splitlines()]
    assert len(lines) > 500
    for line in [*lines, *SHELL_LINES]:
        fast = plain_words(line)
        try:
            expected: list[str] | None = shlex.split(line, comments=True)
        except ValueError:
            expected = None
        assert fast is None or fast == expected, line


def test_host_scripts_that_differ_only_in_what_sets_nothing_are_read_once(
        read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    """Hosts run scripts that differ only in comments and messages (their name, their peers): the handlers run
    once per distinct set of NIC-function lines and the Script is shared. A NIC line that differs, or the same
    lines at other line numbers, is a script of its own: read from its own text, errors at its own line."""
    files = golden("node1", "connectx")
    script = files["fabricgen-nic.sh"]
    renamed = script.replace("node1", "node9").replace("# Readers print", "# peer r9-leaf3:Ethernet9; Readers print")
    assert renamed != script
    parse = connectx._FILE.parse
    first, second = (parse(text, connectx._Nic, connectx._LINES) for text in (script, renamed))
    assert first is second  # read once: the second host shares the first one's Script
    edited = edit(script, "--pfc '0,0,0,1,0,0,0,0'", "--pfc '0,0,0,1,1,0,0,0'")
    third = parse(edited, connectx._Nic, connectx._LINES)
    assert third is not first and third.nics["nic_ens1f0np0"].values["pfc"] == [0, 0, 0, 1, 1, 0, 0, 0]
    assert first.nics["nic_ens1f0np0"].values["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    shifted = "\n" + script.replace("--trust 'dscp'", "--trust 'vlan'", 1)  # one line lower, and wrong
    for _ in range(2):  # errors are not remembered: the same bad script fails again, at its own line
        with pytest.raises(ConfigReadError, match="not dscp or pcp") as error:
            read_over("node1", {**files, "fabricgen-nic.sh": shifted})
        assert error.value.line == line_of(shifted, "--trust 'vlan'")
    host = read_over("node1", {**files, "fabricgen-nic.sh": renamed}).host
    assert host is not None and [nic.pfc for nic in host.nics] == [[0, 0, 0, 1, 0, 0, 0, 0]] * 2


@pytest.mark.parametrize(("old", "new"), [
    ("--trust 'dscp'", "--trust 'pcp'"),  # a handled line of the first NIC
    ("  nic_ens2f0np0\n}", "}"),  # a call in all_nics() dropped
    ("nic_ens1f0np0() {", "nic_ens1f0np1() {"),  # a NIC function renamed
])
def test_host_script_walk_is_shared_only_by_scripts_alike_but_for_comments_and_echoes(
        old: str, new: str, read_over: Callable[[str, dict[str, str]], DeviceModel]) -> None:
    """The walk over a script's lines is remembered per text without its comment and echo lines (the host's name
    and cables are all that differ between the hosts of a fabric): a host whose script differs from another's in
    any other line is walked on its own, and its own setting is the one read."""
    from fabricgen.platforms.common.hostscript import _walk, _walked

    script = golden("node1", "connectx")["fabricgen-nic.sh"]
    assert "echo \"" in script and "\n# " in script
    renamed = script.replace("node1", "node9").replace("\n# ", "\n# peer r9-leaf3:Ethernet9; ")
    edited = edit(renamed, old, new)
    for text in (script, renamed, edited, script + "echo\n", script + "  # }\n  echo }\n"):
        assert _walked(text, connectx._LINES) == _walk(text.splitlines(), connectx._LINES), text[-40:]
    assert _walked(renamed, connectx._LINES) is _walked(script, connectx._LINES)
    assert _walked(edited, connectx._LINES) != _walked(script, connectx._LINES)



def _reader_patterns() -> list[str]:
    """Every pattern literal the EOS and NX-OS readers ask a CLI block (each / last / last_int, and _read_ecn's)."""
    import re

    found: set[str] = set()
    for name in ("eos", "nxos"):
        source = (ROOT / "fabricgen" / "platforms" / name / "read.py").read_text()
        found |= set(re.findall(r'\.(?:each|last|last_int)\(r"((?:[^"\\]|\\.)*)"', source))
        found |= {"".join(re.findall(r'r"((?:[^"\\]|\\.)*)"', m)) for m in re.findall(r"pattern = \((.*?)\)\n", source,
                                                                                      re.S)}
    return sorted(found)


def test_cli_children_found_by_command_word_are_the_ones_a_full_scan_finds() -> None:
    """Node.each looks only at the children whose command word a pattern fixes (an index per block): for every
    pattern the EOS and NX-OS readers use, on every block of every such config at hand (goldens, the AVD leaf),
    it finds exactly what matching every child finds, in the same order."""
    import re

    import fabricgen.platforms.nxos.read as nxos
    from fabricgen.platforms.common.clitext import Node, command_word

    patterns = _reader_patterns()
    assert len(patterns) > 30 and sum(command_word(p) is not None for p in patterns) > 25
    configs = [*sorted(ROOT.glob("golden/**/*.cfg")), *sorted(ROOT.glob("tests/vendor_configs/*/*.cfg"))]
    compared = 0
    for path in configs:
        root = nxos._tree(path.read_text()) if path.name == "nxos.cfg" else eos._tree(path.read_text())
        stack: list[Node] = [root]
        while stack:
            node = stack.pop()
            stack += node.children
            for pattern in patterns:
                compiled = re.compile(pattern)
                found = [(match.group(0), child.line) for match, child in node.each(pattern)]
                assert found == [(c.text, c.line) for c in node.children if compiled.fullmatch(c.text)], pattern
                compared += len(found)
    assert compared > 500
