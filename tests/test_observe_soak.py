"""The push soak's counter verdict (fabricgen/observe/soak.py): what growth during the soak fails a device."""

from __future__ import annotations

from fabricgen.models.device import Fabric
from fabricgen.observe.model import Reading, reading
from fabricgen.observe.soak import SoakLimits, soak_verdict


def leaf(**values: float) -> list[Reading]:
    base = {("Ethernet0", "fec_uncorrected", None): 5.0, ("Ethernet0", "fec_corrected", None): 100.0,
            ("Ethernet0", "carrier_transitions", None): 1.0, ("Ethernet0", "queue_dropped", 3): 0.0,
            ("Ethernet0", "queue_dropped", 0): 0.0, ("Ethernet0", "pfc_watchdog_storms", 3): 0.0}
    for name, value in values.items():
        metric, _, index = name.partition("__")
        base[("Ethernet0", metric, int(index) if index else None)] = value
    return [reading("leaf1", port, metric, value, index) for (port, metric, index), value in base.items()]


def test_a_quiet_soak_is_healthy_even_with_corrected_fec(example_fabric: Fabric) -> None:
    verdict = soak_verdict(leaf(), leaf(fec_corrected=5000), example_fabric.devices["leaf1"])
    assert verdict.healthy and verdict.reason == "healthy"


def test_fec_growth_during_the_soak_fails_the_device(example_fabric: Fabric) -> None:
    verdict = soak_verdict(leaf(), leaf(fec_uncorrected=17), example_fabric.devices["leaf1"])
    assert not verdict.healthy
    assert verdict.reason == "counters grew during the soak: leaf1:Ethernet0 uncorrectable FEC codewords +12"


def test_storm_flap_and_lossless_drops_fail_lossy_drops_do_not(example_fabric: Fabric) -> None:
    verdict = soak_verdict(leaf(), leaf(carrier_transitions=3, queue_dropped__3=4, queue_dropped__0=900,
                                        pfc_watchdog_storms__3=1), example_fabric.devices["leaf1"])
    assert verdict.problems == ["leaf1:Ethernet0 link flaps +2", "leaf1:Ethernet0 PFC watchdog storms +1",
                                "leaf1:Ethernet0 drops on lossless 3 +4"]


def test_counters_cleared_by_the_change_count_from_zero(example_fabric: Fabric) -> None:
    # A config reload that clears counters: 5 → 0 is a reset with nothing counted since, not -5 nor a wrap.
    assert soak_verdict(leaf(), leaf(fec_uncorrected=0), example_fabric.devices["leaf1"]).healthy


def test_no_counters_after_the_soak_is_not_healthy(example_fabric: Fabric) -> None:
    verdict = soak_verdict(leaf(), [], example_fabric.devices["leaf1"])
    assert verdict.problems == ["leaf1: no counters could be read after the soak"]


def test_a_lossless_priority_paused_half_the_soak_is_a_pause_storm(example_fabric: Fabric) -> None:
    leaf1 = example_fabric.devices["leaf1"]
    assert leaf1.qos is not None and 3 in leaf1.qos.lossless_priorities and 0 not in leaf1.qos.lossless_priorities
    before = leaf(pfc_rx_pause_duration__3=1.0, pfc_rx_pause_duration__0=0.0)
    stormy = leaf(pfc_rx_pause_duration__3=7.0, pfc_rx_pause_duration__0=9.0)  # 6 s of a 10 s soak; 0 is lossy
    verdict = soak_verdict(before, stormy, leaf1, seconds=10.0)
    assert verdict.problems == ["leaf1:Ethernet0 paused by PFC on lossless 3 for 6 s of a 10 s soak (pause storm)"]
    busy = leaf(pfc_rx_pause_duration__3=3.0, pfc_rx_pause_duration__0=0.0)  # 2 s of 10: pausing, not a storm
    assert soak_verdict(before, busy, leaf1, seconds=10.0).healthy
    assert soak_verdict(before, stormy, leaf1, seconds=10.0, limits=SoakLimits(paused_fraction=0.7)).healthy


def test_limits_tolerate_the_growth_they_name_and_no_more(example_fabric: Fabric) -> None:
    leaf1 = example_fabric.devices["leaf1"]
    limits = SoakLimits(allowed={"fcs_errors": 10})
    before = leaf(fcs_errors=0, fec_uncorrected=5)
    assert soak_verdict(before, leaf(fcs_errors=10, fec_uncorrected=5), leaf1, limits=limits).healthy
    verdict = soak_verdict(before, leaf(fcs_errors=11, fec_uncorrected=6), leaf1, limits=limits)
    assert verdict.problems == ["leaf1:Ethernet0 CRC errors +11", "leaf1:Ethernet0 uncorrectable FEC codewords +1"]
