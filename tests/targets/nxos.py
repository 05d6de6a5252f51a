"""The NX-OS device target of the lab (test infrastructure; no NX-OS image runs here): an NX-API server.

A real HTTPS server (stdlib ``http.server`` + ``ssl``; a self-signed certificate for the host's addresses, made when
the daemon starts and kept in the state directory for clients to pin) answering NX-API's JSON-RPC at ``/ins`` the
way NAPALM's ``nxos`` driver (``napalm.nxapi_plumbing``) speaks it: a list of ``{"method": "cli" | "cli_ascii",
"params": {"cmd": …}}`` requests, HTTP basic authentication against the running config's ``username … password
5 <crypt hash>`` lines, per command a ``result`` (``body`` for ``cli``, ``msg`` for ``cli_ascii``) or an ``error``
(``data.msg`` carries the CLI's message), stopping at the first error.

The device state lives in the state directory (``NXOS_TARGET_STATE``): ``running-config``, ``startup-config``,
``bootflash/`` (files reach it over the host's SFTP, as ``feature sftp-server`` takes them on a Nexus; the files
the commands name as ``bootflash:<name>``), ``checkpoints/`` (the checkpoint database) and ``pending.json`` (a
configure replace waiting for its commit). Commands implemented, with NX-OS's documented behaviour:

* ``checkpoint <name>`` / ``checkpoint file <file>`` / ``no checkpoint <name>`` / ``show checkpoint summary``;
  ``rollback running-config checkpoint <name> | file <file>``; ``show diff rollback-patch <src> <dst>`` (src, dst:
  ``file F``, ``checkpoint C``, ``running-config``, ``startup-config``); ``copy running-config startup-config``;
  ``delete``, ``dir``, ``show file``.
* ``configure replace <file> [commit-timeout <30-3600>]`` and ``configure replace commit``. Cisco's Nexus 9000
  NX-OS System Management Configuration Guide, "Performing Configuration Replace": "The configuration replace
  feature enables you to replace the running configuration of the Cisco Nexus switch with the user provided
  configuration without reloading the device"; it "calculates the difference between the current
  running-configuration and the user-provided configuration … and generates a patch file", "applies the
  configuration commands from the patch file", and "If there is a failure in the configuration replace, the
  original configuration is restored in the switch." "The commit-timeout feature enables you to rollback to the
  previous configuration after successfully performing the configuration replace operation. If the commit timer
  expires, the rollback operation is automatically initiated." (timer range 30-3600 seconds). The timer runs in
  this daemon, with its deadline in ``pending.json``: it fires whoever is connected, and a restarted daemon
  still honours it.

* Grammar, not only values: before ``configure replace`` or ``rollback running-config file|checkpoint`` changes
  anything, every line of the file must parse in its mode under the command table of tests/targets/nxos_grammar.py
  (each form citing the Cisco text it was checked against, or marked unverified); the first that does not stops
  the operation with NX-OS's ``% Invalid command at '^' marker.`` (or ``% Incomplete command …``), the line and
  the caret, and the running config stays as it was. ``show diff rollback-patch`` stays a text diff.

The wording of outputs and errors (status lines, ``Configure replace failed``) is this target's, modelled on the
guide's examples; the guide's exact strings were not all readable here. Every command is logged (method and
command, never credentials) to ``NXOS_TARGET_LOG``.
"""

from __future__ import annotations

import base64
import json
import os
import re
import ssl
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# The command table every config file is parsed under.
from targets import nxos_grammar

TOOLS = ("nxapi-server",)
DAEMON = "nxapi-server"
STATE_VAR = "NXOS_TARGET_STATE"
LOG_VAR = "NXOS_TARGET_LOG"
PORT = 443
STARTING_CONFIG = Path(__file__).parent / "data" / "nxos" / "running-config.cfg"
# The lab's NX-API user: the starting config holds `username admin password 5 <its SHA-256 crypt>`.
LAB_USERNAME = "admin"
LAB_PASSWORD = "fabricgen-lab"
CERT, KEY = "nxapi.crt", "nxapi.key"
COMMIT_TIMEOUT_RANGE = (30, 3600)  # the guide: "The timer value range is between 30-3600 seconds."
SERIAL = "FGLAB0NXOS1"
INSIDE_BOOTFLASH = "/run/fabricgen-lab/nic-state/bootflash"  # bootflash/ of the state directory, inside the host
TIMER_POLL_S = 0.2
MAX_CHECKPOINTS = 10  # Cisco's rollback guide: "You can create up to ten checkpoint copies."


class CliError(Exception):
    """A command the CLI rejects; the message is what NX-API returns in the error's ``data.msg``."""


def lab_init(state_dir: Path) -> None:
    """The device as found: the starting running-config, saved to startup too, an empty bootflash and database."""
    config = render(parse(STARTING_CONFIG.read_text()))
    (state_dir / "running-config").write_text(config)
    (state_dir / "startup-config").write_text(config)
    (state_dir / "bootflash").mkdir(exist_ok=True)
    (state_dir / "checkpoints").mkdir(exist_ok=True)


def napalm_optional_args(state_dir: Path, key_file: Path, known_hosts: Path) -> dict[str, Any]:
    """How fabricgen_nxos reaches this target in the lab (``state_dir``: the host's state seen from outside,
    lab.state_dir(host)): NX-API with the target's certificate pinned, SFTP as the lab's root with the lab key and
    the host key checked, bootflash: where the target keeps it inside the host (the lab's /run/fabricgen-lab is
    the host's view of its state tree). The NX-API login is (LAB_USERNAME, LAB_PASSWORD)."""
    return {"ssl_verify": str(state_dir / CERT), "ssh_username": "root", "key_file": str(key_file),
            "known_hosts": str(known_hosts), "bootflash_path": INSIDE_BOOTFLASH}


def lab_ready(lab: Any, host: str) -> bool:
    """The NX-API server answers (it marks its state directory once listening)."""
    return bool((lab.state_dir(host) / "nxapi.ready").exists())


def lab_connection(lab: Any, host: str) -> dict[str, Any]:
    """The inventory fields that let fabricgen reach this target in the lab (tests/fabric_lab.py)."""
    options = napalm_optional_args(lab.state_dir(host), lab.key_file, lab.known_hosts)
    return {"username": LAB_USERNAME, "password": LAB_PASSWORD,
            "connection_options": {"napalm": {"platform": "fabricgen_nxos", "extras": {"optional_args": options}}}}


# --- running-config text: stanzas, the rollback patch between two configs, what the parser refuses --------

# Values the target refuses in a patch, as NX-OS's parser does: the Ethernet L3 MTU range 576-9216 (the range
# NX-OS's `mtu` takes on a routed Nexus 9000 port, from memory: unverified against a Cisco document here); speeds
# and FEC modes: the Cisco NX-OS device YANG model's l1 speed enumeration and l1_FECMode (CLI spelling ``off``;
# see fabricgen/platforms/nxos/render.py for the sources); qos-group 0-7, CoS 0-7 (8q mode), DSCP 0-63.
MTU_RANGE = (576, 9216)
SPEEDS_MBPS = {100, 1000, 10000, 25000, 40000, 50000, 100000, 200000, 400000, 800000}
FEC_MODES = {"auto", "fc-fec", "rs-fec", "off", "rs-ieee", "rs-cons16", "kp-fec"}


@dataclass
class Stanza:
    header: str
    children: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(line + "\n" for line in [self.header, *self.children])


def parse(text: str) -> list[Stanza]:
    stanzas: list[Stanza] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        if line[0] == " " and stanzas:
            stanzas[-1].children.append(line)
        else:
            stanzas.append(Stanza(line.strip()))
    return stanzas


def render(stanzas: list[Stanza]) -> str:
    return "".join(stanza.text() for stanza in stanzas)


def hostname(stanzas: list[Stanza]) -> str:
    return next((s.header.split()[1] for s in stanzas if re.fullmatch(r"hostname \S+", s.header)), "switch")


def _negate(line: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    body = line.strip()
    return indent + (body[3:] if body.startswith("no ") else "no " + body)


def patch(old: list[Stanza], new: list[Stanza]) -> list[str]:
    """The commands that turn ``old`` into ``new``: what NX-OS's rollback patch lists (removals as ``no``)."""
    old_by = {s.header: s for s in old}
    new_by = {s.header: s for s in new}
    lines: list[str] = []
    for stanza in old:
        if stanza.header not in new_by:
            lines.append(_negate(stanza.header))
    for stanza in new:
        before = old_by.get(stanza.header)
        if before is None:
            lines += [stanza.header, *stanza.children]
            continue
        removed = [_negate(child) for child in before.children if child not in stanza.children]
        added = [child for child in stanza.children if child not in before.children]
        if removed or added:
            lines += [stanza.header, *removed, *added]
    return lines


def refusals(lines: list[str], new: list[Stanza]) -> list[str]:
    """What NX-OS's parser would reject among the patch's commands, each as the CLI error it prints."""
    policies = {m.group(1) for s in new if (m := re.fullmatch(r"policy-map type \S+ (\S+)", s.header))}
    errors = []
    for line in lines:
        error = _refusal(line.strip(), policies)
        if error:
            errors.append(f"{line.strip()}: {error}")
    return errors


def _refusal(command: str, policies: set[str]) -> str | None:
    checks: list[tuple[str, Callable[[str], bool]]] = [
        (r"mtu (\S+)", lambda v: _in_range(v, *MTU_RANGE)),
        (r"speed (\S+)", lambda v: v == "auto" or (v.isdigit() and int(v) in SPEEDS_MBPS)),
        (r"fec (\S+)", lambda v: v in FEC_MODES),
        (r"set qos-group (\S+)", lambda v: _in_range(v, 0, 7)),
        (r"pause pfc-cos (\S+)", lambda v: all(_in_range(c, 0, 7) for c in v.split(","))),
        (r"match dscp (\S+)", lambda v: all(_in_range(d, 0, 63) for d in re.split(r"[,-]", v))),
        (r"service-policy type \S+ (?:input |output )?(\S+)",
         lambda v: v in policies or v.startswith("default-")),
    ]
    for pattern, valid in checks:
        match = re.fullmatch(pattern, command)
        if match and not valid(match.group(1)):
            if pattern.startswith("service-policy"):
                return f"policy-map {match.group(1)} does not exist"
            return "% Invalid value at '^' marker."
    return None


def _in_range(value: str, low: int, high: int) -> bool:
    return value.isdigit() and low <= int(value) <= high


# --- the device ------------------------------------------------------------------------------------------


@dataclass
class Device:
    state: Path
    lock: threading.Lock

    def running(self) -> list[Stanza]:
        return parse((self.state / "running-config").read_text())

    def set_running(self, stanzas: list[Stanza]) -> None:
        _write(self.state / "running-config", render(stanzas))

    def bootflash(self, name: str) -> Path:
        """``bootflash:x``, ``bootflash:/x`` or a bare ``x`` (bootflash: is the CLI's working directory)."""
        match = re.fullmatch(r"(?:bootflash:/{0,3})?([A-Za-z0-9][A-Za-z0-9._-]*)", name)
        if not match:
            raise CliError(f"% Invalid file name {name!r}: only bootflash: files are supported")
        return self.state / "bootflash" / match.group(1)

    def checkpoint(self, name: str) -> Path:
        # "The checkpoint name can be any alphanumeric string up to 80 characters but cannot contain spaces."
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}", name):
            raise CliError(f"% Invalid checkpoint name {name!r}")
        return self.state / "checkpoints" / name

    def source(self, kind: str, name: str | None) -> list[Stanza]:
        """A config named the way rollback and show diff rollback-patch name them."""
        if kind == "running-config":
            return self.running()
        if kind == "startup-config":
            return parse((self.state / "startup-config").read_text())
        path = self.bootflash(name or "") if kind == "file" else self.checkpoint(name or "")
        if not path.exists():
            raise CliError(f"{'File' if kind == 'file' else 'Checkpoint'} {name} does not exist")
        return parse(path.read_text())

    def pending(self) -> dict[str, Any] | None:
        path = self.state / "pending.json"
        return json.loads(path.read_text()) if path.exists() else None

    def set_status(self, operation: str, status: str, **extra: Any) -> None:
        record = {"operation": operation, "status": status, "time": time.strftime("%a %H:%M:%S %d %b %Y"), **extra}
        _write(self.state / "config-replace-status.json", json.dumps(record))


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text)
    temporary.replace(path)


# --- commands ---------------------------------------------------------------------------------------------

Result = str | dict[str, Any] | None
Handler = Callable[[Device, re.Match[str]], Result]
COMMANDS: list[tuple[re.Pattern[str], Handler]] = []


def command(pattern: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        COMMANDS.append((re.compile(pattern), handler))
        return handler
    return register


@command(r"(?:no )?terminal dont-ask|terminal (?:length|width) \d+")
def _terminal(device: Device, match: re.Match[str]) -> Result:
    return None


@command(r"show hostname")
def _show_hostname(device: Device, match: re.Match[str]) -> Result:
    return {"hostname": hostname(device.running())}


@command(r"show running-config(?: all)?")
def _show_running(device: Device, match: re.Match[str]) -> Result:
    return "\n!Command: show running-config\n!Time: " + time.strftime("%a %b %d %H:%M:%S %Y") + "\n\n" + \
        render(device.running())


@command(r"show startup-config")
def _show_startup(device: Device, match: re.Match[str]) -> Result:
    return "\n!Command: show startup-config\n\n" + (device.state / "startup-config").read_text()


@command(r"show version")
def _show_version(device: Device, match: re.Match[str]) -> Result:
    uptime = int(time.time() - (device.state / "startup-config").stat().st_ctime)
    return {"host_name": hostname(device.running()), "chassis_id": "Nexus9000 C9364D-GX2A Chassis",
            "sys_ver_str": "10.3(4a)", "nxos_ver_str": "10.3(4a)", "kern_uptm_days": uptime // 86400,
            "kern_uptm_hrs": uptime // 3600 % 24, "kern_uptm_mins": uptime // 60 % 60, "kern_uptm_secs": uptime % 60}


@command(r"show inventory")
def _show_inventory(device: Device, match: re.Match[str]) -> Result:
    return {"TABLE_inv": {"ROW_inv": [{"name": "Chassis", "desc": "Nexus9000 C9364D-GX2A Chassis",
                                       "productid": "N9K-C9364D-GX2A", "serialnum": SERIAL}]}}


@command(r"show interface")
def _show_interface(device: Device, match: re.Match[str]) -> Result:
    """Link state follows the admin state: the target has no cabling, so a port that is enabled is up."""
    rows = []
    for stanza in device.running():
        found = re.fullmatch(r"interface ((?:Ethernet|mgmt|loopback)\S+)", stanza.header)
        if not found:
            continue
        lines = [child.strip() for child in stanza.children]
        ethernet = found.group(1).startswith("Ethernet")
        enabled = "no shutdown" in lines if ethernet else "shutdown" not in lines
        mtu = next((line.split()[1] for line in lines if re.fullmatch(r"mtu \d+", line)), "1500")
        speed = next((int(line.split()[1]) for line in lines if re.fullmatch(r"speed \d+", line)), 400000)
        description = next((line[len("description "):] for line in lines if line.startswith("description ")), "")
        row = {"interface": found.group(1), "state": "up" if enabled else "down",
               "admin_state": "up" if enabled else "down", "eth_mtu": mtu, "eth_bw": speed * 1000,
               "desc": description, "eth_hw_addr": "00c0.ffee.0004", "eth_link_flapped": "never"}
        if ethernet:
            row.update(interface_counters(device, found.group(1), INTERFACE_COUNTERS))
        rows.append(row)
    return {"TABLE_interface": {"ROW_interface": rows}}


# --- counters: `show interface` and `show interface counters errors` ---------------------------------------
# The counter fields fabricgen's observe reads, as NX-OS names them in NX-API JSON (the recorded responses in
# greenpau/go-cisco-nx-api's test assets: tests/observe_fixtures/nxos_nxapi.json). The numbers are the test's:
# ``counters.json`` in the state directory, {port: {field: value}}, 0 for a field it does not name, so a test
# injects a fault by writing a number there. Typed as in the recordings: eth_crc and eth_indiscard are numeric
# strings there, the others numbers.
COUNTERS_FILE = "counters.json"
INTERFACE_COUNTERS = ("eth_crc", "eth_indiscard", "eth_reset_cntr")
ERROR_COUNTERS = ("eth_align_err", "eth_fcs_err", "eth_symbol_err")
_AS_TEXT = ("eth_crc", "eth_indiscard")


def interface_counters(device: Device, port: str, fields: tuple[str, ...]) -> dict[str, Any]:
    given = _given(device, port)
    return {field: str(int(given.get(field, 0))) if field in _AS_TEXT else int(given.get(field, 0))
            for field in fields}


def _given(device: Device, port: str) -> dict[str, Any]:
    """The test's numbers for ``port`` (counters.json), every name one this target models."""
    path = device.state / COUNTERS_FILE
    given: dict[str, Any] = json.loads(path.read_text()).get(port, {}) if path.exists() else {}
    unknown = sorted(set(given) - set(INTERFACE_COUNTERS) - set(ERROR_COUNTERS) - set(TABULAR_COUNTERS)
                     - set(WATCHDOG_COUNTERS))
    if unknown:
        raise CliError(f"% this lab target's {COUNTERS_FILE} names counters it does not model: {unknown}")
    return given


@command(r"show interface counters errors")
def _show_interface_counters_errors(device: Device, match: re.Match[str]) -> Result:
    return {"TABLE_interface": {"ROW_interface": [{"interface": port, **interface_counters(device, port,
                                                                                           ERROR_COUNTERS)}
                                                  for port in _ethernet_ports(device)]}}


def _ethernet_ports(device: Device) -> list[str]:
    return [found.group(1) for stanza in device.running()
            if (found := re.fullmatch(r"interface (Ethernet\S+)", stanza.header))]


# --- counters: `show queuing tabular` and `show queuing pfc-queue detail` ----------------------------------
# No recorded output of these was found: keys as the __readonly__ JSON schema of Cisco's Nexus 9000 NX-OS
# show-command reference (release 9.3(x), "Q Show Commands") gives them, with the same inferences as the fixture
# built from it (tests/observe_fixtures/nxos_queuing_constructed_from_cisco_schema.json: qos-groups 1-7 carry
# group 0's keys with their number; every qos-group has a pfc-queue row). Counters are numbers; a test names
# them in counters.json as the device does (``pfc_tx_qos_3``), the watchdog's per qos-group (``q-shutdown[3]``).
QOS_GROUPS = range(8)
_TABULAR_FIELDS = ("tx_uc_pkt", "tx_uc_byte", "tx_uc_drop_pkt", "tx_uc_drop_byte", "tx_uc_ecn_pkt", "tx_uc_ecn_byte",
                   "tx_oobfc_uc_pkt", "tx_oobfc_uc_byte", "tx_oobfc_uc_drop_pkt", "tx_oobfc_uc_drop_byte",
                   "tx_fld_pkt", "tx_fld_byte", "tx_fld_drop_pkt", "tx_fld_drop_byte", "tx_mc_pkt", "tx_mc_byte",
                   "tx_mc_drop_pkt", "tx_mc_drop_byte", "pfc_rx", "pfc_tx")
TABULAR_COUNTERS = (*(f"{field}_qos_{group}" for group in QOS_GROUPS for field in _TABULAR_FIELDS), "ing_drop_pkt")
_WATCHDOG_FIELDS = ("q-shutdown", "q-restored", "q-pkt-drained", "q-pkt-dropped", "q-pkt-drained-n-dropped",
                    "q-aggr-pkt-dropped", "q-ing-pkt-dropped", "q-ing-aggr-pkt-dropped")
WATCHDOG_COUNTERS = tuple(f"{field}[{group}]" for group in QOS_GROUPS for field in _WATCHDOG_FIELDS)


@command(r"show queuing tabular")
def _show_queuing_tabular(device: Device, match: re.Match[str]) -> Result:
    rows = []
    for port in _ethernet_ports(device):
        given = _given(device, port)
        names = {f"qos_group_name_{group}": f"c-out-8q-q{group or '-default'}" for group in QOS_GROUPS}
        rows.append({"if_name_str": port, **names, "qos_group_name_cpu": "CPU", "qos_group_name_span": "SPAN",
                     **{field: int(given.get(field, 0)) for field in TABULAR_COUNTERS}})
    return {"TABLE_queuing_interface": {"ROW_queuing_interface": rows}}


@command(r"show queuing pfc-queue detail")
def _show_queuing_pfc_queue_detail(device: Device, match: re.Match[str]) -> Result:
    """The watchdog's state from the running config (global and per-interface ``priority-flow-control
    watch-dog-interval on``), a row per qos-group, PFC-configured where the system network-qos policy pauses a
    CoS in that group's ``c-8q-nq<N>`` class."""
    running = device.running()
    on = any(stanza.header == "priority-flow-control watch-dog-interval on" for stanza in running)
    interval = next((int(found.group(1)) for stanza in running
                     if (found := re.fullmatch(r"priority-flow-control watch-dog interval (\d+)", stanza.header))), 100)
    pauses = _paused_cos(running)
    rows = []
    for stanza in running:
        found = re.fullmatch(r"interface (Ethernet\S+)", stanza.header)
        if not found:
            continue
        given = _given(device, found.group(1))
        enabled = on or "priority-flow-control watch-dog-interval on" in (line.strip() for line in stanza.children)
        groups = [{"eq-qosgrp": group, "eq-qosgrp-state": "Active" if group in pauses else "Inactive",
                   "pfc-configured": "Yes" if group in pauses else "No", "pfc-cos": pauses.get(group, "-"),
                   "TABLE_qosgrp_stats_entry": {"ROW_qosgrp_stats_entry": {
                       "q-stat-type": "Ucast",
                       **{field: int(given.get(f"{field}[{group}]", 0)) for field in _WATCHDOG_FIELDS}}}}
                  for group in QOS_GROUPS]
        rows.append({"if_name_str": found.group(1), "wd-status": "Enabled" if enabled else "Disabled",
                     "TABLE_qosgrp_stats": {"ROW_qosgrp_stats": groups}})
    return {"glb-wd-status": "Enabled" if on else "Disabled", "glb-wd-force-status": "Disabled",
            "glb-wd-timer": interval, "glb-wd-timer-thresh": 2, "glb-auto-restore": 2, "glb-fixed-restore": 0,
            "glb-int-intf-multi": 0, "TABLE_queuing_interface": {"ROW_queuing_interface": rows}}


def _paused_cos(running: list[Stanza]) -> dict[int, str]:
    """qos-group → the CoS values the active network-qos policy pauses in it (``pause pfc-cos …``)."""
    policy = next((found.group(1) for stanza in running if stanza.header == "system qos" for line in stanza.children
                   if (found := re.fullmatch(r"service-policy type network-qos (\S+)", line.strip()))), None)
    paused: dict[int, str] = {}
    for stanza in running:
        if stanza.header != f"policy-map type network-qos {policy}":
            continue
        group = None
        for line in (child.strip() for child in stanza.children):
            found = re.fullmatch(r"class type network-qos c-8q-nq(\d|-default)", line)
            if found:
                group = 0 if found.group(1) == "-default" else int(found.group(1))
            elif group is not None and (cos := re.fullmatch(r"pause pfc-cos ([\d ,]+)", line)):
                paused[group] = cos.group(1).replace(" ", "")
    return paused


@command(r"checkpoint file (\S+)")
def _checkpoint_file(device: Device, match: re.Match[str]) -> Result:
    _write(device.bootflash(match.group(1)), render(device.running()))
    return "Done"


@command(r"checkpoint (\S+)(?: description .*)?")
def _checkpoint(device: Device, match: re.Match[str]) -> Result:
    """Cisco's rollback guide (Guidelines and Limitations): "You can create up to ten checkpoint copies",
    "Checkpoint names must be unique. You cannot overwrite previously saved checkpoints with the same name.\""""
    path = device.checkpoint(match.group(1))
    if path.exists():
        raise CliError(f"Checkpoint name {match.group(1)} is already in use")
    if len(list((device.state / "checkpoints").iterdir())) >= MAX_CHECKPOINTS:
        raise CliError(f"Maximum number of checkpoints ({MAX_CHECKPOINTS}) reached: remove one with 'no checkpoint'")
    _write(path, render(device.running()))
    return "Done"


@command(r"no checkpoint (\S+)")
def _no_checkpoint(device: Device, match: re.Match[str]) -> Result:
    path = device.checkpoint(match.group(1))
    if not path.exists():
        raise CliError(f"Checkpoint {match.group(1)} does not exist")
    path.unlink()
    return None


@command(r"show checkpoint summary")
def _checkpoint_summary(device: Device, match: re.Match[str]) -> Result:
    paths = sorted((device.state / "checkpoints").iterdir(), key=lambda p: (p.stat().st_mtime_ns, p.name))
    blocks = [f"{number}) {path.name}:\nCreated by {LAB_USERNAME}\nCreated at "
              f"{time.strftime('%a, %H:%M:%S %d %b %Y', time.localtime(path.stat().st_mtime))}\n"
              f"Size is {path.stat().st_size} bytes\nDescription: None\n"
              for number, path in enumerate(paths, start=1)]
    return "User Checkpoint Summary\n" + "-" * 72 + "\n" + "\n".join(blocks)


@command(r"delete (\S+)(?: no-prompt)?")
def _delete(device: Device, match: re.Match[str]) -> Result:
    path = device.bootflash(match.group(1))
    if not path.exists():
        raise CliError("No such file or directory")
    path.unlink()
    return None


@command(r"dir (\S+)")
def _dir(device: Device, match: re.Match[str]) -> Result:
    path = device.bootflash(match.group(1))
    if not path.exists():
        return "No such file or directory\n"
    stamp = time.strftime("%b %d %H:%M:%S %Y", time.localtime(path.stat().st_mtime))
    return f"{path.stat().st_size:>12}    {stamp}  {path.name}\n"


@command(r"show file (\S+)")
def _show_file(device: Device, match: re.Match[str]) -> Result:
    path = device.bootflash(match.group(1))
    if not path.exists():
        raise CliError("No such file or directory")
    return path.read_text()


SOURCE = r"(file|checkpoint) (\S+)|(running-config|startup-config)"


@command(rf"show diff rollback-patch (?:{SOURCE}) (?:{SOURCE})")
def _show_diff(device: Device, match: re.Match[str]) -> Result:
    old = device.source(match.group(1) or match.group(3), match.group(2))
    new = device.source(match.group(4) or match.group(6), match.group(5))
    lines = patch(old, new)
    body = "".join(line + "\n" for line in lines) if lines else "Rollback Patch is Empty\n"
    return "Collecting Running-Config\n#Generating Rollback Patch\n!!\n" + body


@command(r"copy (?:run|running-config) (?:start|startup-config)")
def _copy_run_start(device: Device, match: re.Match[str]) -> Result:
    _write(device.state / "startup-config", render(device.running()))
    return "[########################################] 100%\nCopy complete.\n"


@command(r"configure replace (\S+)(?: commit-timeout (\d+))?")
def _configure_replace(device: Device, match: re.Match[str]) -> Result:
    if match.group(1) == "commit" and match.group(2) is None:
        return _configure_replace_commit(device)
    if device.pending() is not None:
        raise CliError("Configure replace with commit-timeout is in progress: run 'configure replace commit' or "
                       "wait for the commit timer")
    timeout = int(match.group(2)) if match.group(2) else None
    if timeout is not None and not COMMIT_TIMEOUT_RANGE[0] <= timeout <= COMMIT_TIMEOUT_RANGE[1]:
        raise CliError("% Invalid value: commit-timeout takes 30-3600 seconds")
    before = device.running()
    user = device.source("file", match.group(1))
    _grammar_check(device, "file", match.group(1), "Configure replace")
    _version_check(before, user)
    lines = patch(before, user)
    problems = refusals(lines, user)
    if problems:  # the patch fails part-way; atomic (the default): the original configuration stays
        device.set_status("Config-replace to user config", "Failed", file=match.group(1))
        raise CliError("Configure replace failed. The original configuration was restored.\n"
                       + "".join(f"  {problem}\n" for problem in problems))
    device.set_running(user)
    if timeout is not None:
        pending = {"file": match.group(1), "deadline": time.time() + timeout, "timeout": timeout,
                   "restore": render(before)}
        _write(device.state / "pending.json", json.dumps(pending))
    device.set_status("Config-replace to user config", "Success", file=match.group(1), commit_timeout=timeout)
    timer = f"Commit timer started: {timeout} seconds\n" if timeout else ""
    return ("Version match between user file and running configuration.\nPre-check for User config PASSED\n"
            "Collecting Running-Config\n#Generating Rollback Patch\nExecuting Rollback Patch\n"
            "Generating Running-config for verification\nGenerating Patch for verification\n"
            "Verification is Successful.\n" + timer + "Configure replace completed successfully.\n")


def _grammar_check(device: Device, kind: str, name: str, operation: str) -> None:
    """Every line of the file (or checkpoint) parses in its mode under the command table (tests/targets/
    nxos_grammar.py), before anything changes: a misspelt keyword or a command in the wrong mode stops the
    operation with the parser's marker, as the replace's pre-check of the user file does on a switch."""
    path = device.bootflash(name) if kind == "file" else device.checkpoint(name)
    try:
        nxos_grammar.check(path.read_text())
    except nxos_grammar.GrammarError as refused:
        device.set_status(f"{operation} to user config", "Failed", file=name)
        raise CliError(f"Pre-check for User config FAILED: {name} {refused}\n{operation} failed. The running "
                       "configuration was not changed.") from None


def _version_check(running: list[Stanza], user: list[Stanza]) -> None:
    """The user file comes from this box (the guide: "You must provide a valid running configuration that has
    been received with the Cisco NX-OS device"): its version line must be the running config's."""
    def version(stanzas: list[Stanza]) -> str | None:
        return next((s.header for s in stanzas if s.header.startswith("version ")), None)
    if version(user) != version(running):
        raise CliError("Version mismatch between user file and running configuration: configure replace aborted")


def _configure_replace_commit(device: Device) -> Result:
    if device.pending() is None:
        raise CliError("No configure replace with commit-timeout is in progress")
    (device.state / "pending.json").unlink()
    device.set_status("Config-replace to user config", "Success (committed)")
    return "Commit timer stopped. Configure replace committed.\n"


@command(r"show config-replace status")
def _config_replace_status(device: Device, match: re.Match[str]) -> Result:
    path = device.state / "config-replace-status.json"
    record = json.loads(path.read_text()) if path.exists() else {}
    lines = [f"Last operation            : {record.get('operation', 'None')}",
             f"User config file          : {record.get('file', 'None')}",
             f"Status                    : {record.get('status', 'None')}",
             f"Time                      : {record.get('time', 'None')}"]
    pending = device.pending()
    if pending is not None:
        remaining = max(0, int(pending["deadline"] - time.time()))
        lines.append(f"Commit timeout            : {pending['timeout']} seconds, {remaining} seconds remaining")
    else:
        lines.append("Commit timeout            : not running")
    return "".join(line + "\n" for line in lines)


@command(r"rollback running-config (file|checkpoint) (\S+)(?: atomic)?")
def _rollback(device: Device, match: re.Match[str]) -> Result:
    if device.pending() is not None:
        raise CliError("Configure replace with commit-timeout is in progress: run 'configure replace commit' first")
    target = device.source(match.group(1), match.group(2))
    _grammar_check(device, match.group(1), match.group(2), "Rollback")
    problems = refusals(patch(device.running(), target), target)
    if problems:
        raise CliError("Rollback failed. The original configuration was restored.\n" +
                       "".join(f"  {problem}\n" for problem in problems))
    device.set_running(target)
    return "Note: Applying config parallelly may fail Rollback verification\nCollecting Running-Config\n" \
           "#Generating Rollback Patch\nExecuting Rollback Patch\nGenerating Running-config for verification\n" \
           "Generating Patch for verification\nVerification is Successful.\n\nRollback completed successfully.\n"


def run_command(device: Device, cmd: str) -> Result:
    text = " ".join(cmd.split())
    for pattern, handler in COMMANDS:
        match = pattern.fullmatch(text)
        if match:
            with device.lock:
                return handler(device, match)
    raise CliError("% Invalid command at '^' marker.")


# --- the commit timer ------------------------------------------------------------------------------------


def fire_expired_timer(device: Device) -> bool:
    """The commit timer's expiry: the configuration from before the replace comes back."""
    with device.lock:
        pending = device.pending()
        if pending is None or time.time() < pending["deadline"]:
            return False
        device.set_running(parse(pending["restore"]))
        (device.state / "pending.json").unlink()
        device.set_status("Rollback to previous config (commit timer expired)", "Success", file=pending["file"])
        return True


def timer_loop(device: Device) -> None:
    while True:
        fire_expired_timer(device)
        time.sleep(TIMER_POLL_S)


# --- NX-API over HTTPS ----------------------------------------------------------------------------------


def authorised(device: Device, header: str | None) -> bool:
    """HTTP basic credentials against the running config's local users (``password 5`` = a crypt hash)."""
    if not header or not header.startswith("Basic "):
        return False
    try:
        user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    except ValueError:
        return False
    with warnings.catch_warnings():  # the stdlib crypt module is deprecated, but is what reads crypt hashes
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt
    for stanza in device.running():
        found = re.fullmatch(r"username (\S+) password 5 (\S+).*", stanza.header)
        if found and found.group(1) == user:
            return bool(crypt.crypt(password, found.group(2)) == found.group(2))
    return False


def answer(device: Device, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    replies = []
    for request in requests:
        method, cmd = request.get("method"), str(request.get("params", {}).get("cmd", ""))
        _log(method, cmd)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request.get("id")}
        try:
            if method not in ("cli", "cli_ascii"):
                raise CliError(f"method {method!r} is not supported")
            output = run_command(device, cmd)
        except CliError as exc:
            reply["error"] = {"code": -32602, "message": "Invalid params", "data": {"msg": str(exc)}}
            replies.append(reply)
            break  # NX-API stops at the first failing command
        if method == "cli_ascii":
            reply["result"] = {"msg": output if isinstance(output, str) else json.dumps(output or {})}
        else:
            reply["result"] = None if output is None else {"body": output}
        replies.append(reply)
    return replies


def _log(method: Any, cmd: str) -> None:
    log = os.environ.get(LOG_VAR)
    if log:
        with Path(log).open("a") as handle:
            handle.write(json.dumps({"tool": "nxapi", "method": method, "cmd": cmd}) + "\n")


def handler_for(device: Device) -> type[BaseHTTPRequestHandler]:
    class NxapiHandler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/ins":
                self.send_error(404)
                return
            if not authorised(device, self.headers.get("Authorization")):
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="nxapi"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                requests = json.loads(body)
            except ValueError:
                self.send_error(400, "not JSON-RPC")
                return
            replies = answer(device, requests if isinstance(requests, list) else [requests])
            data = json.dumps(replies if isinstance(requests, list) else replies[0]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json-rpc")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return  # the command log is ours; http.server's access log would go to the daemon's stderr

    return NxapiHandler


def make_certificate(state: Path) -> None:
    """A self-signed certificate naming every IPv4 address of the host, so a client can pin it and check names."""
    from datetime import UTC, datetime, timedelta
    from ipaddress import ip_address

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    shown = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True, check=True).stdout
    addresses = sorted({ip_address(found) for found in re.findall(r"inet (\d+\.\d+\.\d+\.\d+)/", shown)})
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nxapi lab target")])
    now = datetime.now(UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(minutes=5))
                   .not_valid_after(now + timedelta(days=30))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(a) for a in addresses]), critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    _write(state / KEY, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()).decode())
    _write(state / CERT, certificate.public_bytes(serialization.Encoding.PEM).decode())


def serve(state: Path) -> int:
    device = Device(state, threading.Lock())
    make_certificate(state)
    threading.Thread(target=timer_loop, args=(device,), daemon=True).start()
    server = ThreadingHTTPServer(("0.0.0.0", PORT), handler_for(device))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(state / CERT, state / KEY)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    (state / "nxapi.ready").write_text(f"{os.getpid()}\n")
    server.serve_forever()
    return 0


def main() -> int:
    tool = Path(sys.argv[0]).name
    if tool == "nxapi-server":
        return serve(Path(os.environ[STATE_VAR]))
    print(f"{tool}: not a tool of the NX-OS target", file=sys.stderr)
    return 2


__all__ = ["DAEMON", "LOG_VAR", "STATE_VAR", "TOOLS", "lab_init", "main"]
