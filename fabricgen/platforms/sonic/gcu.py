"""The change fabricgen makes to a SONiC switch: an RFC 6902 JSON Patch of its owned scope, for GCU.

SONiC's Generic Config Updater (``config apply-patch``, sonic-utilities ``generic_config_updater``) takes a JSON
Patch against the running CONFIG_DB, simulates the result, validates it against SONiC's YANG models and a few
field rules of its own, and applies it. fabricgen owns sections of a switch, not the switch: the patch replaces
exactly the owned scope with the rendered candidate and leaves everything else as it is. The owned scope is:

* the tables of ``OWNED_TABLES``, and in them only what the candidate names: an entry (key) the candidate has is
  fabricgen's, an entry it lacks is the switch's own (SONiC's ``AZURE`` maps, the QoS of ports fabricgen does not
  cable, the profiles its SKU templates wrote) and is never removed, with three exceptions where an entry the
  candidate lacks would still be read as part of fabricgen's port: every QUEUE row of a port the candidate has
  QUEUE rows for (a queue left behind is a queue the port runs), every MGMT_INTERFACE address of an interface the
  candidate addresses (one management address), and every BUFFER_PG row whose priority groups overlap the
  candidate's for that port (two profiles on one PG);
* whole entries, fields included (a field the switch has and the candidate lacks is removed), except in PORT,
  MGMT_PORT and CABLE_LENGTH, where fabricgen owns only some fields of an entry the platform made: PORT's
  ``admin_status``/``mtu``/``speed``/``fec``/``description`` (never ``lanes``, ``alias``, ``index``: the
  platform's port map), MGMT_PORT's the same but ``fec``, and the CABLE_LENGTH lengths of the candidate's ports.
  Only fields the candidate sets are written there; none is removed.

The patch is made of ``add``/``replace``/``remove`` operations only, one per field where an entry exists and one
per entry where it does not, never ``move``/``copy`` (GCU's field rules look at an operation's ``path`` only).

What GCU refuses is found here, before anything is sent (``refusals``), rather than half-way through a push:

* field rules (sonic-utilities ``generic_config_updater/gu_common.py`` ``validate_field_operation``,
  ``field_operation_validators.py``, ``gcu_field_operation_validators.conf.json``): removing ``/PFC_WD/GLOBAL`` or
  ``/PFC_WD/GLOBAL/POLL_INTERVAL`` is always illegal; a BUFFER_PROFILE that exists may change only ``dynamic_th``
  and ``xoff`` in place; up to release 202505 no BUFFER_PROFILE may be added (``GCU_REFUSES_NEW_BUFFER_PROFILE``);
* a PORT ``fec`` or ``speed`` the port's STATE_DB entry does not list as supported (``port_config_update_validator``:
  ``supported_fecs``, default rs/fc/none/auto when it lists none; ``supported_speeds``), read from the switch
  (``port_capabilities``);
* a target config with an empty table (``generic_updater.py`` ``PatchApplier.apply``: EmptyTableError);
* a port the switch does not have, or whose lanes differ from the candidate's: ports come from the platform's
  port map (breakout), which fabricgen does not change, so the inventory does not describe this switch.

YANG validity is the switch's to judge: ``config apply-patch --dry-run`` runs the same validation without
changing anything (the driver's device-side check).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import jsonpatch
import jsonpointer

from fabricgen.platforms.sonic import GCU_REFUSES_NEW_BUFFER_PROFILE, OWNED_TABLES

# Entries fabricgen owns only in part: the fields it may write (None: any field the candidate names).
PARTIAL_FIELDS: Mapping[str, frozenset[str] | None] = {
    "PORT": frozenset({"admin_status", "mtu", "speed", "fec", "description"}),
    "MGMT_PORT": frozenset({"admin_status", "mtu", "speed", "description"}),
    "CABLE_LENGTH": None,
}
# Rows keyed "<port or interface>|...": all of a port's rows are fabricgen's once the candidate has one.
ROW_FAMILIES = frozenset({"QUEUE", "MGMT_INTERFACE"})
# gu_common.py validate_field_operation: illegal_operations_to_fields_map["remove"] (the owned ones).
ILLEGAL_REMOVALS = ("/PFC_WD/GLOBAL", "/PFC_WD/GLOBAL/POLL_INTERVAL")
# field_operation_validators.py DEFAULT_SUPPORTED_FECS_LIST: a port whose STATE_DB lists no supported FEC.
DEFAULT_SUPPORTED_FECS = ("rs", "fc", "none", "auto")
# gcu_field_operation_validators.conf.json, BUFFER_PROFILE: the fields an existing profile may change in place.
BUFFER_PROFILE_IN_PLACE = frozenset({"dynamic_th", "xoff"})
DEFAULT_RELEASE = "202411"  # fabricgen's target when the switch's CONFIG_DB names no release

Op = Literal["add", "replace", "remove"]


class CandidateError(ValueError):
    """The candidate is not a config_db.json fabricgen renders (not JSON, not tables of entries, other tables)."""


@dataclass(frozen=True)
class Change:
    """One JSON Patch operation, with the value it replaces or removes (for the readable diff)."""

    op: Op
    parts: tuple[str, ...]  # table, key, field: unescaped
    value: Any = None
    old: Any = None

    @property
    def path(self) -> str:
        """The JSON Pointer (RFC 6901: "~" and "/" escaped, as in MGMT_INTERFACE's ``eth0|192.0.2.11/24``)."""
        return str(jsonpointer.JsonPointer.from_parts(self.parts).path)

    def operation(self) -> dict[str, Any]:
        return {"op": self.op, "path": self.path} if self.op == "remove" else \
            {"op": self.op, "path": self.path, "value": self.value}

    def line(self) -> str:
        """``replace /PORT/Ethernet0/mtu: 9100 → 9216``, ``add /QUEUE/Ethernet0|3: {...}``, ``remove /X (was ...)``."""
        if self.op == "add":
            return f"add {self.path}: {_shown(self.value)}"
        if self.op == "replace":
            return f"replace {self.path}: {_shown(self.old)} → {_shown(self.value)}"
        return f"remove {self.path} (was {_shown(self.old)})"


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def parse_candidate(text: str) -> dict[str, dict[str, dict[str, Any]]]:
    """The rendered config_db.json: owned tables of entries, or CandidateError saying what is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CandidateError(f"the candidate is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CandidateError("the candidate must be a JSON object of config_db tables")
    foreign = sorted(set(data) - set(OWNED_TABLES))
    if foreign:
        raise CandidateError(f"the candidate holds tables fabricgen does not own: {', '.join(foreign)}")
    for table, entries in data.items():
        if not isinstance(entries, dict) or not entries or not all(isinstance(e, dict) for e in entries.values()):
            raise CandidateError(f"{table}: a config_db table is a non-empty object of entries (objects)")
    return data


def running_config(text: str) -> dict[str, Any]:
    """``show runningconfiguration all``: CONFIG_DB as JSON plus ``bgpraw`` (FRR's text), which is dropped."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"show runningconfiguration all did not print JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("show runningconfiguration all did not print a JSON object")
    data.pop("bgpraw", None)
    return data


# --- the patch --------------------------------------------------------------------------------------------

def owned_patch(running: Mapping[str, Any], candidate: Mapping[str, Mapping[str, Any]]) -> list[Change]:
    """The operations that make the switch's owned scope the candidate's, in table/key/field order."""
    changes: list[Change] = []
    for table in sorted(candidate):
        changes += _table_changes(table, running.get(table) or {}, candidate[table])
    return changes


def _table_changes(table: str, have: Mapping[str, Any], want: Mapping[str, Any]) -> list[Change]:
    if not have:
        return [Change("add", (table,), {key: _owned(table, entry) for key, entry in want.items()})]
    stale = _stale_keys(table, have, want)
    changes: list[Change] = []
    for key in sorted(set(want) | stale, key=natural):
        if key in stale:
            changes.append(Change("remove", (table, key), old=have[key]))
        elif key not in have:
            changes.append(Change("add", (table, key), _owned(table, want[key])))
        else:
            changes += _entry_changes(table, key, have[key], want[key])
    return changes


def _owned(table: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    fields = PARTIAL_FIELDS.get(table)
    return {name: value for name, value in entry.items() if fields is None or name in fields}


def _entry_changes(table: str, key: str, have: Mapping[str, Any], want: Mapping[str, Any]) -> list[Change]:
    partial = table in PARTIAL_FIELDS
    wanted = _owned(table, want)
    names = set(wanted) if partial else set(wanted) | set(have)
    changes = []
    for name in sorted(names, key=natural):
        if name not in have:
            changes.append(Change("add", (table, key, name), wanted[name]))
        elif name not in wanted:
            changes.append(Change("remove", (table, key, name), old=have[name]))
        elif have[name] != wanted[name]:
            changes.append(Change("replace", (table, key, name), wanted[name], have[name]))
    return changes


def _stale_keys(table: str, have: Mapping[str, Any], want: Mapping[str, Any]) -> set[str]:
    """Entries of the switch the candidate lacks that are nevertheless fabricgen's (module docstring)."""
    if table in ROW_FAMILIES:
        families = {key.split("|", 1)[0] for key in want}
        return {key for key in have if key not in want and key.split("|", 1)[0] in families}
    if table == "BUFFER_PG":
        wanted = _pg_sets(want)
        return {key for key in have if key not in want and _pgs(key)[1] & wanted.get(_pgs(key)[0], set())}
    return set()


def _pg_sets(rows: Iterable[str]) -> dict[str, set[int]]:
    sets: dict[str, set[int]] = {}
    for key in rows:
        port, pgs = _pgs(key)
        sets.setdefault(port, set()).update(pgs)
    return sets


def _pgs(key: str) -> tuple[str, set[int]]:
    """``Ethernet0|3-4`` → (``Ethernet0``, {3, 4}); a key of another shape holds no priority group."""
    match = re.fullmatch(r"(.+)\|([0-7])(?:-([0-7]))?", key)
    if match is None:
        return key, set()
    first = int(match.group(2))
    return match.group(1), set(range(first, int(match.group(3) or first) + 1))


def natural(text: str) -> list[Any]:
    """Ethernet8 before Ethernet224: digit runs compare as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def as_patch(changes: Iterable[Change]) -> list[dict[str, Any]]:
    return [change.operation() for change in changes]


def patched(running: Mapping[str, Any], changes: Iterable[Change]) -> dict[str, Any]:
    """The config GCU would end with (jsonpatch applies the operations to a copy, as GCU's simulate_patch does)."""
    result: dict[str, Any] = jsonpatch.JsonPatch(as_patch(changes)).apply(copy.deepcopy(dict(running)))
    return result


def readable(changes: Iterable[Change]) -> str:
    """One line per operation; "" when there is nothing to change."""
    return "".join(change.line() + "\n" for change in changes)


def restoring_patch(running: Mapping[str, Any], before: Mapping[str, Any],
                    forward: Iterable[Mapping[str, Any]]) -> list[Change]:
    """The operations that put back what ``before`` held at each path a commit's patch (``forward``) touched, and
    nothing else: whatever changed on the switch since, outside those paths, stays. Latest operation first."""
    changes: list[Change] = []
    seen: set[tuple[str, ...]] = set()
    for operation in reversed(list(forward)):
        parts = tuple(str(part) for part in jsonpointer.JsonPointer(str(operation["path"])).parts)
        if parts in seen:
            continue
        seen.add(parts)
        old, now = _at(before, parts), _at(running, parts)
        if old is _MISSING and now is not _MISSING:
            changes.append(Change("remove", parts, old=now))
        elif old is not _MISSING and now is _MISSING:
            changes.append(Change("add", parts, old))
        elif old != now:
            changes.append(Change("replace", parts, old, now))
    return changes


_MISSING: Any = object()


def _at(config: Mapping[str, Any], parts: tuple[str, ...]) -> Any:
    node: Any = config
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def within_field_rules(changes: list[Change], running: Mapping[str, Any]) -> list[str]:
    """What GCU's field rules refuse in ``changes`` and what lies outside the owned scope (a restoring patch)."""
    return _field_rule_problems(changes, _release(running)) + [
        f"{change.path}: outside fabricgen's owned scope" for change in changes if not in_owned_scope(change)]


# --- what GCU would refuse --------------------------------------------------------------------------------

def refusals(running: Mapping[str, Any], candidate: Mapping[str, Mapping[str, Any]],
             changes: list[Change]) -> list[str]:
    """Why the switch would refuse the patch (or why fabricgen must not send it); [] when it may be sent."""
    problems = _port_map_problems(running.get("PORT") or {}, candidate.get("PORT") or {})
    problems += _field_rule_problems(changes, _release(running))
    problems += [f"{change.path}: outside fabricgen's owned scope (a fabricgen bug; nothing was sent)"
                 for change in changes if not in_owned_scope(change)]
    empty = sorted(table for table, rows in patched(running, changes).items() if isinstance(rows, dict) and not rows)
    problems += [f"/{table}: the patch would leave the table empty, which CONFIG_DB cannot hold (GCU "
                 "EmptyTableError)" for table in empty]
    return problems


def _port_map_problems(have: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    problems = []
    for port in sorted(want, key=natural):
        if port not in have:
            problems.append(f"PORT|{port}: the switch has no such port (its port map and breakout are the "
                            "platform's; fabricgen does not create ports)")
            continue
        lanes, present = want[port].get("lanes"), have[port].get("lanes")
        if lanes is not None and present is not None and lanes != present:
            problems.append(f"PORT|{port}: lanes {present} on the switch, {lanes} in the inventory (fabricgen "
                            "never changes lanes: the inventory does not describe this switch)")
    return problems


def _field_rule_problems(changes: list[Change], release: str) -> list[str]:
    problems = [f"{change.path}: GCU refuses to remove it (gu_common.py validate_field_operation)"
                for change in changes if change.op == "remove" and change.path in ILLEGAL_REMOVALS]
    for change in changes:
        if change.parts[0] != "BUFFER_PROFILE":
            continue
        if len(change.parts) == 3 and not (change.op == "replace" and change.parts[2] in BUFFER_PROFILE_IN_PLACE):
            problems.append(f"{change.path}: GCU changes an existing buffer profile's dynamic_th and xoff only "
                            f"(gcu_field_operation_validators.conf.json); a {change.op} of "
                            f"{change.parts[2]} needs config reload")
        elif change.op == "add" and release in GCU_REFUSES_NEW_BUFFER_PROFILE:
            problems.append(f"{change.path}: GCU of SONiC {release} adds no buffer profile (allowed from 202511, "
                            "sonic-utilities #4087); it needs config reload")
    return problems


def port_capabilities(changes: Iterable[Change]) -> list[tuple[str, str]]:
    """The (port, STATE_DB field) pairs GCU's PORT validator reads for ``changes``: ``supported_fecs`` for a fec
    written, ``supported_speeds`` for a speed."""
    wanted = []
    for change in changes:
        if change.parts[0] != "PORT" or change.op == "remove" or len(change.parts) < 2:
            continue
        fields = [change.parts[2]] if len(change.parts) == 3 else list(change.value or {})
        wanted += [(change.parts[1], f"supported_{name}s") for name in ("fec", "speed") if name in fields]
    return sorted(set(wanted), key=lambda pair: (natural(pair[0]), pair[1]))


def unsupported_port_values(changes: Iterable[Change], supported: Mapping[tuple[str, str], str]) -> list[str]:
    """What port_config_update_validator refuses, given the switch's STATE_DB answers (``supported``: (port,
    ``supported_fecs``/``supported_speeds``) → the listed text, "" when the entry lists nothing)."""
    problems = []
    for change in changes:
        if change.parts[0] != "PORT" or change.op == "remove" or len(change.parts) < 2:
            continue
        fields = {change.parts[2]: change.value} if len(change.parts) == 3 else dict(change.value or {})
        for name in ("fec", "speed"):
            if name in fields and not _supported(name, str(fields[name]),
                                                 supported.get((change.parts[1], f"supported_{name}s"), "")):
                problems.append(f"PORT|{change.parts[1]}: {name} {fields[name]} is not among the port's supported "
                                f"{name}s in STATE_DB (GCU port_config_update_validator)")
    return problems


def _supported(field: str, value: str, listed: str) -> bool:
    if field == "fec":
        if not listed:
            return value.strip() in DEFAULT_SUPPORTED_FECS
        return listed != "N/A" and value.strip() in [item.strip() for item in listed.split(",")]
    speeds = [item.strip() for item in listed.split(",") if item.strip()]
    return not speeds or value in speeds


def _release(running: Mapping[str, Any]) -> str:
    """The release the switch's CONFIG_DB names (db_migrator's ``VERSIONS|DATABASE``, ``version_202411_02``)."""
    version = (running.get("VERSIONS") or {}).get("DATABASE", {}).get("VERSION", "")
    match = re.fullmatch(r"version_(\d{6})_\d+", str(version))
    return match.group(1) if match else DEFAULT_RELEASE


def in_owned_scope(change: Change) -> bool:
    """Whether an operation stays inside what fabricgen owns: an owned table, and in PORT/MGMT_PORT an owned
    field (an added entry holds owned fields only)."""
    table = change.parts[0]
    if table not in OWNED_TABLES:
        return False
    fields = PARTIAL_FIELDS.get(table)
    if fields is None:
        return True
    if len(change.parts) == 3:
        return change.parts[2] in fields
    if len(change.parts) == 2:
        return change.op == "add" and isinstance(change.value, dict) and set(change.value) <= fields
    return False


def outside_owned_scope(config: Mapping[str, Any], candidate: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``config`` minus what fabricgen owns for ``candidate``: what a push must leave exactly as it was (tests
    compare it before and after). Owned entries are dropped; a partly owned one keeps its other fields."""
    rest = copy.deepcopy(dict(config))
    for table, want in candidate.items():
        have = rest.get(table)
        if not isinstance(have, dict):
            continue
        for key in set(want) | _stale_keys(table, have, want):
            if key not in have:
                continue
            if table in PARTIAL_FIELDS:
                fields = PARTIAL_FIELDS[table]
                for name in list(have[key]):
                    if (name in want.get(key, {})) and (fields is None or name in fields):
                        del have[key][name]
            else:
                del have[key]
    return rest
