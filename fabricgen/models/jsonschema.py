"""JSON Schema for editors (YAML language server), generated from the pydantic models — never by hand.

The schemas accept what the loader accepts, file by file; tests/test_json_schema.py checks it on every bundled and
test input. What a file alone cannot show is left to the loader: a key a host inherits from groups.yaml or
defaults.yaml (so no key of a host or group is required), cross-references (a `peer`, a class name in `rdma`),
and the checks across keys (DSCP coverage, DWRR sum).

- ``fabricgen schema intent``: an intent file. Under ``profile:`` the ``qos`` and ``rdma`` sections are
  overrides of the profile's (any key may be left out, ``null`` deletes a mapping the profile has).
- ``fabricgen schema inventory``: hosts.yaml and groups.yaml alike (both map a name to a Nornir host or group,
  with the same keys).
- ``fabricgen schema defaults``: defaults.yaml (one entry of the same keys, without ``groups``).
"""

from __future__ import annotations

import copy
from typing import Any

from fabricgen.models.intent import PROFILES, Intent
from fabricgen.models.inventory import Device, DeviceData

NAMESPACE = "fabricgen"  # fabricgen.load.fabric.NAMESPACE: the key under `data` that may hold fabricgen's keys
_OVERRIDDEN = ("qos", "rdma")  # the intent sections a profile fills in


def intent_schema() -> dict[str, Any]:
    schema = Intent.model_json_schema(by_alias=True)
    schema["$id"] = "https://fabricgen.dev/schema/intent.json"
    schema["title"] = "fabricgen intent"
    definitions = schema["$defs"]
    # load.expand_profile reads a single DSCP as a list of one (`dscp: 26`); the model's own type shows the list.
    definitions["QosClass"]["properties"]["dscp"]["anyOf"].append({"type": "integer", "minimum": 0, "maximum": 63})
    _profile_overrides(schema)
    return schema


def _profile_overrides(schema: dict[str, Any]) -> None:
    """Without a profile, `qos` and `rdma` are required and complete; with one, each is merged over the profile's
    (load.expand_profile), so they are overrides: the same keys, none required, a mapping may be `null`."""
    definitions = schema["$defs"]
    complete = {key: schema["properties"][key] for key in _OVERRIDDEN}
    overrides = {key: _override(definitions, complete[key]["$ref"].rsplit("/", 1)[1]) for key in _OVERRIDDEN}
    for key in _OVERRIDDEN:
        schema["properties"][key] = {"description": complete[key].get("description", f"see $defs ({key})")}
    schema["required"] = [key for key in schema["required"] if key not in _OVERRIDDEN]
    schema["if"] = {"required": ["profile"], "properties": {"profile": {"enum": sorted(PROFILES)}}}
    schema["then"] = {"properties": {key: {"$ref": f"#/$defs/{name}"} for key, name in overrides.items()}}
    schema["else"] = {"required": list(_OVERRIDDEN), "properties": complete}


def _override(definitions: dict[str, Any], name: str) -> str:
    """``<name>Override``: definition ``name`` (and every definition it refers to) with no key required and each
    mapping-valued key also `null`; returns its name."""
    override = f"{name}Override"
    if override in definitions:
        return override
    definition = copy.deepcopy(definitions[name])
    definitions[override] = definition
    definition.pop("required", None)
    for key, prop in list(definition.get("properties", {}).items()):
        definition["properties"][key] = _override_property(definitions, prop)
    return override


def _override_property(definitions: dict[str, Any], prop: dict[str, Any]) -> dict[str, Any]:
    if "patternProperties" in prop:  # a mapping of name → definition (qos.classes)
        return {**prop, "patternProperties": {pattern: _override_property(definitions, value)
                                              for pattern, value in prop["patternProperties"].items()}}
    ref = _object_ref(prop)
    if ref is None:
        return prop
    described = {key: value for key, value in prop.items() if key in ("description", "title")}
    return {**described, "anyOf": [{"$ref": f"#/$defs/{_override(definitions, ref)}"}, {"type": "null"}]}


def _object_ref(prop: dict[str, Any]) -> str | None:
    """The definition a property refers to (directly, or as the non-null member of an optional), if any."""
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[1]
    refs = [member["$ref"] for member in prop.get("anyOf", []) if "$ref" in member]
    return str(refs[0]).rsplit("/", 1)[1] if len(refs) == 1 else None


# --- inventory ------------------------------------------------------------------------------------------------

def inventory_schema() -> dict[str, Any]:
    """hosts.yaml or groups.yaml: a mapping of name → Nornir host (or group) with fabricgen's `data`."""
    entry, definitions = _entry_schema()
    definitions["NornirEntry"] = entry
    # Another automation's host: fabricgen skips it, whatever else it holds (the loader checks only its own).
    definitions["OtherEntry"] = {"type": "object", "description": "a host or group that is not fabricgen's",
                                 "properties": {"data": _not_fabricgens()}}
    return {"$id": "https://fabricgen.dev/schema/inventory-hosts.json",
            "title": "fabricgen inventory: hosts.yaml or groups.yaml", "type": "object",
            "additionalProperties": {"anyOf": [{"$ref": "#/$defs/NornirEntry"}, {"$ref": "#/$defs/OtherEntry"},
                                               {"type": "null"}]},
            "$defs": definitions}


def defaults_schema() -> dict[str, Any]:
    """defaults.yaml: the keys every host inherits last (Nornir's defaults have no `groups`)."""
    entry, definitions = _entry_schema()
    entry["properties"].pop("groups")
    return {**entry, "$id": "https://fabricgen.dev/schema/inventory-defaults.json",
            "title": "fabricgen inventory: defaults.yaml", "type": ["object", "null"], "$defs": definitions}


def _entry_schema() -> tuple[dict[str, Any], dict[str, Any]]:
    """One host, group or defaults entry, and the definitions it refers to."""
    entry = Device.model_json_schema(by_alias=True)
    definitions: dict[str, Any] = entry.pop("$defs", {})
    entry["properties"].pop("name", None)
    # Any key may come from groups.yaml or defaults.yaml (Nornir inheritance), so none is required here.
    entry.pop("required", None)
    definitions["DeviceData"].pop("required", None)
    entry["properties"]["data"] = _data_layouts()
    return entry, definitions


def _data_layouts() -> dict[str, Any]:
    """`data` in either layout (load._HostData), or another automation's data on a host that is not fabricgen's."""
    fabricgen_keys = sorted(DeviceData.model_fields)
    namespace = {
        "type": "object", "required": [NAMESPACE],
        "properties": {NAMESPACE: {
            "description": "fabricgen's keys, in an inventory other automation shares (the keys beside it are "
                           "theirs, and ignored); null or false: a host fabricgen does not configure",
            "anyOf": [{"$ref": "#/$defs/DeviceData"}, {"type": "null"}, {"const": False}]}},
        # Keys of fabricgen's beside the namespace would be ambiguous: the loader refuses them on its hosts.
        "if": {"properties": {NAMESPACE: {"type": "object"}}},
        "then": {"properties": dict.fromkeys(fabricgen_keys, False)},
    }
    return {"description": "Nornir's data. fabricgen's keys either directly here (flat) or under "
                           f"`{NAMESPACE}:` (see {NAMESPACE}); a host with neither is skipped with a note",
            "anyOf": [{"$ref": "#/$defs/DeviceData"}, namespace, _not_fabricgens()]}


def _not_fabricgens() -> dict[str, Any]:
    """`data` of a host that is not fabricgen's: no key of fabricgen's, or `fabricgen: null` (or false)."""
    keys = [*sorted(DeviceData.model_fields), NAMESPACE]
    return {"anyOf": [{"type": "null"},
                      {"type": "object", "not": {"anyOf": [{"required": [key]} for key in keys]}},
                      {"type": "object", "required": [NAMESPACE], "properties": {NAMESPACE: {"enum": [None, False]}}}]}
