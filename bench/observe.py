#!/usr/bin/env python3
"""CPU cost of one `fabricgen observe` snapshot of a 32k-GPU fabric: parsing every device's counter output and
storing the snapshot in the SQLite history (collection over the network is not measured: it is I/O, bounded by
`--workers` and the devices).

    .venv/bin/python bench/observe.py [--gpus 32768] [--snapshots 2]

The fabric is bench/make_fabric.py's (5,750 devices at 32,768 GPUs). Every device's output is generated in the
vendor's own format, as it arrives over the wire: SONiC a `sonic-db-dump -n COUNTERS_DB -y` JSON with the SAI
field set of sonic-utilities' mock table per port and 8 unicast queues, EOS the three eAPI JSON replies, GPU
hosts the `ethtool -S` + hw_counters text of the mlx5 names, NVUE leaves per data port the five `nv show
interface` pages as NVIDIA's documentation prints them (tests/observe_fixtures/nvue_docs.txt, the port and a few
numbers changed), NX-OS leaves the four NX-API JSON-RPC replies a read asks for: `show interface` and `show
interface counters errors` with the rows of the recorded responses in tests/observe_fixtures/nxos_nxapi.json per
port, `show queuing tabular` (a row of 8 qos-groups' counters per port) and `show queuing pfc-queue detail` (per
port a row per qos-group) with the rows of tests/observe_fixtures/nxos_queuing_constructed_from_cisco_schema.json
per port (built from Cisco's JSON schema, not recorded: no recording was found), as tests/targets/nxos.py
answers them. Measured:
time.process_time() of parse (per platform) + store, per snapshot; the database's growth per snapshot; peak RSS.

As collect() reads a fleet, each device's output is parsed as it arrives and dropped once read (so the fleet's
765 MB of output are never all in memory at once): the bench makes one device's output (not timed), parses it
(timed), and goes on to the next, the cyclic GC paused throughout as in collect(). The previous snapshot is
still in memory while the next is read, as in `observe serve`.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

import make_fabric  # noqa: E402

from fabricgen.observe.collect import NOT_READ  # noqa: E402
from fabricgen.observe.model import DeviceSnapshot, Snapshot, cyclic_gc_paused  # noqa: E402
from fabricgen.observe.store import History  # noqa: E402
from fabricgen.platforms.connectx import observe as connectx  # noqa: E402
from fabricgen.platforms.eos import observe as eos  # noqa: E402
from fabricgen.platforms.nvue import observe as nvue  # noqa: E402
from fabricgen.platforms.nxos import observe as nxos  # noqa: E402
from fabricgen.platforms.sonic import observe as sonic  # noqa: E402

FIXTURE = BENCH.parent / "tests" / "observe_fixtures" / "sonic_mock_tables.json"
NVUE_FIXTURE = BENCH.parent / "tests" / "observe_fixtures" / "nvue_docs.txt"
NXOS_FIXTURE = BENCH.parent / "tests" / "observe_fixtures" / "nxos_nxapi.json"
NXOS_QUEUING_FIXTURE = BENCH.parent / "tests" / "observe_fixtures" / "nxos_queuing_constructed_from_cisco_schema.json"
NVUE_CLASSES = nvue.Classes(roce_priority=3, roce_queue=3, cnp_queue=6)


def devices(gpus: int) -> list[tuple[str, str, list[str], dict[str, str]]]:
    """(name, platform, data ports, {rdma device: interface}) of every device make_fabric writes."""
    hosts, _ = make_fabric.build(gpus)
    found: list[tuple[str, str, list[str], dict[str, str]]] = []
    for host in hosts:
        platform = {"oob": "eos", "host_connectx": "connectx", "host_dcb": "linux-dcb"}.get(
            host.group, host.group.split("_", 1)[-1])
        ports: list[str] = []
        rdma: dict[str, str] = {}
        for port in host.ports:
            facts = ", ".join(port.settings)
            if ("speed: 1G" in facts and port.peer is None) or port.name in ("bmc", "eno1"):
                continue  # management ports carry no RoCE counters
            ports.append(port.name)
            if device := re.search(r"rdma_device: (\w+)", facts):
                rdma[device.group(1)] = port.name
        found.append((host.name, platform, ports, rdma))
    return found


def sonic_output(ports: list[str], tick: int) -> dict[str, str]:
    mock = json.loads(FIXTURE.read_text())["COUNTERS_DB"]
    port_fields = {field: "0" for field in mock["COUNTERS:oid:0x1000000000012"]}
    queue_fields = {field: "0" for field in mock["COUNTERS:oid:0x1500000000035a"]}
    db: dict[str, dict[str, str]] = {"COUNTERS_PORT_NAME_MAP": {}, "COUNTERS_QUEUE_NAME_MAP": {},
                                     "COUNTERS_QUEUE_INDEX_MAP": {}, "COUNTERS_QUEUE_TYPE_MAP": {}}
    for p, port in enumerate(ports):
        oid = f"oid:0x10000000{p:05x}"
        db["COUNTERS_PORT_NAME_MAP"][port] = oid
        db[f"COUNTERS:{oid}"] = {**port_fields, "SAI_PORT_STAT_PFC_3_RX_PKTS": str(17 * tick)}
        for q in range(8):
            qoid = f"oid:0x15000000{p:03x}{q:02x}"
            db["COUNTERS_QUEUE_NAME_MAP"][f"{port}:{q}"] = qoid
            db["COUNTERS_QUEUE_INDEX_MAP"][qoid] = str(q)
            db["COUNTERS_QUEUE_TYPE_MAP"][qoid] = "SAI_QUEUE_TYPE_UNICAST"
            db[f"COUNTERS:{qoid}"] = {**queue_fields, "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": str(40 * tick)}
    dump = {key: {"expireat": 0, "ttl": -0.001, "type": "hash", "value": value} for key, value in db.items()}
    return {sonic.COMMANDS[0]: json.dumps(dump), sonic.COMMANDS[1]: json.dumps(
        {f"PORT_TABLE:{port}": {"flap_count": "1", "oper_status": "up"} for port in ports})}


def eos_output(ports: list[str], tick: int) -> dict[str, str]:
    interfaces = {port: {"interfaceCounters": {"inDiscards": 0, "linkStatusChanges": 2, "inputErrorsDetail": {
        "fcsErrors": 0, "symbolErrors": 0, "alignmentErrors": 0, "runtFrames": 0}}} for port in ports}
    phy = {port: {"phyStatuses": [{"fec": {"correctedCodewords": {"value": tick}, "uncorrectedCodewords":
                                           {"value": 0}}, "preFecBer": {"value": 1e-12}}]} for port in ports}
    pfc = {port: {"rxFrames": 3 * tick, "txFrames": tick} for port in ports}
    return {eos.COMMANDS[0]: json.dumps({"interfaces": interfaces}),
            eos.COMMANDS[1]: json.dumps({"interfacePhyStatuses": phy}),
            eos.COMMANDS[2]: json.dumps({"interfaceCounters": pfc})}


class NxosRows(NamedTuple):
    """One port's rows of each NX-OS reply, from the fixtures, and the pfc-queue reply's global fields."""

    shown: dict[str, object]
    errors: list[dict[str, object]]
    tabular: dict[str, object]
    watchdog: dict[str, object]
    watchdog_globals: dict[str, object]


def nxos_rows() -> NxosRows:
    """The recorded `show interface` row of a physical port and the `show interface counters errors` rows of one
    (tests/observe_fixtures/nxos_nxapi.json); the `show queuing tabular` row and the `show queuing pfc-queue
    detail` row (its 8 qos-groups) of the no-drop leaf port in the fixture built from Cisco's schema."""
    recorded = json.loads(NXOS_FIXTURE.read_text())
    shown = recorded["show interface"]["result"]["body"]["TABLE_interface"]["ROW_interface"]
    errors = recorded["show interface counters errors"]["result"]["body"]["TABLE_interface"]["ROW_interface"]
    queuing = json.loads(NXOS_QUEUING_FIXTURE.read_text())
    tabular = queuing["show queuing tabular"]["result"]["body"]["TABLE_queuing_interface"]["ROW_queuing_interface"]
    detail = queuing["show queuing pfc-queue detail"]["result"]["body"]
    watchdog = detail["TABLE_queuing_interface"]["ROW_queuing_interface"]
    return NxosRows(next(row for row in shown if row["interface"] == "Ethernet1/5"),
                    [row for row in errors if row["interface"] == "Ethernet1/1"],
                    next(row for row in tabular if row["if_name_str"] == "Ethernet1/1"),
                    next(row for row in watchdog if row["if_name_str"] == "Ethernet1/1"),
                    {key: value for key, value in detail.items() if not key.startswith("TABLE_")})


def nxos_output(ports: list[str], tick: int, rows: NxosRows) -> dict[str, str]:
    """The four replies' bodies; qos-group 3's pause and ECN counters and its watchdog restores move with
    ``tick``, so that snapshots differ as a busy no-drop queue's do."""
    interface = [{**rows.shown, "interface": port, "eth_reset_cntr": tick % 2} for port in ports]
    error_rows = [{**row, "interface": port} for port in ports for row in rows.errors]
    tabular = [{**rows.tabular, "if_name_str": port, "pfc_rx_qos_3": 17 * tick, "pfc_tx_qos_3": tick,
                "tx_uc_ecn_pkt_qos_3": 40 * tick} for port in ports]
    watchdog = [{**rows.watchdog, "if_name_str": port, "TABLE_qosgrp_stats": {"ROW_qosgrp_stats": [
        _restored(group, tick) for group in _qosgrp_rows(rows.watchdog)]}} for port in ports]
    return {nxos.COMMANDS[0]: json.dumps({"TABLE_interface": {"ROW_interface": interface}}),
            nxos.COMMANDS[1]: json.dumps({"TABLE_interface": {"ROW_interface": error_rows}}),
            nxos.COMMANDS[2]: json.dumps({"TABLE_queuing_interface": {"ROW_queuing_interface": tabular}}),
            nxos.COMMANDS[3]: json.dumps({**rows.watchdog_globals,
                                          "TABLE_queuing_interface": {"ROW_queuing_interface": watchdog}})}


def _qosgrp_rows(watchdog: dict[str, object]) -> list[dict[str, Any]]:
    table = watchdog["TABLE_qosgrp_stats"]
    assert isinstance(table, dict)
    found = table["ROW_qosgrp_stats"]
    return found if isinstance(found, list) else [found]


def _restored(group: dict[str, Any], tick: int) -> dict[str, Any]:
    """qos-group 3's row with its watchdog restore count at ``tick``; the others as they are."""
    if group["eq-qosgrp"] != 3:
        return group
    entry = group["TABLE_qosgrp_stats_entry"]["ROW_qosgrp_stats_entry"]
    return {**group, "TABLE_qosgrp_stats_entry": {"ROW_qosgrp_stats_entry": {**entry, "q-restored": tick}}}


def host_output(rdma: dict[str, str], tick: int) -> str:
    text = []
    for interface in rdma.values():
        stats = {"rx_crc_errors_phy": 0, "rx_symbol_err_phy": 0, "rx_corrected_bits_phy": tick, "rx_discards_phy": 0,
                 "tx_pause_storm_error_events": 0,
                 **{f"{d}_prio{p}_pause": (tick if p == 3 else 0) for d in ("rx", "tx") for p in range(8)},
                 **{f"rx_prio{p}_{c}": 0 for p in range(8) for c in ("buf_discard", "cong_discard", "marked")}}
        text += [f"== {interface}", "NIC statistics:", *(f"     {k}: {v}" for k, v in stats.items()),
                 "carrier_changes: 2"]
    for device in rdma:
        text += [f"/sys/class/infiniband/{device}/ports/1/hw_counters/{name}:{tick}" for name in connectx.HW_COUNTERS]
    return "\n".join(text) + "\n"


def nvue_pages() -> dict[str, str]:
    """{page: NVIDIA's example output of it} from the fixture (its roce page is swp16's, the others swp1's)."""
    pages = {}
    for section in NVUE_FIXTURE.read_text().split("\n== ")[1:]:
        head, _, body = section.partition("\n")
        pages[head.split(" ", 1)[1]] = body
    return pages


def nvue_output(ports: list[str], tick: int, pages: dict[str, str]) -> list[str]:
    """One text per data port, as the reader's one SSH command per port prints it."""
    pfc = pages["counters qos pfc-stats"].replace(
        "\n3                0                0                  0                0",
        f"\n3                {17 * tick:<17d}0                  {tick:<17d}0")
    roce = pages["qos roce counters"].replace("693777677344", f"{40 * tick:<12d}")  # columns stay aligned
    texts = []
    for port in ports:
        texts.append("".join(f"== {port} {page}\n" + (pfc if page == "counters qos pfc-stats" else roce
                                                         if page == "qos roce counters" else pages[page]) + "\n"
                             for page in nvue.COMMANDS))
    return texts


Fleet = list[tuple[str, str, list[str], dict[str, str]]]


class Generator:
    """Each device's output in its vendor's format, made one device at a time (:meth:`output`)."""

    def __init__(self) -> None:
        self.pages = nvue_pages()
        self.rows = nxos_rows()

    def output(self, platform: str, ports: list[str], rdma: dict[str, str], tick: int) -> object:
        if platform == "sonic":
            return sonic_output(ports, tick)
        if platform == "eos":
            return eos_output(ports, tick)
        if platform in ("connectx", "linux-dcb"):
            return host_output(rdma, tick)
        if platform == "nvue":
            return nvue_output(ports, tick, self.pages)
        if platform == "nxos":
            return nxos_output(ports, tick, self.rows)
        return None


def outputs(fleet: Fleet, tick: int) -> dict[str, object]:
    """Every device's output at once (for a profile of one platform's reader over many devices)."""
    made = Generator()
    return {name: made.output(platform, ports, rdma, tick) for name, platform, ports, rdma in fleet}


def size(out: object) -> int:
    """Characters of one device's output (its commands' texts)."""
    texts: Iterable[str] = out.values() if isinstance(out, dict) else out if isinstance(out, list) else [str(out)]
    return sum(len(text) for text in texts)


def parse_all(fleet: Fleet, made: dict[str, object], taken_at: float) -> Snapshot:
    """The readers over every device's output, as collect() runs them: the cyclic GC paused while they do."""
    with cyclic_gc_paused():
        return _parse_each(fleet, made, taken_at)


def _parse_each(fleet: Fleet, made: dict[str, object], taken_at: float) -> Snapshot:
    snapshot = Snapshot(taken_at)
    for name, platform, _, rdma in fleet:
        snapshot.devices[name] = read(name, platform, rdma, made[name])
    return snapshot


def read(name: str, platform: str, rdma: dict[str, str], out: object) -> DeviceSnapshot:
    """One device's reader over its output, as collect()'s reader for its platform calls it."""
    if platform == "sonic":
        readings = sonic.parse(name, out)  # type: ignore[arg-type]
    elif platform == "eos":
        readings = eos.parse(name, out)  # type: ignore[arg-type]
    elif platform in ("connectx", "linux-dcb"):
        readings = connectx.parse(name, out, rdma)  # type: ignore[arg-type]
    elif platform == "nvue":
        readings = [r for text in out for r in nvue.parse(name, text, NVUE_CLASSES)]  # type: ignore[attr-defined]
    elif platform == "nxos":
        readings = nxos.parse(name, out)  # type: ignore[arg-type]
    else:
        return DeviceSnapshot(name, platform, error=NOT_READ.get(platform, "no reader"))
    return DeviceSnapshot(name, platform, readings)


def collect(fleet: Fleet, tick: int, made: Generator) -> tuple[Snapshot, dict[str, float], int]:
    """A snapshot as collect() takes it: each device's output arrives (is generated, not timed) and is parsed,
    then dropped, with the cyclic GC paused throughout. Returns the snapshot, the parse CPU per platform and the
    characters of output parsed."""
    snapshot = Snapshot(1_800_000_000.0 + 60 * tick)
    cpu: dict[str, float] = {}
    wire = 0
    with cyclic_gc_paused():
        for name, platform, ports, rdma in fleet:
            out = made.output(platform, ports, rdma, tick)
            wire += size(out)
            start = time.process_time()
            snapshot.devices[name] = read(name, platform, rdma, out)
            cpu[platform] = cpu.get(platform, 0.0) + time.process_time() - start
            del out
    return snapshot, cpu, wire


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpus", type=int, default=32768)
    parser.add_argument("--snapshots", type=int, default=2)
    args = parser.parse_args()
    fleet = devices(args.gpus)
    platforms: dict[str, int] = {}
    for _, platform, _, _ in fleet:
        platforms[platform] = platforms.get(platform, 0) + 1
    print(f"{args.gpus} GPUs: {len(fleet)} devices {dict(sorted(platforms.items()))}")
    made = Generator()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "observe.sqlite"
        history = History(path)
        previous = 0
        for tick in range(1, args.snapshots + 1):
            snapshot, cpu, wire = collect(fleet, tick, made)
            parse = sum(cpu.values())
            start = time.process_time()
            history.add(snapshot)
            history.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            store = time.process_time() - start
            db_size = path.stat().st_size
            print(f"snapshot {tick}: {len(snapshot.readings()):,} readings from {wire / 1e6:.0f} MB of device "
                  f"output; CPU parse {parse:.2f} s + store {store:.2f} s = {parse + store:.2f} s; database "
                  f"{db_size / 1e6:.1f} MB (+{(db_size - previous) / 1e6:.1f} MB)")
            print("  parse by platform: " + ", ".join(f"{name} {cpu[name]:.2f} s" for name in sorted(cpu)))
            previous = db_size
        history.close()
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")


if __name__ == "__main__":
    main()
