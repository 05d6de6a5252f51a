"""One snapshot of the selected devices' counters, through the same Nornir/NAPALM connections as diff and push.

Read-only: each platform's reader runs show commands (or reads sysfs) and nothing else; no candidate is loaded,
no session is left open (run_each closes every device's connection after its step). Devices are read in parallel
(`--workers`), each within `limit` seconds per command: a device that does not answer in time, refuses the login
or prints something its reader does not understand becomes a DeviceSnapshot with its error, never a traceback,
and the others are still read.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from nornir.core.task import Task

from fabricgen.deploy.nornir_run import close_all, connection, nornir_for, run_each
from fabricgen.models.device import DeviceModel, Fabric
from fabricgen.models.inventory import Device
from fabricgen.observe.model import DeviceSnapshot, ParseError, Reading, Snapshot, cyclic_gc_paused
from fabricgen.platforms.connectx import observe as connectx
from fabricgen.platforms.eos import observe as eos
from fabricgen.platforms.linux_dcb import observe as linux_dcb
from fabricgen.platforms.nvue import observe as nvue
from fabricgen.platforms.nxos import observe as nxos
from fabricgen.platforms.sonic import observe as sonic

Reader = Callable[[Any, DeviceModel, float], list[Reading]]
# Platforms with no counter reader yet, and why (shown per device rather than silently skipped).
NOT_READ: dict[str, str] = {}


def _host(parse: Callable[[str, str, dict[str, str]], list[Reading]]) -> Reader:
    def read(driver: Any, device: DeviceModel, limit: float) -> list[Reading]:
        done = driver.ssh.run(connectx.command(device), timeout=limit)
        nics = device.host.nics if device.host else []
        return parse(device.name, done.stdout, {nic.rdma_device: nic.interface for nic in nics})
    return read


def _sonic(driver: Any, device: DeviceModel, limit: float) -> list[Reading]:
    outputs = {}
    for command in sonic.COMMANDS:
        done = driver.ssh.run(command, timeout=limit)
        if done.status != 0:
            raise ParseError(f"{device.name}: `{command}` exited {done.status}: {done.output[:300]}")
        outputs[command] = done.stdout
    return sonic.parse(device.name, outputs)


def _eos(driver: Any, device: DeviceModel, limit: float) -> list[Reading]:
    replies = driver._run(eos.COMMANDS, text=False)  # eAPI runCmds, format json; the driver's own timeout
    return eos.parse_json(device.name, dict(zip(eos.COMMANDS, replies, strict=True)))


def _nxos(driver: Any, device: DeviceModel, limit: float) -> list[Reading]:
    """NX-API's JSON-RPC ``cli`` method through NAPALM's NX-API client, one request (the driver's own timeout)."""
    return nxos.read(driver.device, device)


def _nvue(driver: Any, device: DeviceModel, limit: float) -> list[Reading]:
    """One SSH command per data port (its five `nv show interface <port> …`), each within ``limit``."""
    classes = nvue.Classes.of(device)
    readings: list[Reading] = []
    for port in nvue.data_ports(device):
        readings += nvue.parse(device.name, driver.ssh.run(nvue.command(port), timeout=limit).stdout, classes)
    return readings


READERS: dict[str, Reader] = {"connectx": _host(connectx.parse), "linux-dcb": _host(linux_dcb.parse),
                              "sonic": _sonic, "eos": _eos, "nvue": _nvue, "nxos": _nxos}


def collect(fabric: Fabric, devices: list[Device], workers: int, limit: float) -> Snapshot:
    snapshot = Snapshot(taken_at=time.time())
    readable = [device for device in devices if device.platform in READERS]
    for device in devices:
        if device.platform not in READERS:
            reason = NOT_READ.get(device.platform, f"no counter reader for platform {device.platform}")
            snapshot.devices[device.name] = DeviceSnapshot(device.name, device.platform, error=reason)
    nornir = nornir_for(readable, workers)
    try:
        with _quiet_nornir(), cyclic_gc_paused():  # millions of readings at fleet scale: model.cyclic_gc_paused
            results = run_each(nornir, [device.name for device in readable],
                               lambda task: _step(task, fabric.devices[task.host.name], limit))
    finally:
        close_all(nornir)
    for device in readable:
        result = results[device.name]
        snapshot.devices[device.name] = DeviceSnapshot(device.name, device.platform, result.get("readings", []),
                                                       error=result.get("error"), seconds=result.get("seconds", 0.0))
    snapshot.taken_at = time.time()  # the end of the collection: rates are computed between collection ends
    return snapshot


@contextmanager
def _quiet_nornir() -> Iterator[None]:
    """Nornir logs every failed task's traceback to stderr; a device that cannot be read is reported once, as
    its DeviceSnapshot's error line, instead."""
    logger = logging.getLogger("nornir.core.task")
    was = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = was


def read_device(driver: Any, device: DeviceModel, limit: float = 30.0) -> list[Reading]:
    """One device's counters over an open NAPALM driver of fabricgen's (push's soak check calls this)."""
    reader = READERS.get(device.platform)
    if reader is None:
        raise ParseError(f"{device.name}: {NOT_READ.get(device.platform, 'no counter reader for its platform')}")
    return reader(driver, device, limit)


def _step(task: Task, device: DeviceModel, limit: float) -> dict[str, Any]:
    start = time.monotonic()
    readings = read_device(connection(task), device, limit)
    return {"readings": readings, "seconds": time.monotonic() - start}
