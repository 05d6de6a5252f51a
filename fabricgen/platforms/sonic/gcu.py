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

* field rules, per release (sonic-utilities at the release branch: ``gu_common.py`` ``validate_field_operation``,
  ``field_operation_validators.py``, ``gcu_field_operation_validators.conf.json``; ``RELEASE_RULES``), judged on
  the diff of the whole config as GCU judges it: removing ``/PFC_WD/GLOBAL`` or its ``POLL_INTERVAL`` is always
  illegal; PFC_WD, BUFFER_POOL, BUFFER_PROFILE and (to 202505) WRED_PROFILE accept only the fields and operations
  the release lists, for an ASIC it lists. tests/test_gcu_oracle.py checks this predictor against the real GCU
  of each release on every golden patch;
* a PORT ``fec`` or ``speed`` the port's STATE_DB entry does not list as supported (``port_config_update_validator``:
  ``supported_fecs``, default rs/fc/none/auto when it lists none; ``supported_speeds``), read from the switch
  (``port_capabilities``);
* a target config with an empty table (``generic_updater.py`` ``PatchApplier.apply``: EmptyTableError);
* a port the switch does not have, or whose lanes differ from the candidate's: ports come from the platform's
  port map (breakout), which fabricgen does not change, so the inventory does not describe this switch.

What the release does not let fabricgen change is planned around, not sent (``plan``/``for_release``): up to
202505 the lossless WRED profile is the switch's own one with fabricgen's green thresholds; a PFC watchdog on a
switch without a PFC_WD table is started with ``pfcwd start``. ``bounced_ports`` names the ports GCU's sorter takes
admin-down around the patch.

YANG validity is the switch's to judge: ``config apply-patch --dry-run`` runs the same validation without
changing anything (the driver's device-side check).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import jsonpatch
import jsonpointer

from fabricgen.platforms.sonic.capability import OWNED_TABLES

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
    return _field_rule_problems(changes, release(running), running) + [
        f"{change.path}: outside fabricgen's owned scope" for change in changes if not in_owned_scope(change)]


# --- what GCU would refuse --------------------------------------------------------------------------------

def refusals(running: Mapping[str, Any], candidate: Mapping[str, Mapping[str, Any]],
             changes: list[Change]) -> list[str]:
    """Why the switch would refuse the patch (or why fabricgen must not send it); [] when it may be sent."""
    problems = _port_map_problems(running.get("PORT") or {}, candidate.get("PORT") or {})
    problems += [f"{change.path}: outside fabricgen's owned scope (a fabricgen bug; nothing was sent)"
                 for change in changes if not in_owned_scope(change)]
    return problems + gcu_refusals(running, changes)


def gcu_refusals(running: Mapping[str, Any], changes: list[Change]) -> list[str]:
    """What the switch's GCU refuses before it looks at YANG: its field rules of the release and empty tables."""
    problems = _field_rule_problems(changes, release(running), running)
    empty = sorted(table for table, rows in patched(running, changes).items() if isinstance(rows, dict) and not rows)
    return problems + [f"/{table}: the patch would leave the table empty, which CONFIG_DB cannot hold (GCU "
                       "EmptyTableError)" for table in empty]


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


def _field_rule_problems(changes: list[Change], release: str, running: Mapping[str, Any] | None = None) -> list[str]:
    """What GCU's field rules refuse. GCU judges the diff of the whole config (``jsonpatch.JsonPatch.from_diff(old,
    target)``, gu_common.py ``validate_field_operation``), not the operations sent, so this does the same."""
    before = dict(running or {})
    try:
        diff = list(jsonpatch.JsonPatch.from_diff(before, patched(before, changes)))
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        return [f"the patch does not apply to the switch's config: {exc}"]
    problems = [f"{element['path']}: GCU refuses to remove it (gu_common.py validate_field_operation)"
                for element in diff if element["op"] == "remove" and element["path"] in ILLEGAL_REMOVALS]
    rules = field_rules(release)
    for element in diff:
        table = jsonpointer.JsonPointer(element["path"]).parts[0]
        if table in rules and not _rule_allows(rules[table], element):
            problems.append(f"{element['path']}: GCU of SONiC {release} refuses to {element['op']} it "
                            f"(gcu_field_operation_validators.conf.json, {table}: {rules[table].says})")
    return problems


@dataclass(frozen=True)
class TableRule:
    """One table's entry in GCU's gcu_field_operation_validators.conf.json (+ field_operation_validators.py) of a
    release, for an ASIC the release lists (an unknown ASIC is refused every change to these tables)."""

    scenarios: tuple[tuple[frozenset[str], frozenset[str]], ...]  # (cleaned fields, operations)
    exact: bool  # rdma_config_update_validator: exact field match; else the last path element must match
    drop_ports: bool  # path elements with a digit (Ethernet0) are dropped before matching
    whole_entry_ops: frozenset[str] = frozenset()  # 202511 buffer_profile_config_update_validator: /T/<name>
    says: str = ""


def _scenario(fields: Iterable[str], operations: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(fields), frozenset(operations)


_PFC_WD = ("restoration_time", "detection_time", "action", "global/poll_interval", "")
_POOL_SIZES = ("ingress_lossless_pool/xoff", "ingress_lossless_pool/size", "egress_lossy_pool/size")
_GREEN = ("green_min_threshold", "green_max_threshold", "green_drop_probability")
_RULES_202411 = {
    "PFC_WD": TableRule((_scenario(_PFC_WD, ("add", "replace", "remove")),), True, True,
                        says="per-port watchdog fields and GLOBAL/POLL_INTERVAL"),
    "BUFFER_POOL": TableRule((_scenario(_POOL_SIZES, ("replace",)),), True, True,
                             says="only replace of the lossless pool's size/xoff and egress_lossy_pool/size"),
    "BUFFER_PROFILE": TableRule((_scenario(("dynamic_th",), ("replace",)), _scenario(("xoff",), ("replace",))),
                                True, True, says="only replace of an existing profile's dynamic_th or xoff"),
    "WRED_PROFILE": TableRule((_scenario((f"azure_lossless/{name}" for name in _GREEN), ("replace",)),), True, True,
                              says="only replace of AZURE_LOSSLESS's green_min/max_threshold and "
                                   "green_drop_probability"),
}
_RULES_202505 = {**_RULES_202411, "WRED_PROFILE": TableRule(
    (_scenario(_GREEN, ("replace",)),), False, False,
    says="only replace of an existing profile's green_min/max_threshold and green_drop_probability")}
_RULES_202511 = {
    "PFC_WD": TableRule((_scenario((*_PFC_WD, "pfc_stat_history"), ("add", "replace", "remove")),), True, True,
                        says="per-port watchdog fields and GLOBAL/POLL_INTERVAL"),
    "BUFFER_POOL": TableRule((), True, True, says="no change at all"),
    "BUFFER_PROFILE": TableRule((_scenario(("dynamic_th",), ("replace",)), _scenario(("xoff",), ("replace",))),
                                False, False, frozenset({"add", "replace", "remove"}),
                                says="whole profiles, or replace of dynamic_th or xoff"),
}
RELEASE_RULES: Mapping[str, Mapping[str, TableRule]] = {"202411": _RULES_202411, "202505": _RULES_202505,
                                                        "202511": _RULES_202511}


def field_rules(release: str) -> Mapping[str, TableRule]:
    """GCU's field rules of ``release``; a later release than fabricgen knows gets the latest known ones."""
    known = sorted(RELEASE_RULES)
    older = [name for name in known if name <= release]
    return RELEASE_RULES[older[-1] if older else known[0]]


def _rule_allows(rule: TableRule, element: Mapping[str, Any]) -> bool:
    """field_operation_validators.py rdma_config_update_validator(_common) on one element of GCU's diff."""
    parts = jsonpointer.JsonPointer(element["path"]).parts[1:]
    if len(parts) == 1 and rule.whole_entry_ops:
        return element["op"] in rule.whole_entry_ops
    kept = [part for part in parts if not (rule.drop_ports and any(char.isdigit() for char in part))]
    field = "/".join(kept).lower()
    value = element.get("value")
    fields = [f"{field}/{key}" if field else key for key in value] if isinstance(value, dict) else [field]
    for cleaned in fields:
        matches = [operations for names, operations in rule.scenarios
                   if (cleaned in names if rule.exact else cleaned.split("/")[-1] in names)]
        if not matches or element["op"] not in matches[0]:
            return False
    return True


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


def release(running: Mapping[str, Any]) -> str:
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


# --- the push a release accepts -------------------------------------------------------------------------------

# patch_sorter.py RequiredValueIdentifier: a change under these (table, key shape) needs PORT|<port> admin_status
# down, so GCU's sorter takes an up port down before it and up again after it.
PORT_BOUNCING = {"BUFFER_PG": True, "BUFFER_PORT_EGRESS_PROFILE_LIST": False, "BUFFER_PORT_INGRESS_PROFILE_LIST": False,
                 "BUFFER_QUEUE": True, "PORT_QOS_MAP": False, "QUEUE": True}  # True: keyed "<port>|..."


@dataclass(frozen=True)
class Plan:
    """What fabricgen sends a SONiC switch of the release it runs, and what that does to it."""

    release: str
    changes: list[Change]  # the JSON Patch for config apply-patch
    watchdog: list[str]  # pfcwd commands after the patch: PFC watchdog on a switch without a PFC_WD table
    not_owned: list[str]  # what this release's GCU does not let fabricgen change (needs config reload)
    bounced: list[str]  # ports GCU's sorter takes admin-down and up again around the patch
    touched: list[str] = dataclasses.field(default_factory=list)  # ports the patch names (its sort's size)

    def lines(self) -> str:
        """The diff: one line per operation and pfcwd command, then what stays as it is and what it bounces."""
        if not self.changes and not self.watchdog:
            return ""
        text = readable(self.changes) + "".join(command + "\n" for command in self.watchdog)
        text += "".join(f"! not changed on SONiC {self.release}: {note}\n" for note in self.not_owned)
        if self.bounced:
            text += (f"! disruptive: GCU takes {', '.join(self.bounced)} admin-down and up again around this change "
                     "(sonic-utilities patch_sorter.py: QUEUE, PORT_QOS_MAP, BUFFER_PG changes need the port down)\n")
        return text


def plan(running: Mapping[str, Any], candidate: Mapping[str, Mapping[str, Any]]) -> Plan:
    """The candidate as the switch's release lets fabricgen apply it (see ``for_release``), its patch, and the
    ports the patch bounces."""
    name = release(running)
    adapted, watchdog, notes = for_release(running, candidate)
    changes = owned_patch(running, adapted)
    return Plan(name, changes, watchdog, notes, bounced_ports(running, changes), touched_ports(running, changes))


def for_release(running: Mapping[str, Any], candidate: Mapping[str, Mapping[str, Any]]
                ) -> tuple[dict[str, dict[str, Any]], list[str], list[str]]:
    """The candidate narrowed to what the switch's GCU accepts, the pfcwd commands that replace a PFC_WD table
    the switch lacks, and what stays the switch's.

    * Up to 202505 GCU changes a WRED profile only by ``replace`` of an existing profile's green threshold and
      drop-probability fields (202411: of ``AZURE_LOSSLESS`` only). fabricgen's lossless profile then becomes the
      switch's own profile that its lossless queues already use: its green fields are fabricgen's, its other fields
      (ecn mode, enables, yellow/red) stay as the switch has them and are listed.
    * GCU refuses to add PFC_WD when the switch has no such table (its diff is ``add /PFC_WD``, whose keys are no
      field the rules list), on every release: SONiC's documented way is ``pfcwd start`` (sonic-utilities
      pfcwd/main.py), run after the patch, once the ports have ``pfc_enable``.
    """
    adapted = copy.deepcopy({table: dict(rows) for table, rows in candidate.items()})
    notes: list[str] = []
    rule = field_rules(release(running)).get("WRED_PROFILE")
    if rule is not None and "WRED_PROFILE" in adapted:
        notes += _existing_wred_profiles(running, adapted, rule)
    watchdog: list[str] = []
    if "PFC_WD" in adapted and not running.get("PFC_WD"):
        watchdog = pfcwd_commands(adapted.pop("PFC_WD"))
    return adapted, watchdog, notes


def _existing_wred_profiles(running: Mapping[str, Any], adapted: dict[str, dict[str, Any]],
                            rule: TableRule) -> list[str]:
    have = running.get("WRED_PROFILE") or {}
    notes: list[str] = []
    for wanted in sorted(adapted["WRED_PROFILE"]):
        target = wanted if wanted in have else _queues_profile(running, adapted.get("QUEUE", {}), wanted)
        if target is None or not _rule_allows(rule, {"op": "replace", "path": f"/WRED_PROFILE/{target}/"
                                                                             f"{_GREEN[0]}"}):
            continue  # nothing the release lets fabricgen reuse: the patch goes as rendered and GCU says why not
        entry = adapted["WRED_PROFILE"].pop(wanted)
        kept = dict(have[target])
        kept.update({name: entry[name] for name in _GREEN if name in entry})
        notes += [f"WRED_PROFILE|{target} {name} stays {have[target].get(name, '(unset)')} (fabricgen's "
                  f"{wanted}: {entry.get(name, '(unset)')})" for name in sorted(set(entry) | set(have[target]))
                  if name not in _GREEN and entry.get(name) != have[target].get(name)]
        adapted["WRED_PROFILE"][target] = kept
        for row in adapted.get("QUEUE", {}).values():
            if row.get("wred_profile") == wanted:
                row["wred_profile"] = target
    return notes


def _queues_profile(running: Mapping[str, Any], queues: Mapping[str, Any], wanted: str) -> str | None:
    """The WRED profile the switch's own rows of the candidate's ``wanted`` queues use (its lossless profile)."""
    have = running.get("QUEUE") or {}
    found = sorted({have[key]["wred_profile"] for key, row in queues.items()
                    if row.get("wred_profile") == wanted and "wred_profile" in have.get(key, {})})
    return found[0] if len(found) == 1 and found[0] in (running.get("WRED_PROFILE") or {}) else None


def pfcwd_commands(table: Mapping[str, Any]) -> list[str]:
    """``pfcwd start`` per group of ports with the same settings, then ``pfcwd interval`` (pfcwd/main.py)."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for port, entry in table.items():
        if port != "GLOBAL":
            key = (str(entry.get("action", "drop")), str(entry["restoration_time"]), str(entry["detection_time"]))
            groups.setdefault(key, []).append(port)
    commands = [f"pfcwd start --action {action} --restoration-time {restore} {' '.join(sorted(ports, key=natural))} "
                f"{detect}" for (action, restore, detect), ports in sorted(groups.items())]
    interval = (table.get("GLOBAL") or {}).get("POLL_INTERVAL")
    return commands + ([f"pfcwd interval {interval}"] if interval else [])


def bounced_ports(running: Mapping[str, Any], changes: Iterable[Change]) -> list[str]:
    """The up ports whose QUEUE, PORT_QOS_MAP, BUFFER_PG (… PORT_BOUNCING) rows the patch changes: GCU's sorter
    puts ``admin_status: down`` before those changes and ``up`` after them (RequiredValueIdentifier)."""
    ports = running.get("PORT") or {}
    touched: set[str] = set()
    for change in changes:
        table = change.parts[0]
        if table not in PORT_BOUNCING:
            continue
        keys = [change.parts[1]] if len(change.parts) > 1 else list(change.value or {})
        touched.update(key.split("|", 1)[0] if PORT_BOUNCING[table] else key for key in keys)
    return sorted((port for port in touched if ports.get(port, {}).get("admin_status") == "up"), key=natural)


def bounced_in_dry_run(output: str) -> list[str] | None:
    """The ports ``config apply-patch --dry-run`` says it would take admin-down (GCU's DryRun logger prints each
    sorted change: ``** DryRun: Would apply [{"op": "replace", "path": "/PORT/Ethernet0/admin_status", "value":
    "down"}]``); None when it printed no sorted changes at all (nothing to tell)."""
    lines = [line for line in output.splitlines() if "Would apply" in line]
    if not lines:
        return None
    ports = set()
    for line in lines:
        for match in re.finditer(r'"path": "/PORT/([^/"]+)/admin_status", "value": "down"', line):
            ports.add(match.group(1))
    return sorted(ports, key=natural)


def bounced_between(base: str, head: str) -> list[str]:
    """The ports a switch holding the ``base`` render would bounce when ``head`` is pushed to it (``bounced_ports``
    of the owned patch from one to the other): ``fabricgen plan``'s forecast, before any switch is asked."""
    running = json.loads(base)
    return bounced_ports(running, owned_patch(running, parse_candidate(head)))


def bounced_by_restore(running: Mapping[str, Any], before: Mapping[str, Any],
                       forward: Iterable[Mapping[str, Any]] | None) -> list[str]:
    """The ports putting ``before`` back bounces: at the paths a commit's patch (``forward``) touched
    (``restoring_patch``, a confirmed commit's revert), or anywhere (None: ``config rollback`` to the checkpoint
    taken just before it, whose patch GCU computes from the whole config)."""
    if forward is not None:
        return bounced_ports(running, restoring_patch(running, before, forward))
    changes = []
    for table in PORT_BOUNCING:
        now, then = running.get(table) or {}, before.get(table) or {}
        changes += [Change("replace", (table, key), then.get(key), now.get(key))
                    for key in set(now) | set(then) if now.get(key) != then.get(key)]
    return bounced_ports(running, changes)


def touched_ports(running: Mapping[str, Any], changes: Iterable[Change]) -> list[str]:
    """The switch's ports the patch names anywhere (a key ``Ethernet0`` or ``Ethernet0|3``, a CABLE_LENGTH field):
    what GCU's sorter time grows with (bench/gcu_sorter.py: about ports x operations, docs/testing.md)."""
    ports = running.get("PORT") or {}
    names: set[str] = set()
    for change in changes:
        names.update(change.parts[1:])
        values = [change.value] if isinstance(change.value, dict) else []
        for _ in range(2):  # an entry's fields, and a whole table's entries and their fields
            names.update(key for value in values for key in value)
            values = [item for value in values for item in value.values() if isinstance(item, dict)]
    return sorted({name.split("|", 1)[0] for name in names} & set(ports), key=natural)
