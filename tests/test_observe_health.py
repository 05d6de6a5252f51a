"""`health` judges counter windows against the intent: each fault lands in its layer, on its device:port, with the
lint rule or intent key it points to; findings come out bottom-up."""

from __future__ import annotations

from fabricgen.models.device import Fabric
from fabricgen.observe.health import RULES, HealthFinding, judge
from fabricgen.observe.model import DeviceSnapshot, Layer, Snapshot, reading

HEALTHY = {  # switch port / host NIC counters of a quiet lossless fabric (priority/queue 3 is the RoCE class)
    "switch": [("fec_corrected", None), ("fec_uncorrected", None), ("carrier_transitions", None),
               *[(m, p) for m in ("pfc_rx_pause", "pfc_tx_pause") for p in range(8)],
               *[(m, q) for m in ("queue_dropped", "queue_wred_dropped", "queue_ecn_marked",
                                  "pfc_watchdog_storms") for q in range(8)]],
    "host": [("fcs_errors", None), ("carrier_transitions", None), ("cnp_sent", None), ("cnp_handled", None),
             ("out_of_sequence", None), *[(m, p) for m in ("pfc_rx_pause", "pfc_tx_pause", "prio_ecn_marked",
                                                           "prio_buffer_discards") for p in range(8)]],
}


def snapshot(fabric: Fabric, taken_at: float, faults: dict[tuple[str, str, str, int | None], float] | None = None,
             ) -> Snapshot:
    """Every data port of the fabric with healthy counters at 1000, plus `faults` added on top."""
    snap = Snapshot(taken_at)
    for name, device in sorted(fabric.devices.items()):
        if device.qos is None:
            continue
        kind = "host" if device.host else "switch"
        ports = [nic.interface for nic in device.host.nics] if device.host else \
            [port.name for port in device.ports if port.peer and port.role != "mgmt"]
        readings = []
        for port in ports:
            for metric, index in HEALTHY[kind]:
                extra = (faults or {}).get((name, port, metric, index), 0.0)
                readings.append(reading(name, port, metric, 1000 + extra, index))
        snap.devices[name] = DeviceSnapshot(name, device.platform, readings)
    return snap


def run(fabric: Fabric, faults: dict[tuple[str, str, str, int | None], float],
        baseline: Snapshot | None = None) -> list[HealthFinding]:
    return judge(fabric, snapshot(fabric, 1000.0), snapshot(fabric, 1060.0, faults), baseline)


def test_a_quiet_fabric_is_healthy(example_fabric: Fabric) -> None:
    assert run(example_fabric, {}) == []


def test_fec_uncorrectable_names_physical_layer_device_and_port(example_fabric: Fabric) -> None:
    [finding] = run(example_fabric, {("leaf1", "Ethernet224", "fec_uncorrected", None): 120})
    assert (finding.rule, finding.layer, finding.subject) == ("FG-OBS-101", Layer.PHYSICAL, "leaf1:Ethernet224")
    assert finding.counters == {"fec_uncorrected": 120} and finding.rates == {"fec_uncorrected": 2.0}
    assert "FG-PHY-002" in finding.points_to


def test_symbols_the_fec_did_not_correct_are_fec_uncorrectable_too(example_fabric: Fabric) -> None:
    """mlx5's rx_pcs_symbol_err_phy (and NVUE's phy-detail symbol-errors) count symbols, not codewords."""
    before, after = snapshot(example_fabric, 1000.0), snapshot(example_fabric, 1060.0)
    for snap, value in ((before, 1000), (after, 1030)):
        snap.devices["node1"].readings.append(reading("node1", "ens1f0np0", "fec_uncorrected_symbols", value))
    [finding] = judge(example_fabric, before, after, None)
    assert (finding.rule, finding.layer, finding.subject) == ("FG-OBS-101", Layer.PHYSICAL, "node1:ens1f0np0")
    assert finding.counters == {"fec_uncorrected_symbols": 30} and finding.rates == {"fec_uncorrected_symbols": 0.5}
    assert finding.cause.startswith("symbol errors the FEC did not correct: frames are being lost")


def test_lossless_queue_drops_are_errors_lossy_drops_are_not(example_fabric: Fabric) -> None:
    findings = run(example_fabric, {("leaf2", "Ethernet0", "queue_dropped", 3): 5,
                                    ("leaf2", "Ethernet0", "queue_dropped", 0): 500,
                                    ("node1", "ens1f0np0", "prio_buffer_discards", 3): 7})
    assert [(f.rule, f.subject, f.counters) for f in findings] == [
        ("FG-OBS-202", "leaf2:Ethernet0", {"queue_dropped[3]": 5}),
        ("FG-OBS-202", "node1:ens1f0np0", {"prio_buffer_discards[3]": 7})]


def test_pauses_on_a_lossy_priority_are_a_classification_mismatch(example_fabric: Fabric) -> None:
    # ECN marks grow with the RoCE pauses, so only the lossy-priority pauses are a finding.
    findings = run(example_fabric, {("node2", "ens1f0np0", "pfc_tx_pause", 1): 40})
    assert [(f.rule, f.subject) for f in findings] == [("FG-OBS-203", "node2:ens1f0np0")]
    assert "lossless: 3" in findings[0].cause


def test_pauses_growing_without_ecn_marks(example_fabric: Fabric) -> None:
    findings = run(example_fabric, {("leaf1", "Ethernet8", "pfc_tx_pause", 3): 900})
    [finding] = findings
    assert (finding.rule, finding.layer, finding.subject) == ("FG-OBS-301", Layer.CONGESTION, "leaf1:Ethernet8")
    assert finding.counters == {"pfc_pause[3]": 900, "queue_ecn_marked[3]": 0.0}
    # With ECN marking on the same queue, the same pauses are DCQCN working as designed.
    assert run(example_fabric, {("leaf1", "Ethernet8", "pfc_tx_pause", 3): 900,
                                ("leaf1", "Ethernet8", "queue_ecn_marked", 3): 5000}) == []


def test_cnp_sent_but_never_handled(example_fabric: Fabric) -> None:
    findings = run(example_fabric, {("node3", "ens1f0np0", "cnp_sent", None): 30})
    assert [(f.rule, f.subject) for f in findings] == [("FG-OBS-302", "node3:ens1f0np0")]
    assert run(example_fabric, {("node3", "ens1f0np0", "cnp_sent", None): 30,
                                ("node1", "ens1f0np0", "cnp_handled", None): 29}) == []


def test_watchdog_storm_is_a_deadlock_risk(example_fabric: Fabric) -> None:
    [finding] = run(example_fabric, {("spine1", "Ethernet1/1", "pfc_watchdog_storms", 3): 1})
    assert (finding.rule, finding.layer, finding.subject) == ("FG-OBS-204", Layer.LINK, "spine1:Ethernet1/1")
    assert "deadlock" in finding.cause


def test_pre_fec_ber_threshold(example_fabric: Fabric) -> None:
    before, after = snapshot(example_fabric, 0.0), snapshot(example_fabric, 60.0)
    after.devices["leaf1"].readings.append(reading("leaf1", "Ethernet224", "pre_fec_ber", 3e-5))
    after.devices["leaf2"].readings.append(reading("leaf2", "Ethernet224", "pre_fec_ber", 2e-9))
    assert [(f.rule, f.subject) for f in judge(example_fabric, before, after)] == [("FG-OBS-102", "leaf1:Ethernet224")]


def test_corrected_fec_trend_against_the_baseline(example_fabric: Fabric) -> None:
    # A week of 1 corrected codeword a minute, then 60 a minute: the optic is ageing though nothing is lost yet.
    baseline = snapshot(example_fabric, 1000.0 - 7 * 86400)
    baseline.devices["leaf1"].readings = [r if (r.port, r.metric) != ("Ethernet232", "fec_corrected") else
                                          reading("leaf1", "Ethernet232", "fec_corrected", 1000 - 7 * 1440)
                                          for r in baseline.devices["leaf1"].readings]
    findings = run(example_fabric, {("leaf1", "Ethernet232", "fec_corrected", None): 60}, baseline)
    assert [(f.rule, f.severity, f.subject) for f in findings] == [("FG-OBS-103", "warning", "leaf1:Ethernet232")]
    assert run(example_fabric, {("leaf1", "Ethernet232", "fec_corrected", None): 60}) == []  # no baseline: no trend


def test_findings_come_out_bottom_up(example_fabric: Fabric) -> None:
    findings = run(example_fabric, {("node1", "ens1f0np0", "out_of_sequence", None): 3,
                                    ("leaf1", "Ethernet8", "pfc_tx_pause", 3): 10,
                                    ("leaf2", "Ethernet0", "carrier_transitions", None): 2,
                                    ("leaf2", "Ethernet0", "fec_uncorrected", None): 9})
    assert [f.layer for f in findings] == [Layer.PHYSICAL, Layer.LINK, Layer.CONGESTION, Layer.HOST]
    assert [f.rule for f in findings] == ["FG-OBS-101", "FG-OBS-201", "FG-OBS-301", "FG-OBS-401"]


def test_a_cleared_counter_is_not_read_as_a_huge_drop(example_fabric: Fabric) -> None:
    before = snapshot(example_fabric, 0.0, {("leaf1", "Ethernet0", "queue_dropped", 3): 10 ** 6})
    after = snapshot(example_fabric, 60.0)  # `sonic-clear queuecounters` in between: 1000 counted since
    [finding] = judge(example_fabric, before, after)
    assert finding.counters == {"queue_dropped[3]": 1000}


def test_every_rule_points_somewhere_and_has_a_layer() -> None:
    assert all(rule.points_to and rule.layer in Layer for rule in RULES.values())
    assert sorted(RULES) == list(RULES)
