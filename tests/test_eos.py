"""EOS renderer details that depend on the platform family or the management address family."""

from __future__ import annotations

import pytest

import fabricgen.platforms.eos.read as reader
from fabricgen.api import render_device
from fabricgen.lint import lint
from fabricgen.lint.rules.drift import differences
from fabricgen.models.device import DeviceModel, Fabric, MgmtModel, PortModel
from fabricgen.platforms import ConfigReadError
from fabricgen.platforms.eos.render import natural_key, queue_keyword, seconds, speed_keyword


def test_queue_keyword_follows_the_asic_family() -> None:
    assert queue_keyword("DCS-7280DR3-24") == "tx-queue"  # Jericho2: VOQ, one queue space
    assert queue_keyword("DCS-7800R3-36P-LC") == "tx-queue"
    assert queue_keyword("DCS-7060X5-64S") == "uc-tx-queue"  # Tomahawk: unicast/multicast split


def test_trident_spine_uses_uc_tx_queue_for_ecn(example_fabric: Fabric) -> None:
    spine = example_fabric.devices["spine1"].model_copy(update={"hardware": "DCS-7060X5-64S"})
    text = render_device(spine)["eos.cfg"]
    assert "   uc-tx-queue 3\n" in text and "   tx-queue 3\n" not in text
    assert "qos map traffic-class 3 to uc-tx-queue 3\n" in text


def test_watchdog_timers_in_seconds() -> None:
    assert (seconds(200), seconds(100), seconds(1500), seconds(60000)) == ("0.2", "0.1", "1.5", "60")


def test_ipv6_management(example_fabric: Fabric) -> None:
    spine = example_fabric.devices["spine1"]
    assert spine.mgmt is not None
    v6 = MgmtModel(**{**spine.mgmt.model_dump(), "address": "2001:db8::21/64", "gateway": "2001:db8::1"})
    text = render_device(spine.model_copy(update={"mgmt": v6}))["eos.cfg"]
    assert "   ipv6 address 2001:db8::21/64\n" in text
    assert "ipv6 route vrf mgmt ::/0 2001:db8::1\n" in text


def test_interfaces_are_natural_sorted() -> None:
    names = ["Ethernet10/1", "Ethernet1/10", "Ethernet2/1", "Ethernet1/2"]
    assert sorted(names, key=natural_key) == ["Ethernet1/2", "Ethernet1/10", "Ethernet2/1", "Ethernet10/1"]


def test_oob_switch_has_management_vlan_and_no_lossless_config(example_fabric: Fabric) -> None:
    text = render_device(example_fabric.devices["oob1"])["eos.cfg"]
    assert "vlan 100\n   name OOB_MGMT\n" in text
    assert "switchport access vlan 100" in text
    assert "priority-flow-control" not in text and "qos profile" not in text


def test_reader_reports_a_bad_l2_mtu_at_its_line(example_fabric: Fabric) -> None:
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"].replace("   no switchport\n", "   l2 mtu 70000\n   switchport\n", 1)
    with pytest.raises(ConfigReadError) as error:
        reader.read(spine, {"eos.cfg": text})
    assert error.value.file == "eos.cfg" and "70000" in error.value.message
    assert text.splitlines()[error.value.line - 1] == "   l2 mtu 70000"


def test_interface_defaults_mtu_is_layer_3_only(example_fabric: Fabric) -> None:
    """`interface defaults` / `mtu` sets the L3 MTU of routed interfaces; a switchport keeps its L2 MTU."""
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"].replace("   mtu 9100\n", "")  # every data port: the default applies
    text = text.replace("   no switchport\n", "   switchport\n", 1)  # Ethernet1/1 becomes a switchport
    read = reader.read(spine, {"eos.cfg": "interface defaults\n   mtu 9100\n!\n" + text})
    mtus = {p.name: (p.mode, p.mtu) for p in read.ports if p.role == "fabric"}
    assert mtus == {"Ethernet1/1": ("switched", reader.DEFAULT_L2_MTU), "Ethernet2/1": ("routed", 9100),
                    "Ethernet3/1": ("routed", 9100), "Ethernet4/1": ("routed", 9100)}


# --- the reader: each port's effective state ------------------------------------------------------------------

def _read_with(example_fabric: Fabric, block: str, port: str = "Ethernet1/1") -> PortModel:
    """spine1 read back with ``block`` appended to the interface block of ``port`` (a later line wins on EOS)."""
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"]
    head = f"\ninterface {port}\n"
    end = text.index("!\n", text.index(head) + 1)
    read = reader.read(spine, {"eos.cfg": text[:end] + block + text[end:]})
    return next(p for p in read.ports if p.name == port)


@pytest.mark.parametrize(("line", "mbps"), [
    ("speed 400g", 400_000), ("speed 400g-8", 400_000), ("speed 100g-4", 100_000), ("speed 2p5g", 2_500),
    ("speed 100full", 100), ("speed forced 100gfull", 100_000), ("speed auto", None), ("speed auto 400g-8", None),
])
def test_speed_reads_as_the_fixed_speed_or_none_when_negotiated(example_fabric: Fabric, line: str,
                                                                mbps: int | None) -> None:
    assert _read_with(example_fabric, f"   {line}\n").speed_mbps == mbps


def test_speed_is_written_as_eos_spells_it() -> None:
    assert speed_keyword(400_000, None) == "400g"
    assert speed_keyword(400_000, "0,1,2,3,4,5,6,7") == "400g-8"  # 8 electrical lanes
    assert speed_keyword(25_000, "0") == "25g"  # no lane count below 50G
    assert (speed_keyword(2_500, None), speed_keyword(100, None)) == ("2p5g", "100full")


@pytest.mark.parametrize(("lines", "fec"), [
    ([], "rs"),  # the rendered reed-solomon line
    (["error-correction encoding fire-code", "no error-correction encoding reed-solomon"], "fc"),
    (["no error-correction encoding"], "none"),
    (["no error-correction encoding", "error-correction encoding fire-code"], "fc"),
    (["error-correction encoding fire-code"], None),  # both allowed: EOS chooses
])
def test_fec_follows_the_error_correction_lines_in_order(example_fabric: Fabric, lines: list[str],
                                                         fec: str | None) -> None:
    assert _read_with(example_fabric, "".join(f"   {line}\n" for line in lines)).fec == fec


def test_fec_and_speed_absent_read_as_not_set(example_fabric: Fabric) -> None:
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"].replace("   speed 400g\n", "")
    text = text.replace("   error-correction encoding reed-solomon\n", "")
    read = reader.read(spine, {"eos.cfg": text})
    assert {(p.speed_mbps, p.fec) for p in read.ports if p.role == "fabric"} == {(None, None)}


def test_trunk_vlans_are_the_allowed_ones_but_the_native(example_fabric: Fabric) -> None:
    trunk = "   switchport mode trunk\n   switchport\n"
    port = _read_with(example_fabric, "   switchport trunk allowed vlan 10-12,20\n" + trunk)
    assert (port.mode, port.tagged_vlans, port.access_vlan) == ("switched", [10, 11, 12, 20], None)
    assert _read_with(example_fabric, trunk).tagged_vlans == list(range(2, 4095))  # all VLANs, VLAN 1 native
    native = "   switchport trunk allowed vlan 1-3\n   switchport trunk native vlan 2\n"
    assert _read_with(example_fabric, native + trunk).tagged_vlans == [1, 3]
    tagged = "   switchport trunk allowed vlan 1-3\n   switchport trunk native vlan tag\n"
    assert _read_with(example_fabric, tagged + trunk).tagged_vlans == [1, 2, 3]
    assert _read_with(example_fabric, "   switchport trunk allowed vlan none\n" + trunk).tagged_vlans is None


def test_trunk_lines_on_a_routed_or_access_port_carry_nothing(example_fabric: Fabric) -> None:
    assert _read_with(example_fabric, "   switchport mode trunk\n").tagged_vlans is None  # still `no switchport`
    access = _read_with(example_fabric, "   switchport trunk allowed vlan 10\n   switchport access vlan 20\n"
                                        "   switchport\n")
    assert (access.tagged_vlans, access.access_vlan) == (None, 20)


def test_a_bad_trunk_vlan_is_reported_at_its_line(example_fabric: Fabric) -> None:
    with pytest.raises(ConfigReadError) as error:
        _read_with(example_fabric, "   switchport trunk allowed vlan 10,5000\n   switchport mode trunk\n"
                                   "   switchport\n")
    assert "5000" in error.value.message and "switchport trunk allowed vlan 10,5000" in error.value.message


def test_a_port_with_the_device_qos_has_no_port_qos(example_fabric: Fabric) -> None:
    assert _read_with(example_fabric, "").qos is None
    assert _read_with(example_fabric, "   qos trust dscp\n").qos is None  # the profile's trust, said again


def test_port_trust_overrides_the_profile_and_defaults_by_mode(example_fabric: Fabric) -> None:
    cos = _read_with(example_fabric, "   qos trust cos\n").qos
    assert cos is not None and cos.trust == "pcp"
    untrusted = _read_with(example_fabric, "   no qos trust\n").qos
    assert untrusted is not None and untrusted.trust == "none"
    # A profile without `qos trust`: a routed port trusts DSCP, a switchport CoS (EOS's defaults).
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"].replace("   qos trust dscp\n", "")
    text = text.replace("   no switchport\n", "   switchport\n", 1)  # Ethernet1/1 becomes a switchport
    read = reader.read(spine, {"eos.cfg": text})
    assert read.qos is not None and read.qos.trust == "dscp"
    trusts = {p.name: p.qos.trust if p.qos else None for p in read.ports if p.role == "fabric"}
    assert trusts == {"Ethernet1/1": "pcp", "Ethernet2/1": None, "Ethernet3/1": None, "Ethernet4/1": None}


def test_interface_tx_queue_ecn_replaces_the_profiles_on_that_port(example_fabric: Fabric) -> None:
    block = ("   !\n   tx-queue 3\n      random-detect ecn minimum-threshold 1000 bytes maximum-threshold 2000 bytes "
             "max-mark-probability 100\n")
    qos = _read_with(example_fabric, block).qos
    assert qos is not None
    queue = next(q for q in qos.queues if q.index == 3)
    assert queue.ecn is not None and (queue.ecn.min_bytes, queue.ecn.max_bytes) == (1000, 2000)
    assert (queue.scheduler, queue.weight) == ("dwrr", 50)  # the rest of the queue is still the profile's
    owned = reader.owned(example_fabric.devices["spine1"].model_copy(update={"ports": [
        p.model_copy(update={"qos": qos}) if p.name == "Ethernet1/1" else p
        for p in example_fabric.devices["spine1"].ports]}))
    port_qos, device_qos = owned["ports"]["Ethernet1/1"]["qos"], owned["qos"]
    assert [key for key in port_qos if port_qos[key] != device_qos[key]] == ["queues"]
    differs = differences(port_qos, device_qos, "qos")  # what lint --configs reports: queue 3's ECN, nothing else
    assert differs and all(".ecn." in text for text in differs), differs


def test_a_port_on_a_profile_without_the_watchdog_has_none(example_fabric: Fabric) -> None:
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"]
    profile = text[text.index("qos profile FABRICGEN_ROCE\n"):text.index("\n!\n", text.index("qos profile")) + 1]
    other = profile.replace("FABRICGEN_ROCE", "NO_WATCHDOG").replace("   priority-flow-control pause watchdog\n", "")
    text = text.replace(profile, profile + "!\n" + other)
    text = text.replace("   service-profile FABRICGEN_ROCE\n", "   service-profile NO_WATCHDOG\n", 1)
    read = reader.read(spine, {"eos.cfg": text})
    assert read.qos is not None and read.qos.watchdog is not None  # three ports of four keep the device's profile
    first = next(p for p in read.ports if p.name == "Ethernet1/1")
    assert first.qos is not None and first.qos.watchdog is None and first.pfc_priorities == [3]
    owned = reader.owned(read)
    assert [line.split(" is ")[0] for line in differences(owned["ports"]["Ethernet1/1"]["qos"], owned["qos"], "qos")] \
        == ["qos.watchdog.action", "qos.watchdog.detection_ms", "qos.watchdog.poll_ms", "qos.watchdog.restoration_ms"]


def test_vlan_ranges_print_as_eos_does() -> None:
    assert reader.vlan_ranges([2, 3, 4, 10, 12, 13]) == "2-4,10,12-13"
    assert reader.vlan_ranges(list(range(2, 4095))) == "2-4094"


# The default DSCP-to-traffic-class map of the Arista EOS User Manual, chapter "Quality of Service"
# (https://www.arista.com/en/um-eos/eos-quality-of-service), the same in every platform family's section: written
# out range by range here, so the test checks the reader against the table and not against its own formula.
EOS_MANUAL_DEFAULT_DSCP_TC = {range(0, 8): 1, range(8, 16): 0, range(16, 24): 2, range(24, 32): 3,
                              range(32, 40): 4, range(40, 48): 5, range(48, 56): 6, range(56, 64): 7}


def _without_dscp_map(example_fabric: Fabric, *extra: str) -> tuple[Fabric, DeviceModel]:
    """The example fabric with spine1 read back from its eos.cfg without any `qos map dscp` line (``extra`` lines
    added at the top of the config instead)."""
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"]
    kept = [line for line in text.splitlines(keepends=True) if not line.startswith("qos map dscp ")]
    assert len(kept) < len(text.splitlines())  # the rendered config maps DSCPs, so something was taken out
    read = reader.read(spine, {"eos.cfg": "".join(f"{line}\n!\n" for line in extra) + "".join(kept)})
    return example_fabric.model_copy(update={"devices": {**example_fabric.devices, "spine1": read}}), read


def _spine1_findings(fabric: Fabric, *rules: str) -> set[str]:
    return {f"{f.rule} {f.subject}" for f in lint(fabric).findings if f.device == "spine1" and f.rule in rules}


def test_dscps_without_a_qos_map_line_run_on_eos_default_classes(example_fabric: Fabric) -> None:
    fabric, read = _without_dscp_map(example_fabric)
    assert read.qos is not None
    assert read.qos.dscp_to_tc == {dscp: tc for dscps, tc in EOS_MANUAL_DEFAULT_DSCP_TC.items() for dscp in dscps}
    assert (read.qos.dscp_to_tc[26], read.qos.dscp_to_tc[48]) == (3, 6)  # RoCE's TC and the CNP class's
    # So lint sees every DSCP classified, RoCE in its lossless TC 3 and CNPs in TC 6, as the rest of the fabric.
    assert _spine1_findings(fabric, "FG-CLS-001", "FG-CLS-002", "FG-CLS-006", "FG-ECN-006") == set()


def test_a_qos_map_line_wins_over_the_default_for_its_dscps_only(example_fabric: Fabric) -> None:
    fabric, read = _without_dscp_map(example_fabric, "qos map dscp 26 to traffic-class 5")
    assert read.qos is not None
    assert (read.qos.dscp_to_tc[26], read.qos.dscp_to_tc[27], read.qos.dscp_to_tc[48]) == (5, 3, 6)
    assert _spine1_findings(fabric, "FG-CLS-002", "FG-CLS-006") == {
        "FG-CLS-006 spine1", *(f"FG-CLS-002 spine1:{p.name}" for p in read.ports if p.role == "fabric")}


def test_a_model_that_leaves_dscps_out_projects_them_on_eos_defaults(example_fabric: Fabric) -> None:
    """owned() shows what the switch does: a DSCP the model does not map has EOS's default class, as its config
    (which has no line for it) reads back."""
    spine = example_fabric.devices["spine1"]
    assert spine.qos is not None
    partial = spine.model_copy(update={"qos": spine.qos.model_copy(update={"dscp_to_tc": {26: 5}})})
    config = render_device(partial)["eos.cfg"]
    assert [line for line in config.splitlines() if line.startswith("qos map dscp")] == \
        ["qos map dscp 26 to traffic-class 5"]
    assert reader.owned(reader.read(partial, {"eos.cfg": config})) == reader.owned(partial)
    assert reader.owned(partial)["qos"]["dscp_to_tc"][0] == 1


ECN_IN_BYTES = "random-detect ecn minimum-threshold 5000 bytes maximum-threshold 40000 bytes"  # spine1's


@pytest.mark.parametrize(("thresholds", "ecn", "unconverted"), [
    # Arista's documented form (kbytes), as a brownfield profile writes it: 1 kbyte = 1,024 bytes (clitext.BYTE_UNITS).
    ("minimum-threshold 5 kbytes maximum-threshold 40 kbytes", (5 * 1024, 40 * 1024), None),
    ("minimum-threshold 5 kbytes maximum-threshold 1 mbytes", (5 * 1024, 1024 * 1024), None),
    # No byte count (a Jericho's time thresholds, segments): the queue marks, its thresholds read as written.
    ("minimum-threshold 320 microseconds maximum-threshold 480 microseconds", None, (320, 480, "microseconds")),
    ("minimum-threshold 100 segments maximum-threshold 1000 segments", None, (100, 1000, "segments")),
])
def test_ecn_thresholds_read_in_bytes_or_as_written(example_fabric: Fabric, thresholds: str,
                                                    ecn: tuple[int, int] | None,
                                                    unconverted: tuple[int, int, str] | None) -> None:
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"]
    assert text.count(ECN_IN_BYTES) == 1  # the profile's RoCE queue
    read = reader.read(spine, {"eos.cfg": text.replace(ECN_IN_BYTES, f"random-detect ecn {thresholds}")})
    assert read.qos is not None
    queue = next(q for q in read.qos.queues if q.traffic_class == 3)
    assert ((queue.ecn.min_bytes, queue.ecn.max_bytes) if queue.ecn else None) == ecn
    other = queue.ecn_unconverted
    assert ((other.min, other.max, other.unit) if other else None) == unconverted
    fabric = example_fabric.model_copy(update={"devices": {**example_fabric.devices, "spine1": read}})
    found = {f.rule: f for f in lint(fabric).findings if f.device == "spine1"}
    assert "FG-ECN-004" not in found and "FG-PFC-006" not in found  # the queue marks, in any unit
    if ecn:  # the thresholds are read, and lint names how they differ from the intent's 5,000..40,000 B
        assert "FG-ECN-008" in found and "FG-ECN-010" not in found
    else:  # said, not judged: no byte count to hold against the pause point or the fabric
        assert found["FG-ECN-010"].severity == "info" and "FG-ECN-008" not in found
        assert f"marks ECN at {thresholds.split()[1]}..{thresholds.split()[4]} {thresholds.split()[2]}" \
            in found["FG-ECN-010"].message


def test_ecn_in_one_unit_with_min_not_below_max_is_still_found(example_fabric: Fabric) -> None:
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"].replace(
        ECN_IN_BYTES, "random-detect ecn minimum-threshold 480 microseconds maximum-threshold 320 microseconds")
    fabric = example_fabric.model_copy(update={"devices": {**example_fabric.devices,
                                                           "spine1": reader.read(spine, {"eos.cfg": text})}})
    assert _spine1_findings(fabric, "FG-ECN-001") == {"FG-ECN-001 spine1"}


@pytest.mark.parametrize(("profile", "interface", "ecn", "unconverted"), [
    ("minimum-threshold 5000 bytes maximum-threshold 40000 bytes",
     "minimum-threshold 100 segments maximum-threshold 1000 segments", None, (100, 1000, "segments")),
    ("minimum-threshold 100 segments maximum-threshold 1000 segments",
     "minimum-threshold 5000 bytes maximum-threshold 40000 bytes", (5000, 40000), None),
])
def test_an_interfaces_ecn_replaces_the_profiles_in_either_unit(example_fabric: Fabric, profile: str, interface: str,
                                                              ecn: tuple[int, int] | None,
                                                              unconverted: tuple[int, int, str] | None) -> None:
    """The port's own thresholds replace the profile's whole: never one field of each (a review found the reader
    crashing on the first case, and reporting drift on a port that marks as intended on the second)."""
    spine = example_fabric.devices["spine1"]
    text = render_device(spine)["eos.cfg"].replace(ECN_IN_BYTES, f"random-detect ecn {profile}")
    head = "\ninterface Ethernet1/1\n"
    end = text.index("!\n", text.index(head) + 1)
    text = text[:end] + f"   !\n   tx-queue 3\n      random-detect ecn {interface}\n" + text[end:]
    read = reader.read(spine, {"eos.cfg": text})
    own = next(p for p in read.ports if p.name == "Ethernet1/1").qos
    assert own is not None
    queue = next(q for q in own.queues if q.index == 3)
    assert ((queue.ecn.min_bytes, queue.ecn.max_bytes) if queue.ecn else None) == ecn
    other = queue.ecn_unconverted
    assert ((other.min, other.max, other.unit) if other else None) == unconverted
    fabric = example_fabric.model_copy(update={"devices": {**example_fabric.devices, "spine1": read}})
    # FG-ECN-010 names whichever side writes no byte count: the port alone, or the switch (its other ports).
    assert _spine1_findings(fabric, "FG-ECN-010") == {"FG-ECN-010 spine1:Ethernet1/1" if unconverted
                                                      else "FG-ECN-010 spine1"}
