"""config_db.json, damaged on one port: a field of one of its entries edited or deleted, or a stray entry added.

A person edits config_db.json as JSON (an editor, ``jq``, ``sonic-cfggen --write-to-db``, ``config`` commands): so
each mutation loads the file, edits one entry of the port, and writes it back pretty-printed with sorted keys, as
SONiC's ``config save`` writes it. Each edit fails loudly when the table, entry or field it edits is not there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fabricgen.models.device import DeviceModel

from mutations import Files, Mutation

FILE = "config_db.json"
STRAY_VLAN = 3000  # not the management VLAN nor any VLAN the examples use

Db = dict[str, Any]


def _edit(change: Callable[[Db, str], None]) -> Mutation:
    def mutate(files: Files, device: DeviceModel, port: str) -> Files:
        db = json.loads(files[FILE])
        change(db, port)
        return {**files, FILE: json.dumps(db, indent=4, sort_keys=True) + "\n"}
    return mutate


def _entry(db: Db, table: str, key: str) -> dict[str, Any]:
    if key not in db.get(table, {}):
        raise AssertionError(f"mutation: no {table}|{key} in {FILE}")
    entry: dict[str, Any] = db[table][key]
    return entry


def set_field(table: str, field: str, old: str | None, new: str, key: str = "{port}") -> Mutation:
    """``table|key``'s ``field`` set to ``new`` (it must hold ``old`` first; None: it must be absent)."""
    def change(db: Db, port: str) -> None:
        entry, name = _entry(db, table, key.format(port=port)), field.format(port=port)
        if entry.get(name) != old:
            raise AssertionError(f"mutation: {table}|{key} {field} is {entry.get(field)!r}, not {old!r}")
        entry[name] = new
    return _edit(change)


def drop_field(table: str, field: str, key: str = "{port}") -> Mutation:
    def change(db: Db, port: str) -> None:
        entry, name = _entry(db, table, key.format(port=port)), field.format(port=port)
        if name not in entry:
            raise AssertionError(f"mutation: no {name} in {table}|{key}")
        del entry[name]
    return _edit(change)


def drop_entry(table: str) -> Mutation:
    def change(db: Db, port: str) -> None:
        _entry(db, table, port)
        del db[table][port]
    return _edit(change)


def add_entries(entries: Callable[[str], dict[str, dict[str, Any]]]) -> Mutation:
    """Stray entries (``entries(port)``: table → key → entry) added; none of them may exist already."""
    def change(db: Db, port: str) -> None:
        for table, rows in entries(port).items():
            existing = db.setdefault(table, {})
            if set(rows) & set(existing):
                raise AssertionError(f"mutation: {table} already has {sorted(set(rows) & set(existing))}")
            existing.update(rows)
    return _edit(change)


def _vlan_member(port: str, tagging: str) -> dict[str, dict[str, Any]]:
    vlan = f"Vlan{STRAY_VLAN}"
    return {"VLAN": {vlan: {"vlanid": str(STRAY_VLAN)}}, "VLAN_MEMBER": {f"{vlan}|{port}": {"tagging_mode": tagging}}}


def _static_headroom(port: str) -> dict[str, dict[str, Any]]:
    """A static lossless profile on the port's PGs 3-4 (a headroom override in the dynamic buffer model)."""
    profile = {"pool": "ingress_lossless_pool", "size": "20000", "xon": "10000", "xoff": "10000", "dynamic_th": "0"}
    return {"BUFFER_PROFILE": {"pg_lossless_custom_profile": profile},
            "BUFFER_PG": {f"{port}|3-4": {"profile": "pg_lossless_custom_profile"}}}


def _own_dscp_map(db: Db, port: str) -> None:
    """The port bound to a DSCP map of its own: a copy of the switch's with RoCE's DSCP 26 in TC 0."""
    entry = _entry(db, "PORT_QOS_MAP", port)
    mine = dict(_entry(db, "DSCP_TO_TC_MAP", entry["dscp_to_tc_map"]))
    mine["26"] = "0"
    db["DSCP_TO_TC_MAP"]["PORT_OWN"] = mine
    entry["dscp_to_tc_map"] = "PORT_OWN"


MUTATIONS: dict[str, dict[str, Mutation]] = {
    "admin_up": {"change": set_field("PORT", "admin_status", "up", "down"),
                 "remove": drop_field("PORT", "admin_status")},  # absent: down (sonic-port.yang)
    # No remove: without `mtu` the port runs portmgrd's 9100, what fabricgen renders.
    "mtu": {"change": set_field("PORT", "mtu", "9100", "1500")},
    "speed_mbps": {"change": set_field("PORT", "speed", "400000", "200000"), "remove": drop_field("PORT", "speed")},
    "fec": {"change": set_field("PORT", "fec", "rs", "none"), "remove": drop_field("PORT", "fec")},
    "lanes": {"change": set_field("PORT", "lanes", "0,1,2,3,4,5,6,7", "0,1,2,3"),
              "remove": drop_field("PORT", "lanes")},
    "description": {"change": set_field("PORT", "description", "GPU_node1_ens1f0np0", "spare"),
                    "remove": drop_field("PORT", "description")},
    "access_vlan": {"add": add_entries(lambda port: _vlan_member(port, "untagged"))},
    "tagged_vlans": {"add": add_entries(lambda port: _vlan_member(port, "tagged"))},
    "mode": {"add": set_field("PORT", "mode", None, "trunk")},  # `config switchport mode trunk`
    "pfc_priorities": {"change": set_field("PORT_QOS_MAP", "pfc_enable", "3", "4"),
                       "remove": drop_field("PORT_QOS_MAP", "pfc_enable"),
                       "add": set_field("PORT_QOS_MAP", "pfc_enable", "3", "3,4")},
    "lossless": {"change": set_field("PORT_QOS_MAP", "pfc_enable", "3", ""),  # "" disables PFC (YANG)
                 "remove": drop_entry("PORT_QOS_MAP")},
    "cable_m": {"change": set_field("CABLE_LENGTH", "{port}", "2m", "40m", key="AZURE"),
                "remove": drop_field("CABLE_LENGTH", "{port}", key="AZURE")},
    "headroom": {"change": add_entries(_static_headroom),
                 # only the lossy PG 0 in BUFFER_PG: buffermgrd makes no lossless PG, so reserves no headroom
                 "remove": add_entries(lambda port: {"BUFFER_PG": {f"{port}|0": {"profile": "NULL"}}})},
    "qos": {"change": _edit(_own_dscp_map),
            "remove": drop_entry("PFC_WD"),  # no PFC_WD entry: no watchdog on the port
            # a stray queue bound to a scheduler: the port schedules a queue the switch's other ports do not
            "add": add_entries(lambda port: {"QUEUE": {f"{port}|1": {"scheduler": "scheduler.cnp"}}})},
}
