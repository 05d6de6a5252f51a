"""Nornir, built in code from fabricgen's inventory, and the NAPALM drivers it opens per device.

The inventory fabricgen already loaded (Nornir SimpleInventory files) becomes Nornir's Inventory directly; each
device's NAPALM connection uses the user's `connection_options.napalm` when given (platform, extras), otherwise
fabricgen's driver for the device's platform. Credentials: the inventory's username/password, else
FABRICGEN_USERNAME / FABRICGEN_PASSWORD from the environment, else an ssh-agent or the key file named in the
extras. They go to the driver and nowhere else.
"""

from __future__ import annotations

import getpass
import logging
import os
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from napalm import get_network_driver
from nornir.core import Nornir
from nornir.core.inventory import ConnectionOptions, Defaults, Groups, Host, Hosts, Inventory
from nornir.core.plugins.connections import ConnectionPluginRegister
from nornir.core.task import AggregatedResult, Result, Task

from fabricgen.deploy.deadline import DeadlineRunner, expired, track
from fabricgen.models.inventory import Device
from fabricgen.platforms import get_platform

CONNECTION = "napalm"


def napalm_options(device: Device) -> tuple[str, dict[str, Any]]:
    """(driver name, constructor extras) of a device: the user's napalm connection options over our defaults."""
    options = (device.connection_options or {}).get(CONNECTION) or {}
    platform = options.get("platform") or get_platform(device.platform).capability.napalm_driver
    extras = dict(options.get("extras") or {})
    return str(platform), extras


def nornir_for(devices: list[Device], workers: int) -> Nornir:
    # Nornir logs each failed task's traceback at ERROR; with no handler anywhere Python's last-resort handler
    # prints it raw on stderr. fabricgen reports each device's reason itself (one line, the journal whole).
    quiet = logging.getLogger("nornir")
    if not any(isinstance(handler, logging.NullHandler) for handler in quiet.handlers):
        quiet.addHandler(logging.NullHandler())
    ConnectionPluginRegister.auto_register()
    defaults = Defaults()
    hosts = Hosts()
    for device in devices:
        platform, extras = napalm_options(device)
        connection = ConnectionOptions(hostname=device.hostname, port=device.port, username=_username(device),
                                       password=_password(device), platform=platform, extras=extras)
        hosts[device.name] = Host(name=device.name, hostname=device.hostname, port=device.port,
                                  username=_username(device), password=_password(device), platform=platform,
                                  connection_options={CONNECTION: connection}, defaults=defaults)
    return Nornir(inventory=Inventory(hosts=hosts, groups=Groups(), defaults=defaults),
                  runner=DeadlineRunner(num_workers=max(1, workers)))


def fresh_driver(device: Device, timeout: int = 30) -> Any:
    """A new connection, not Nornir's cached one: the health check proves the device still takes logins."""
    platform, extras = napalm_options(device)
    driver = get_network_driver(platform)(hostname=device.hostname, username=_username(device),
                                         password=_password(device), timeout=timeout,
                                         optional_args={**extras.get("optional_args", {}),
                                                        **({"port": device.port} if device.port else {})})
    driver.open()
    return track(driver)  # closed if the device's step passes its deadline (deadline.py)


def _username(device: Device) -> str:
    return device.username or os.environ.get("FABRICGEN_USERNAME") or getpass.getuser()


def _password(device: Device) -> str | None:
    return device.password or os.environ.get("FABRICGEN_PASSWORD") or None


def run_each(nornir: Nornir, names: list[str], step: Callable[[Task], dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Run `step` on each named device in parallel; a device whose step raised gets {"error": message}."""
    if not names:
        return {}
    selected = nornir.filter(filter_func=lambda host: host.name in set(names))
    results: AggregatedResult = selected.run(task=_wrapped, step=step, on_failed=True)
    outcome: dict[str, dict[str, Any]] = {}
    for name in names:
        multi = results.get(name)
        if multi is None and expired(name):  # left behind past its deadline; its expiry said what became of it
            outcome[name] = {}
        elif multi is None or not len(multi):
            outcome[name] = {"error": "not run"}
        elif multi[0].failed:
            outcome[name] = {"error": _error_text(multi[0])}
        else:
            outcome[name] = dict(multi[0].result or {})
    nornir.data.reset_failed_hosts()  # failed hosts are sticky in Nornir; each step decides for itself
    return outcome


def _wrapped(task: Task, step: Callable[[Task], dict[str, Any]]) -> Result:
    try:
        return Result(host=task.host, result=step(task))
    finally:
        # A device's connection serves its own step only. Closed at once, not at the end of the run: an idle
        # paramiko transport's thread still wakes ten times a second, and 200 of them left open through a push
        # cost the controller more CPU than the pushes did. Closing is best effort; the step's outcome stands.
        with suppress(Exception):
            task.host.close_connections()


def _error_text(result: Result) -> str:
    exc = result.exception
    if exc is None:
        return str(result.result or "failed")
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def connection(task: Task) -> Any:
    return track(task.host.get_connection(CONNECTION, task.nornir.config))


def close_all(nornir: Nornir) -> None:
    nornir.close_connections(on_good=True, on_failed=True)
