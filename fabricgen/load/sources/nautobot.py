"""Nautobot as the inventory: devices through nornir-nautobot's inventory plugin, the rest through Nautobot's REST API.

``-i nautobot://HOST[:PORT]`` (HTTPS: ``nautobots://HOST``), or ``-i nornir.yaml``, a Nornir config file whose
``inventory.plugin`` is ``NautobotInventory`` (its ``options.nautobot_url``, ``ssl_verify`` and
``filter_parameters`` are used). The API token comes from the environment only — ``NAUTOBOT_TOKEN``, as
nornir-nautobot reads it — and fabricgen never writes or prints it.

What fabricgen reads, per device (the Nautobot objects a Nautobot user already keeps):

- the device's name, and its primary IPv4 (else IPv6) address as Nornir's ``hostname`` — nornir-nautobot's own
  choice;
- its Platform's ``network_driver`` as the fabricgen platform: ``sonic``, ``eos``, ``nvue``, ``nxos``,
  ``connectx``, ``linux-dcb``, or netutils' ``arista_eos`` / ``cisco_nxos`` for EOS and NX-OS;
- its Role's name as the fabricgen role (``leaf``, ``spine``, ``oob``, ``gpu-host``);
- its interfaces (the ports), and each cable between two of them: ``length`` with ``length_unit`` as
  ``cable_m`` (in metres, rounded up), ``type`` as ``media`` (dac-passive → dac, dac-active → aec, aoc → aoc,
  mmf*/smf* → optic, cat* → copper);
- the rest of fabricgen's device data from the device's *config context* under the key ``fabricgen`` (a device
  whose context has no such key is not fabricgen's: skipped with a note, as a SimpleInventory host with no role)
  (``hardware``, ``asic``, ``mgmt_interface``, ...), merged by Nautobot from every context that applies (role,
  platform, location, the device's local context) — the place Nautobot users keep per-device intended data;
  there ``ports`` is a list of each port's settings in port order (``{name: Ethernet0, speed: 400G, fec: rs,
  lanes: "0,...,7"}``): a list, because the port order is the device's and a JSON object in PostgreSQL keeps
  none. Interfaces the list does not name follow it, in Nautobot's order, with no settings.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from fabricgen.load.sources import DEFAULTS, GROUPS, HOSTS, NornirData, nautobot_cache
from fabricgen.load.yamlsource import SourceMap, YamlDocument, load_yaml
from fabricgen.models.diagnostics import INPUT_FILE, INPUT_SCHEMA, Diagnostic, KeyPath, Location, format_key_path

TOKEN_VARIABLE = "NAUTOBOT_TOKEN"
CONTEXT_KEY = "fabricgen"
PLUGIN = "NautobotInventory"
PAGE = 1000
"""objects per API page: Nautobot's default MAX_PAGE_SIZE"""
TIMEOUT_S = 120

NETWORK_DRIVERS = {"arista_eos": "eos", "cisco_nxos": "nxos"}
"""netutils' network_driver names → fabricgen's platform (the others are fabricgen's names as they are)"""
MEDIA_FROM_TYPE = {"dac-passive": "dac", "dac-active": "aec", "aoc": "aoc"}
TYPE_FROM_MEDIA = {"dac": "dac-passive", "aec": "dac-active", "aoc": "aoc", "optic": "smf", "copper": "cat6"}
METRES_PER_UNIT = {"m": Decimal(1), "cm": Decimal("0.01"), "km": Decimal(1000), "ft": Decimal("0.3048"),
                   "in": Decimal("0.0254"), "mi": Decimal("1609.344")}

_URL = re.compile(r"^(nautobots?):/+([^/?#]+)([^?#]*)(?:\?([^#]*))?$")


def url_of(inventory: Path | str) -> tuple[str, dict[str, str]] | None:
    """The Nautobot base URL ``-i`` names and the device filter its query gives (``?location=dc1&role=leaf``,
    nornir-nautobot's filter_parameters), or None. (click hands the option over as a Path, which folds
    ``nautobot://host`` into ``nautobot:/host``: both spellings are read.)"""
    match = _URL.match(str(inventory))
    if match is None:
        return None
    scheme = "https" if match[1] == "nautobots" else "http"
    return f"{scheme}://{match[2]}{match[3].rstrip('/')}", dict(parse_qsl(match[4] or ""))


def is_nornir_config(inventory: Path) -> bool:
    """``inventory`` is a Nornir config file (YAML) whose inventory plugin is nornir-nautobot's."""
    if inventory.suffix not in (".yaml", ".yml") or not inventory.is_file():
        return False
    doc, problems = load_yaml(inventory)
    data = doc.data if doc is not None and not problems else None
    section = data.get("inventory") if isinstance(data, dict) else None
    return isinstance(section, dict) and section.get("plugin") == PLUGIN


def media_of(cable_type: str | None) -> str | None:
    if not cable_type:
        return None
    if cable_type in MEDIA_FROM_TYPE:
        return MEDIA_FROM_TYPE[cable_type]
    if cable_type.startswith(("mmf", "smf")):
        return "optic"
    if cable_type.startswith("cat") or cable_type == "mrj21-trunk":
        return "copper"
    return cable_type  # the schema refuses it, naming the cable


def metres(length: Any, unit: str | None) -> int | str | None:
    """A Nautobot cable length in whole metres, rounded up (as fabricgen's cable_m); the raw text when it is not
    a length fabricgen can read (then the schema reports it)."""
    if length in (None, ""):
        return None
    try:
        value = Decimal(str(length)) * METRES_PER_UNIT[unit or "m"]
    except (InvalidOperation, KeyError):
        return f"{length} {unit}"
    return math.ceil(value)


@dataclass
class Fetched:
    """What one read of a Nautobot returned, in the shape fabricgen reads it."""

    devices: list[dict[str, Any]] = field(default_factory=list)
    """per device: name, id, hostname, platform, role, config_context"""
    interfaces: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """device id → its interfaces' (id, name), in Nautobot's order"""
    cables: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    cached: bool = False
    """taken from the cache: Nautobot's change log has no entry since it was read (nautobot_cache)"""

    def digest(self) -> str:
        """sha256 of what was read, as the manifest records an input file's."""
        body = json.dumps([self.devices, self.interfaces, self.cables], sort_keys=True, default=str)
        return hashlib.sha256(body.encode()).hexdigest()


class NautobotSource:
    """A Nautobot read as Nornir data (see the module's docstring for what maps to what)."""

    def __init__(self, url: str, ssl_verify: bool = True, filter_parameters: dict[str, Any] | None = None,
                 origin: str | None = None) -> None:
        self.url, self.ssl_verify = url.rstrip("/"), ssl_verify
        self.filter_parameters = dict(filter_parameters or {})
        self.origin = origin or url

    @classmethod
    def from_nornir_config(cls, path: Path) -> NautobotSource:
        doc, _ = load_yaml(path)
        assert doc is not None  # is_nornir_config read it
        options = doc.data["inventory"].get("options") or {}
        options = options if isinstance(options, dict) else {}
        url = str(options.get("nautobot_url") or os.environ.get("NAUTOBOT_URL") or "")
        return cls(url, bool(options.get("ssl_verify", True)), options.get("filter_parameters"), str(path))

    def read(self, problems: list[Diagnostic], hashes: dict[str, str], jobs: int) -> NornirData | None:
        where = Location(self.origin, 1, 1)
        token = os.environ.get(TOKEN_VARIABLE)
        if not self.url:
            problems.append(Diagnostic(where, "<nautobot>", "no Nautobot URL", "set inventory.options.nautobot_url "
                                       "in the Nornir config, or NAUTOBOT_URL", INPUT_FILE))
            return None
        if not token:
            problems.append(Diagnostic(where, "<nautobot>", f"{TOKEN_VARIABLE} is not set",
                                       f"export {TOKEN_VARIABLE} with an API token of {self.url} (fabricgen reads it "
                                       "from the environment only)", INPUT_FILE))
            return None
        try:
            fetched = fetch(self.url, token, self.ssl_verify, self.filter_parameters)
        except NautobotError as exc:
            problems.append(Diagnostic(where, "<nautobot>", str(exc), exc.hint, INPUT_FILE))
            return None
        hashes["inventory/nautobot"] = fetched.digest()
        return as_nornir(fetched, self.url, problems)


class NautobotError(Exception):
    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


# --- reading the API ---------------------------------------------------------------------------------------

def fetch(url: str, token: str, ssl_verify: bool = True, filter_parameters: dict[str, Any] | None = None,
          ) -> Fetched:
    """Devices through nornir-nautobot's inventory plugin (with their config context's ``fabricgen`` key),
    interfaces and cables through the REST API, a page of PAGE objects a request; or, when Nautobot's change log
    says nothing changed since, the cached answer of the last read (fabricgen.load.sources.nautobot_cache)."""
    import requests
    from nornir_nautobot.plugins.inventory.nautobot import NautobotInventory

    plugin = NautobotInventory(nautobot_url=url, nautobot_token=token, ssl_verify=ssl_verify,
                               filter_parameters={**(filter_parameters or {}), "include": "config_context",
                                                  "limit": PAGE}, pynautobot_dict=False)
    fetched = Fetched()
    session = requests.Session()  # not the plugin's: it asks for depth=1 on every request
    session.headers.update({"Authorization": f"Token {token}", "Accept": "application/json"})
    filters = dict(filter_parameters or {})
    try:
        _check_access(session, url, ssl_verify, fetched)
        mark = nautobot_cache.change_mark(session, url, ssl_verify, TIMEOUT_S)
        fetched.requests += 1
        answer = nautobot_cache.cached(url, token, ssl_verify, filters, mark) if mark is not None else None
        if answer is not None:
            fetched.devices, fetched.interfaces, fetched.cables = answer["devices"], answer["interfaces"], \
                answer["cables"]
            fetched.cached = True
            return fetched
        inventory = _load_quietly(plugin)
        for name, host in inventory.hosts.items():
            device = host.data["pynautobot_object"]
            context = _plain(device.config_context or {})
            fetched.devices.append({
                "name": name, "id": str(device.id), "hostname": host.hostname, "platform": host.platform,
                "role": _name(device.role),
                "config_context": {CONTEXT_KEY: context[CONTEXT_KEY]} if CONTEXT_KEY in context else {}})
        wanted = {device["id"] for device in fetched.devices}
        for item in _pages(session, f"{url}/api/dcim/interfaces/", fetched, ssl_verify):
            device_id = _id(item.get("device"))
            if device_id is not None and device_id in wanted:
                fetched.interfaces.setdefault(device_id, []).append((str(item["id"]), str(item["name"])))
        for item in _pages(session, f"{url}/api/dcim/cables/", fetched, ssl_verify):
            fetched.cables.append({
                "id": str(item["id"]), "a": str(item.get("termination_a_id")),
                "b": str(item.get("termination_b_id")), "a_type": item.get("termination_a_type"),
                "b_type": item.get("termination_b_type"), "length": item.get("length"),
                "length_unit": _value(item.get("length_unit")), "type": _value(item.get("type"))})
    except requests.RequestException as exc:
        raise NautobotError(f"cannot read {url}: {type(exc).__name__}", "check the URL, the network and that "
                            f"{TOKEN_VARIABLE} is a valid token") from None
    except Exception as exc:  # pynautobot's RequestError and friends: an answer fabricgen cannot use
        if type(exc).__module__.startswith(("pynautobot", "requests")):
            raise NautobotError(f"{url} refused the request: {_reason(exc)}", f"check that {TOKEN_VARIABLE} is a "
                                "valid token with read access to dcim") from None
        raise
    fetched.requests += 1 + len(fetched.devices) // PAGE
    if mark is not None:
        nautobot_cache.keep(url, token, ssl_verify, filters, mark, {
            "devices": fetched.devices, "interfaces": fetched.interfaces, "cables": fetched.cables})
    return fetched


def _check_access(session: Any, url: str, ssl_verify: bool, fetched: Fetched) -> None:
    """One cheap request first, so that a wrong URL or token is said as such (the plugin would print a
    "query filters" error and exit)."""
    reply = session.get(f"{url}/api/status/", timeout=TIMEOUT_S, verify=ssl_verify)
    fetched.requests += 1
    if reply.status_code in (401, 403):
        raise NautobotError(f"{url} refused the token (HTTP {reply.status_code})", f"check {TOKEN_VARIABLE}: a "
                            "valid API token of this Nautobot with read access to dcim")
    if reply.status_code != 200:
        raise NautobotError(f"{url}/api/status/ answered HTTP {reply.status_code}", "check that the URL is "
                            "Nautobot's base URL")


def _load_quietly(plugin: Any) -> Any:
    """The plugin's inventory; a filter Nautobot refuses (the plugin prints it and exits) as a NautobotError."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            return plugin.load()
    except SystemExit:
        said = printed.getvalue().strip().splitlines()
        raise NautobotError(said[-1][:300] if said else "nornir-nautobot could not list the devices",
                            "check the filter (the query after the URL, or filter_parameters)") from None


def _pages(session: Any, first: str, fetched: Fetched, ssl_verify: bool) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    page: str | None = f"{first}?limit={PAGE}&depth=0"
    while page:
        reply = session.get(page, timeout=TIMEOUT_S, verify=ssl_verify)
        fetched.requests += 1
        if reply.status_code != 200:
            raise NautobotError(f"{first} answered HTTP {reply.status_code}", f"check that {TOKEN_VARIABLE} is a "
                                "valid token with read access to dcim")
        body = reply.json()
        items += body.get("results", [])
        page = body.get("next")
    return items


def _reason(exc: Exception) -> str:
    text = str(getattr(exc, "error", "") or exc)
    return text.splitlines()[0][:200] if text else type(exc).__name__


def _name(record: Any) -> str | None:
    if record is None:
        return None
    return str(getattr(record, "name", None) or record)


def _id(value: Any) -> str | None:
    if isinstance(value, dict):
        return str(value.get("id"))
    return None if value is None else str(value)


def _value(choice: Any) -> Any:
    return choice.get("value") if isinstance(choice, dict) else choice


def _plain(value: Any) -> Any:
    """pynautobot's records and dicts as plain JSON data."""
    return json.loads(json.dumps(dict(value) if not isinstance(value, dict) else value, default=str))


# --- Nautobot's objects → Nornir hosts ------------------------------------------------------------------------

def as_nornir(fetched: Fetched, url: str, problems: list[Diagnostic]) -> NornirData:
    """The hosts the fetched objects make, in the shape hosts.yaml would give them; each key located at the
    Nautobot object it came from (``URL/dcim/devices/NAME``, ``URL/dcim/cables/ID``)."""
    source = SourceMap()
    hosts: dict[str, Any] = {}
    interface_of: dict[str, tuple[str, str]] = {}
    names = {device["id"]: device["name"] for device in fetched.devices}
    for device in fetched.devices:
        name = device["name"]
        at = Location(f"{url}/dcim/devices/{name}", 1, 1)
        source.add((name,), at)
        context = device["config_context"].get(CONTEXT_KEY)
        platform = device["platform"]
        host: dict[str, Any] = {"hostname": device["hostname"], "platform": NETWORK_DRIVERS.get(platform, platform)}
        hosts[name] = host
        if context is None:
            host["data"] = {}  # not fabricgen's: load skips it, naming it, as a SimpleInventory host with no role
            continue
        data: dict[str, Any] = dict(context) if isinstance(context, dict) else {}
        if device["role"] is not None:
            data["role"] = device["role"]
        interfaces = fetched.interfaces.get(device["id"], [])
        data["ports"] = _ports(name, data.get("ports"), [port for _, port in interfaces], at, problems)
        for interface_id, port in interfaces:
            interface_of[interface_id] = (names[device["id"]], port)
        host["data"] = data
    for cable in fetched.cables:
        _cable(cable, hosts, interface_of, source, url, problems)
    doc = _Located({name: host for name, host in hosts.items()}, url, source)
    return NornirData(hosts, {}, {}, {HOSTS: doc, GROUPS: _Located({}, url, SourceMap()),
                                      DEFAULTS: _Located({}, url, SourceMap())})


def _ports(device: str, settings: Any, interfaces: list[str], at: Location,
           problems: list[Diagnostic]) -> dict[str, Any]:
    """The device's ports in order: those the config context's ``fabricgen.ports`` list names, with their settings,
    then the other interfaces. A port the list names must be an interface of the device."""
    ports: dict[str, Any] = {}
    if settings is not None and not isinstance(settings, list):
        problems.append(Diagnostic(at, format_key_path((device, "config_context", CONTEXT_KEY, "ports")),
                                   "ports must be a list of port settings, each with its name",
                                   "e.g. [{name: Ethernet0, speed: 400G}]", INPUT_SCHEMA))
        settings = []
    present = set(interfaces)
    for index, item in enumerate(settings or []):
        name = item.get("name") if isinstance(item, dict) else None
        path: KeyPath = (device, "config_context", CONTEXT_KEY, "ports", index)
        if not isinstance(name, str) or name not in present:
            problems.append(Diagnostic(at, format_key_path(path), f"port {name!r} is not an interface of {device}",
                                       f"add the interface to {device} in Nautobot, or remove it from the list",
                                       INPUT_SCHEMA))
            continue
        ports[name] = {key: value for key, value in item.items() if key != "name"}
    for name in interfaces:
        ports.setdefault(name, {})
    return ports


def _cable(cable: dict[str, Any], hosts: dict[str, Any], interface_of: dict[str, tuple[str, str]],
           source: SourceMap, url: str, problems: list[Diagnostic]) -> None:
    a, b = interface_of.get(cable["a"]), interface_of.get(cable["b"])
    if cable["a_type"] != "dcim.interface" or cable["b_type"] != "dcim.interface" or a is None or b is None:
        return  # a cable to a console port, a circuit, or a device fabricgen did not read: not the fabric's
    at = Location(f"{url}/dcim/cables/{cable['id']}", 1, 1)
    if "ports" not in hosts[a[0]]["data"]:
        a, b = b, a  # declared on the fabricgen end (a cable between two devices that are not fabricgen's: neither)
    if "ports" not in hosts[a[0]]["data"]:
        return
    spec = hosts[a[0]]["data"]["ports"][a[1]]
    if spec.get("peer") is not None:
        problems.append(Diagnostic(at, f"{a[0]}.{a[1]}", f"{a[0]}:{a[1]} has two cables", "a port takes one "
                                   "cable; delete one of them in Nautobot", "FG-INV-002"))
        return
    spec["peer"] = f"{b[0]}:{b[1]}"
    length, media = metres(cable["length"], cable["length_unit"]), media_of(cable["type"])
    if length is not None:
        spec["cable_m"] = length
    if media is not None:
        spec["media"] = media
    for key in ("peer", "cable_m", "media"):
        source.add((a[0], "data", "ports", a[1], key), at)


class _Located(YamlDocument):
    """Nautobot's objects as load reads a document: data plus where each key came from."""

    def __init__(self, data: dict[str, Any], url: str, source: SourceMap) -> None:
        super().__init__(data, url, "", source)

