"""Seed a Nautobot from a SimpleInventory: `fabricgen inventory export --to nautobot`.

Through Nautobot's REST API (bulk POSTs), idempotent per object kind by name: what exists is kept (a second
run adds nothing), so a run that stopped part-way can be run again. Creates what fabricgen reads back (see
fabricgen.load.sources.nautobot): one Location (``--location``, type "Site"), a Manufacturer "fabricgen"
with one DeviceType per hardware model, a Role per fabricgen role, a Platform per fabricgen platform
(network_driver: fabricgen's name, or netutils' arista_eos / cisco_nxos), each device with its fabricgen data
as its local config context, its interfaces, its cables (length in metres, type from media), and its Nornir
``hostname`` as its primary IP, on the management interface (a switch's) or the front-end interface (a GPU
host's), in a /24 prefix of the Global namespace.

The inheritance of groups.yaml and defaults.yaml is resolved by Nornir itself (each host's effective data is
written): Nautobot's config contexts can carry shared data again if wanted, since fabricgen reads the merged
context.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabricgen.load.sources.export import ExportError
from fabricgen.load.sources.nautobot import CONTEXT_KEY, NETWORK_DRIVERS, TOKEN_VARIABLE, TYPE_FROM_MEDIA

DRIVER_OF = {platform: driver for driver, platform in NETWORK_DRIVERS.items()}
STATUS = "Active"
BATCH = 500
CABLE_BATCH = 100
"""cables per request: Nautobot traces each cable's path as it saves it, about 0.1-0.6 CPU-s a cable (3.2.7, a
2-core machine under load); 500 in one request outlasted the 300 s timeout there"""


@dataclass
class Seeded:
    devices: int
    interfaces: int
    cables: int


def effective_hosts(inventory: Path) -> dict[str, dict[str, Any]]:
    """Each host's name → hostname, platform and fabricgen data, with Nornir's own inheritance (host → groups →
    defaults), read by Nornir's SimpleInventory."""
    from nornir.plugins.inventory import SimpleInventory

    nornir = SimpleInventory(host_file=str(inventory / "hosts.yaml"), group_file=str(inventory / "groups.yaml"),
                             defaults_file=str(inventory / "defaults.yaml")).load()
    hosts: dict[str, dict[str, Any]] = {}
    for name, host in nornir.hosts.items():
        merged: dict[str, Any] = dict(host.items())
        inner = merged.get(CONTEXT_KEY)
        data: dict[str, Any] = dict(inner) if isinstance(inner, dict) else merged
        hosts[name] = {"hostname": host.hostname, "platform": host.platform, "data": data}
    return hosts


class Api:
    """The few REST calls seeding needs: list by name, bulk create."""

    def __init__(self, url: str, token: str) -> None:
        import requests

        self.url = url.rstrip("/")
        self.session = requests.Session()
        self.session.headers.update({"Authorization": f"Token {token}", "Accept": "application/json",
                                     "Content-Type": "application/json"})

    def all(self, endpoint: str, **params: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        page: str | None = f"{self.url}/api/{endpoint}/"
        query: dict[str, Any] | None = {"limit": 1000, "depth": 0, **params}
        while page:
            reply = self.session.get(page, params=query, timeout=120)
            self._check(reply, endpoint)
            body = reply.json()
            items += body["results"]
            page, query = body.get("next"), None
        return items

    def create(self, endpoint: str, objects: list[dict[str, Any]], batch: int = BATCH) -> list[dict[str, Any]]:
        created: list[dict[str, Any]] = []
        for start in range(0, len(objects), batch):
            reply = self.session.post(f"{self.url}/api/{endpoint}/", json=objects[start:start + batch], timeout=300)
            self._check(reply, endpoint)
            created += reply.json()
        return created

    def patch(self, endpoint: str, objects: list[dict[str, Any]]) -> None:
        for start in range(0, len(objects), BATCH):
            reply = self.session.patch(f"{self.url}/api/{endpoint}/", json=objects[start:start + BATCH], timeout=300)
            self._check(reply, endpoint)

    @staticmethod
    def _check(reply: Any, endpoint: str) -> None:
        if reply.status_code >= 400:
            raise ExportError(f"Nautobot refused {reply.request.method} {endpoint}: HTTP {reply.status_code} "
                              f"{reply.text[:500]}")

    def ensure(self, endpoint: str, wanted: dict[str, dict[str, Any]], key: str = "name",
               **within: Any) -> dict[str, str]:
        """Objects by ``key`` (among those the ``within`` filter lists): those that exist, and those of ``wanted``
        created; → key → id."""
        found = {str(item[key]): str(item["id"]) for item in self.all(endpoint, **within)}
        missing = [body for name, body in wanted.items() if name not in found]
        for item in self.create(endpoint, missing) if missing else []:
            found[str(item[key])] = str(item["id"])
        return found


def export_nautobot(inventory: Path, url: str, location: str = "fabricgen") -> Seeded:
    token = os.environ.get(TOKEN_VARIABLE)
    if not token:
        raise ExportError(f"{TOKEN_VARIABLE} is not set: export an API token (with write access) of {url}")
    hosts = effective_hosts(inventory)
    api = Api(url, token)
    refs = _shared_objects(api, hosts, location)
    devices = api.ensure("dcim/devices", {name: _device(name, host, refs) for name, host in hosts.items()},
                         location=refs["location"])
    interfaces = _interfaces(api, hosts, devices, refs["status"])
    cables = _cables(api, hosts, interfaces, _status(api, "dcim.cable", "Connected"))
    _primary_ips(api, hosts, devices, interfaces, refs["status"])
    return Seeded(len(devices), len(interfaces), cables)


def _status(api: Api, content_type: str, name: str) -> str:
    """The id of the status ``name`` for objects of ``content_type`` (a cable is Connected, not Active)."""
    for item in api.all("extras/statuses", content_types=content_type):
        if item["name"] == name:
            return str(item["id"])
    raise ExportError(f"Nautobot has no status {name!r} for {content_type}")


def _device(name: str, host: dict[str, Any], refs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "status": refs["status"], "location": refs["location"],
            "role": refs["roles"][host["data"]["role"]], "device_type": refs["types"][_model(host)],
            "platform": refs["platforms"][host["platform"]],
            "local_config_context_data": {CONTEXT_KEY: _context(host["data"])}}


def _model(host: dict[str, Any]) -> str:
    return str(host["data"].get("hardware") or host["platform"])


def _shared_objects(api: Api, hosts: dict[str, dict[str, Any]], location: str) -> dict[str, Any]:
    statuses = {item["name"]: str(item["id"]) for item in api.all("extras/statuses")}
    if STATUS not in statuses:
        raise ExportError(f"Nautobot has no status {STATUS!r}")
    location_type = api.ensure("dcim/location-types", {"Site": {"name": "Site", "content_types": [
        "dcim.device", "ipam.prefix"]}})["Site"]
    locations = api.ensure("dcim/locations", {location: {"name": location, "location_type": location_type,
                                                          "status": statuses[STATUS]}})
    manufacturer = api.ensure("dcim/manufacturers", {"fabricgen": {"name": "fabricgen"}})["fabricgen"]
    models = {_model(host) for host in hosts.values()}
    types = api.ensure("dcim/device-types", {model: {"model": model, "manufacturer": manufacturer}
                                             for model in models}, key="model")
    roles = api.ensure("extras/roles", {role: {"name": role, "content_types": ["dcim.device"]}
                                        for role in {host["data"]["role"] for host in hosts.values()}})
    platforms = api.ensure("dcim/platforms", {p: {"name": p, "network_driver": DRIVER_OF.get(p, p)}
                                              for p in {host["platform"] for host in hosts.values()}})
    return {"status": statuses[STATUS], "location": locations[location], "types": types, "roles": roles,
            "platforms": platforms}


def _context(data: dict[str, Any]) -> dict[str, Any]:
    """fabricgen's data as the config context holds it: no role (the device's Role), ports as a list of their
    settings without the cable (the cable is Nautobot's)."""
    context = {key: value for key, value in data.items() if key not in ("role", "ports")}
    context["ports"] = [{"name": name, **{k: v for k, v in (spec or {}).items()
                                          if k not in ("peer", "cable_m", "media")}}
                        for name, spec in (data.get("ports") or {}).items()]
    return context


def _interfaces(api: Api, hosts: dict[str, dict[str, Any]], devices: dict[str, str],
                status: str) -> dict[tuple[str, str], str]:
    names = {device_id: name for name, device_id in devices.items()}
    found = {(names[item["device"]["id"] if isinstance(item["device"], dict) else item["device"]], item["name"]):
             str(item["id"]) for item in api.all("dcim/interfaces")
             if (item["device"]["id"] if isinstance(item["device"], dict) else item["device"]) in names}
    wanted = [{"device": devices[name], "name": port, "type": "other", "status": status}
              for name, host in hosts.items() for port in (host["data"].get("ports") or {})
              if (name, port) not in found]
    for item in api.create("dcim/interfaces", wanted) if wanted else []:
        device = item["device"]["id"] if isinstance(item["device"], dict) else item["device"]
        found[(names[str(device)], item["name"])] = str(item["id"])
    return found


def _cables(api: Api, hosts: dict[str, dict[str, Any]], interfaces: dict[tuple[str, str], str], status: str) -> int:
    cabled = {str(item.get("termination_a_id")) for item in api.all("dcim/cables")}
    cabled |= {str(item.get("termination_b_id")) for item in api.all("dcim/cables")}
    wanted: dict[frozenset[str], dict[str, Any]] = {}
    for name, host in hosts.items():
        for port, spec in (host["data"].get("ports") or {}).items():
            if not isinstance(spec, dict) or not spec.get("peer"):
                continue
            far_device, _, far_port = str(spec["peer"]).partition(":")
            a, b = interfaces[(name, port)], interfaces.get((far_device, far_port))
            if b is None or a in cabled or b in cabled or frozenset((a, b)) in wanted:
                continue
            body: dict[str, Any] = {"termination_a_type": "dcim.interface", "termination_a_id": a,
                                    "termination_b_type": "dcim.interface", "termination_b_id": b, "status": status}
            if spec.get("cable_m") is not None:
                body |= {"length": spec["cable_m"], "length_unit": "m"}
            if spec.get("media"):
                body["type"] = TYPE_FROM_MEDIA[spec["media"]]
            wanted[frozenset((a, b))] = body
    return len(api.create("dcim/cables", list(wanted.values()), CABLE_BATCH)) if wanted else 0


def _primary_ips(api: Api, hosts: dict[str, dict[str, Any]], devices: dict[str, str],
                 interfaces: dict[tuple[str, str], str], status: str) -> None:
    """Each host's hostname (an address) as its device's primary IP, on its management (switch) or front-end
    (GPU host) interface."""
    namespace = next(item["id"] for item in api.all("ipam/namespaces") if item["name"] == "Global")
    addresses: dict[str, tuple[str, str]] = {}
    for name, host in hosts.items():
        try:
            address = ipaddress.ip_address(str(host["hostname"]))
        except ValueError:
            continue  # a DNS name: nornir-nautobot then uses the device's name, as fabricgen does not
        port = host["data"].get("mgmt_interface") or host["data"].get("frontend_interface") or _first_port(host)
        if port is None or (name, port) not in interfaces:
            continue
        addresses[name] = (str(address), interfaces[(name, port)])
    prefixes = {str(ipaddress.ip_network(f"{ip}/24", strict=False)) for ip, _ in addresses.values()}
    api.ensure("ipam/prefixes", {p: {"prefix": p, "namespace": namespace, "status": status} for p in prefixes},
               key="prefix")
    existing = {item["host"]: str(item["id"]) for item in api.all("ipam/ip-addresses")}
    new = [{"address": f"{ip}/24", "namespace": namespace, "status": status} for ip, _ in addresses.values()
           if ip not in existing]
    for item in api.create("ipam/ip-addresses", new) if new else []:
        existing[item["host"]] = str(item["id"])
    assigned = {(str(_ref(item["ip_address"])), str(_ref(item["interface"])))
                for item in api.all("ipam/ip-address-to-interface")}
    links = [{"ip_address": existing[ip], "interface": interface} for ip, interface in addresses.values()
             if (existing[ip], interface) not in assigned]
    if links:
        api.create("ipam/ip-address-to-interface", links)
    api.patch("dcim/devices", [{"id": devices[name], "primary_ip4": existing[ip]} for name, (ip, _) in
                               addresses.items()])


def _ref(value: Any) -> Any:
    return value.get("id") if isinstance(value, dict) else value


def _first_port(host: dict[str, Any]) -> str | None:
    ports = host["data"].get("ports") or {}
    return next(iter(ports), None)
