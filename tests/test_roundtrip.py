"""Config readers invert the renderers: ``owned(read(skeleton, render(m))) == owned(m)`` for every platform.

The skeleton is always a *different* model — the other bundled example's device, or the same device with
every owned field scrambled — so a reader that silently keeps a skeleton value fails.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from fabricgen.api import render_device
from fabricgen.models.device import (
    DeviceModel,
    Fabric,
    HeadroomModel,
    MgmtModel,
    NicModel,
    PortModel,
    QosModel,
    WatchdogModel,
)
from fabricgen.models.diagnostics import InputError
from fabricgen.models.intent import Intent, check_intent
from fabricgen.models.inventory import Inventory
from fabricgen.platforms import get_platform
from fabricgen.resolve import resolve

from conftest import EXAMPLES, load_example


@functools.cache
def example(name: str) -> Fabric:
    loaded = load_example(name)
    return resolve(loaded.intent, loaded.inventory, loaded.locate)


@functools.cache
def inventory() -> Inventory:
    return load_example("fabric").inventory


def round_trip(device: DeviceModel, skeleton: DeviceModel) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what the reader gives back, what the model says), both as the platform's owned view."""
    platform = get_platform(device.platform)
    assert platform.read is not None and platform.owned is not None
    read_back = platform.read(skeleton, render_device(device))
    return platform.owned(read_back), platform.owned(device)


# --- a skeleton that differs from the model in every owned field --------------------------------------

def _other(values: list[int], universe: range) -> list[int]:
    return [next(v for v in universe if [v] != values)]


def _scramble_port(port: PortModel) -> PortModel:
    if port.role == "mgmt":
        return port
    return port.model_copy(update={
        "admin_up": not port.admin_up, "mtu": port.mtu + 1, "speed_mbps": (port.speed_mbps or 0) + 1,
        "fec": "stale", "lanes": "99", "description": "stale", "access_vlan": (port.access_vlan or 0) + 1,
        "pfc_priorities": _other(port.pfc_priorities, range(8)), "lossless": not port.lossless,
        "cable_m": (port.cable_m or 0) + 1,
        "headroom": None if port.headroom else HeadroomModel(xon=1, xoff=1, size=2, method="stale"),
        "mode": "switched" if port.mode == "routed" else "routed",
        "tagged_vlans": None if port.tagged_vlans else [4000],
    })


def _scramble_qos(qos: QosModel) -> QosModel:
    def shift(mapping: dict[int, int]) -> dict[int, int]:
        return {k: (v + 1) % 8 for k, v in mapping.items()}

    return qos.model_copy(update={
        "dscp_to_tc": shift(qos.dscp_to_tc), "tc_to_pg": shift(qos.tc_to_pg), "tc_to_queue": shift(qos.tc_to_queue),
        "pfc_priority_to_queue": shift(qos.pfc_priority_to_queue), "trust": "pcp" if qos.trust == "dscp" else "dscp",
        "lossless_priorities": _other(qos.lossless_priorities, range(8)), "queues": [],
        "watchdog": None if qos.watchdog else WatchdogModel(detection_ms=990, restoration_ms=990, poll_ms=990,
                                                            action="alert"),
    })


def _scramble_nic(nic: NicModel) -> NicModel:
    return nic.model_copy(update={
        "rdma_device": "stale", "mtu": nic.mtu + 1, "trust": "pcp" if nic.trust == "dscp" else "dscp",
        "pfc": [1 - f for f in nic.pfc], "prio_tc": [(t + 1) % 8 for t in nic.prio_tc],
        "tsa": ["ets" if t == "strict" else "strict" for t in nic.tsa], "tcbw": [b + 1 for b in nic.tcbw],
        "dscp2prio": {} if nic.dscp2prio else {63: 0}, "dcqcn_priorities": _other(nic.dcqcn_priorities, range(8)),
        "dcqcn_enabled": not nic.dcqcn_enabled, "cnp_dscp": (nic.cnp_dscp + 1) % 64,
        "cnp_priority": (nic.cnp_priority + 1) % 8, "roce_tos": (nic.roce_tos + 1) % 256,
    })


def _scramble_mgmt(mgmt: MgmtModel) -> MgmtModel:
    return mgmt.model_copy(update={"interface": "stale0", "vrf": "stale", "mtu": mgmt.mtu + 1,
                                   "address": "198.18.0.9/24", "gateway": "198.18.0.1"})


def scramble(device: DeviceModel) -> DeviceModel:
    host = device.host
    return device.model_copy(update={
        # a port's own QoS: none where it has one, the device's (scrambled) where it has none
        "ports": [_scramble_port(p).model_copy(update={"qos": None if p.qos or not device.qos else
                                                       _scramble_qos(device.qos)}) for p in device.ports],
        "qos": _scramble_qos(device.qos) if device.qos else None,
        "mgmt": _scramble_mgmt(device.mgmt) if device.mgmt else None,
        "host": host.model_copy(update={"nics": [_scramble_nic(n) for n in host.nics],
                                        "nccl_env": {k: v + "-stale" for k, v in host.nccl_env.items()}})
        if host else None,
    })


def _leaves(view: Any, path: str = "") -> dict[str, Any]:
    if isinstance(view, dict) and view:
        return {k: v for key, value in view.items() for k, v in _leaves(value, f"{path}/{key}").items()}
    return {path: view}


@pytest.mark.parametrize("name", EXAMPLES)
def test_scrambled_skeleton_differs_in_every_owned_field(name: str) -> None:
    for device in example(name).devices.values():
        owned = get_platform(device.platform).owned
        assert owned is not None
        original, scrambled = _leaves(owned(device)), _leaves(owned(scramble(device)))
        # A section the device does not have (QoS on the OOB switch) has nothing to scramble.
        # A leaf the scrambled view lacks (None there, a mapping in the other) differs.
        same = [path for path, value in original.items()
                if path in scrambled and scrambled[path] == value and path.count("/") > 1]
        assert same == [], f"{device.name}: scrambling left {same}"


# --- the bundled examples --------------------------------------------------------------------------------

def _example_devices() -> list[tuple[str, str]]:
    return [(name, device) for name in EXAMPLES for device in sorted(example(name).devices)]


@pytest.mark.parametrize(("name", "device_name"), _example_devices())
def test_bundled_examples_round_trip(name: str, device_name: str) -> None:
    device = example(name).devices[device_name]
    # A skeleton from another example where the device has the same platform and ports, and a scrambled one.
    others = [example(e).devices.get(device_name) for e in EXAMPLES if e != name]
    skeletons = [o for o in others if o is not None and o.platform == device.platform
                 and [p.name for p in o.ports] == [p.name for p in device.ports]][:1]
    for skeleton in (*skeletons, scramble(device)):
        got, want = round_trip(device, skeleton)
        assert got == want


# --- generated intents ------------------------------------------------------------------------------------

def _weights(draw: st.DrawFn, count: int) -> list[int]:
    """``count`` positive DWRR weights summing to 100."""
    cuts = sorted(draw(st.sets(st.integers(1, 99), min_size=count - 1, max_size=count - 1)))
    bounds = [0, *cuts, 100]
    return [high - low for low, high in itertools.pairwise(bounds)]


def _dscp_sets(draw: st.DrawFn, count: int) -> list[list[int] | str]:
    """Class 0 is RDMA (one DSCP), class 1 carries CNPs, class 2 is the default class; with two classes
    there is no room for a default class (RDMA and CNP need listed DSCPs), so CNP lists all the rest."""
    pool = draw(st.permutations(range(64)))
    if count == 2:
        return [pool[:1], sorted(pool[1:])]
    sets: list[list[int] | str] = [pool[:1]]
    taken = 1
    for index in range(1, count):
        if index == 2:
            sets.append("default")
            continue
        size = draw(st.integers(1, 4))
        sets.append(sorted(pool[taken:taken + size]))
        taken += size
    return sets


def _ecn(draw: st.DrawFn) -> dict[str, int] | None:
    if not draw(st.booleans()):
        return None
    low, high = sorted(draw(st.lists(st.integers(1, 20_000_000), min_size=2, max_size=2)))
    return {"min": low, "max": high, "probability": draw(st.integers(1, 100))}


def _classes(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(2, 6))
    priorities = draw(st.permutations(range(8)))[:count]
    queues = draw(st.permutations(range(8)))[:count]
    lossless = draw(st.permutations(range(count)))[:draw(st.integers(0, 2))]  # SONiC and EOS take at most 2
    strict = [draw(st.booleans()) for _ in range(count)]
    weights = iter(_weights(draw, strict.count(False))) if False in strict else iter([])
    classes: dict[str, Any] = {}
    for index, dscp in enumerate(_dscp_sets(draw, count)):
        cls: dict[str, Any] = {"dscp": dscp, "priority": priorities[index], "queue": queues[index],
                               "lossless": index in lossless,
                               "scheduling": "strict" if strict[index] else {"dwrr": next(weights)}}
        ecn = _ecn(draw)
        if ecn is not None:
            cls["ecn"] = ecn
        classes[f"class{index}"] = cls
    return classes


def _watchdog(draw: st.DrawFn) -> dict[str, Any]:
    detection = 10 * draw(st.integers(10, 500))
    restoration = 10 * draw(st.integers(10, 6000))
    poll = 10 * draw(st.integers(10, min(detection, restoration, 1000) // 10))
    enabled = draw(st.sampled_from([True, True, False]))  # mostly on: the timers are only rendered then
    return {"enabled": enabled, "detection_ms": detection, "restoration_ms": restoration, "poll_ms": poll,
            "action": draw(st.sampled_from(["drop", "alert"]))}


@st.composite
def intents(draw: st.DrawFn) -> dict[str, Any]:
    """Raw intent documents over the bundled inventory (management subnet fixed: it holds its addresses)."""
    return {
        "fabric": "generated",
        "qos": {"classes": _classes(draw)},
        "rdma": {"class": "class0", "cnp_class": "class1", "dcqcn": draw(st.booleans()),
                 "tos_ecn_bits": draw(st.integers(0, 3)), "path_mtu": draw(st.sampled_from([1024, 2048, 4096])),
                 "gid_index": draw(st.integers(0, 255))},
        "mtu": {"host": draw(st.integers(1280, 9978)), "fabric": draw(st.integers(1280, 9214)),
                "management": draw(st.integers(1280, 9214))},
        "pfc": {"watchdog": _watchdog(draw)},
        "management": {"vlan": draw(st.integers(2, 4094)), "subnet": "192.0.2.0/24",
                       "gateway": draw(st.sampled_from(["192.0.2.1", "192.0.2.254"])),
                       "vrf": draw(st.sampled_from(["mgmt", "MGMT", "oob_vrf"]))},
    }


def _resolve(raw: dict[str, Any]) -> Fabric:
    try:
        intent = Intent.model_validate(raw)
    except ValidationError:
        assume(False)
        raise
    assume(not check_intent(intent))
    try:
        return resolve(intent, inventory())
    except InputError:
        assume(False)
        raise


@settings(max_examples=40, deadline=None, derandomize=True)
@given(raw=intents())
def test_generated_intents_round_trip(raw: dict[str, Any]) -> None:
    fabric = _resolve(raw)
    bundled = example("fabric")
    for name, device in fabric.devices.items():
        for skeleton in (bundled.devices[name], scramble(device)):
            got, want = round_trip(device, skeleton)
            assert got == want, f"{name} ({device.platform})"
