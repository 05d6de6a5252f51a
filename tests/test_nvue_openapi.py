"""nvue.yaml and nvue.commands against NVIDIA's NVUE object model for the release the renderer targets.

The model is NVIDIA's OpenAPI document for Cumulus Linux 5.15 (``openapi 5.15.0.json``, spec version 1.11.0.89).
CI reaches no NVIDIA site, so it is read through the ``nvueschema`` package (test extra, from PyPI): Pydantic
models generated from that document, one class per schema object, each naming its NVUE path. Two checks use them:

* the JSON Schema of the root (``NvueConfig``, NVIDIA's ``cue-patch-schema-root-root``: what ``nv config patch``
  takes) with every object closed, as NVIDIA's ``x-unevaluatedProperties: false`` closes it — the generated
  models ignore unknown keys, the switch does not; validated with ``jsonschema``, $refs resolved;
* the Pydantic model itself, strictly: it also holds the string limits the JSON Schema leaves out (a port
  ``description`` is 1-255 characters).

``nv set`` lines are walked through the same schema word by word, as the CLI does (``command_tree``): an
attribute enters its object, the word after a collection is an id (``0,1,2`` or ``swp1-4`` is several), the
word after a leaf is its value, and a path that ends on an object or an id sets it to ``{}``. The patch the
commands make must be valid too, and equal to nvue.yaml's.
"""

from __future__ import annotations

import copy
import functools
import importlib
import re
import shlex
from collections.abc import Iterator, Sequence
from typing import Any, cast

import pydantic
import pytest
import yaml
from hypothesis import given, settings
from jsonschema import Draft202012Validator
from test_nvue import BROWNFIELD_COMMANDS, BROWNFIELD_YAML, generated_fabric, mixed, nvue_intents

from fabricgen.api import render_device
from fabricgen.models.device import DeviceModel
from fabricgen.platforms.nvue.capability import COMMANDS, RELEASE, YAML_FILE

from conftest import ROOT

Schema = dict[str, Any]
# The lab's NVUE target validates against the same closed schema (one function, imported as the lab does).
NVUE_TARGET = importlib.import_module("targets.nvue")


# --- NVIDIA's object model ----------------------------------------------------------------------------------

@functools.cache
def object_model(version: str) -> type[pydantic.BaseModel]:
    """The root of the NVUE object model of a Cumulus Linux release (``5.15`` → ``nvueschema.models.v5_15``)."""
    module = importlib.import_module(f"nvueschema.models.v{version.replace('.', '_')}")
    return cast(type[pydantic.BaseModel], module.NvueConfig)


@functools.cache
def root_schema(version: str) -> Schema:
    """The model's JSON Schema, keyed by NVUE's words (the aliases), every object closed, no value null."""
    return cast(Schema, NVUE_TARGET.closed_schema(object_model(version).model_json_schema(by_alias=True)))




@functools.cache
def validator(version: str) -> Draft202012Validator:
    schema = root_schema(version)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def problems(tree: Any, version: str = RELEASE.version) -> list[str]:
    """Where ``tree`` (the body of a ``- set:`` block) leaves NVUE's model, one line each; [] when it fits."""
    found = [f"/{'/'.join(map(str, error.absolute_path))}: {error.message}"
             for error in sorted(validator(version).iter_errors(tree), key=lambda e: list(map(str, e.path)))]
    try:
        object_model(version).model_validate(tree, strict=True)
    except pydantic.ValidationError as exc:
        found += [f"/{'/'.join(map(str, error['loc']))}: {error['msg']}" for error in exc.errors()]
    return found


class NvueYamlLoader(yaml.SafeLoader):
    """YAML with ``on``/``off``/``yes``/``no`` read as the words NVUE's schema takes (NVIDIA's examples of
    releases before 5.15 write ``enable: on`` unquoted), only ``true``/``false`` as booleans (YAML 1.2)."""


NvueYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
NvueYamlLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                     list("tTfF"))


def set_body(text: str) -> Any:
    """The ``set`` block of an NVUE YAML file (a list of ``- header:``/``- set:`` blocks)."""
    blocks = yaml.load(text, Loader=NvueYamlLoader)  # a SafeLoader: no object construction
    assert isinstance(blocks, list), "NVUE YAML is a list of blocks"
    bodies = [block["set"] for block in blocks if "set" in block]
    assert len(bodies) == 1, "one `- set:` block"
    return bodies[0]


# --- nv set lines, walked through the model -----------------------------------------------------------------

class CommandError(ValueError):
    """A command whose words do not follow NVUE's model."""


def _resolve(schema: Schema, version: str) -> Schema:
    """``schema`` past its $ref (root_schema has no null choices left to look past)."""
    while "$ref" in schema:
        schema = root_schema(version)["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _is_object(schema: Schema) -> bool:
    return schema.get("type") == "object" or "properties" in schema


def _value(leaf: Schema, word: str) -> str | int:
    """A leaf's value as NVUE reads the word: an integer where the leaf takes one, else the text."""
    takes_int = any(branch.get("type") == "integer" for branch in leaf.get("anyOf", [leaf]))
    return int(word) if takes_int and re.fullmatch(r"-?\d+", word) else word


def _ids(word: str) -> list[str]:
    """The ids of one command word: ``0,1,7`` and ranges ``swp1-3``, ``swp1-2,10-11`` (the prefix carries)."""
    ids: list[str] = []
    prefix = ""
    for part in word.split(","):
        match = re.fullmatch(r"([A-Za-z]*)(\d+)-(\d+)", part) or re.fullmatch(r"([A-Za-z]*)(\d+)()", part)
        if match is None:
            ids.append(part)
            continue
        prefix = match.group(1) or prefix
        first = int(match.group(2))
        ids += [f"{prefix}{n}" for n in range(first, int(match.group(3) or first) + 1)]
    return ids


def _walk(schema: Schema, words: Sequence[str], where: str, version: str) -> Any:
    node = _resolve(schema, version)  # an object: _walk is called on leaves' parents only
    if not words:
        return {}  # `nv set interface swp1 link state up`, `nv set qos pfc P switch-priority 3`
    word, rest = words[0], words[1:]
    if "properties" in node:  # an instance: the word is one of its attributes
        if word not in node["properties"]:
            raise CommandError(f"{where}: no attribute {word!r} (one of: {', '.join(sorted(node['properties']))})")
        child = _resolve(node["properties"][word], version)
        if _is_object(child):
            return {word: _walk(child, rest, f"{where} {word}", version)}
        if not rest:
            raise CommandError(f"{where} {word}: a leaf needs a value")
        if len(rest) > 1:
            raise CommandError(f"{where} {word}: a leaf takes one value, found {list(rest)}")
        return {word: _value(child, rest[0])}
    # a collection: the word names ids; an id without a schema of its own (`true`) is presence only
    item = node.get("additionalProperties")
    entry = item if isinstance(item, dict) else {"type": "object", "properties": {}}
    return {one: _walk(entry, rest, f"{where} {one}", version) for one in _ids(word)}


def _merge(into: dict[str, Any], patch: dict[str, Any], where: str) -> None:
    for key, value in patch.items():
        here = into.get(key)
        if isinstance(here, dict) and isinstance(value, dict):
            _merge(here, value, f"{where} {key}")
        elif key in into and here != value:
            raise CommandError(f"{where} {key}: set to {here!r}, then to {value!r}")
        else:
            into[key] = value


def set_commands(text: str) -> Iterator[list[str]]:
    """The words after ``nv set`` of each ``nv set`` line."""
    for line in text.splitlines():
        if line.startswith("nv set "):
            yield shlex.split(line)[2:]


def command_tree(text: str, version: str = RELEASE.version) -> dict[str, Any]:
    """The patch the ``nv set`` lines of ``text`` make, each walked through the model (CommandError if one
    does not follow it, or two set one leaf to different values)."""
    tree: dict[str, Any] = {}
    for words in set_commands(text):
        _merge(tree, _walk(root_schema(version), words, "nv set", version), "nv set")
    return tree


# --- what is checked: every NVUE render of the bundled examples and of test_nvue's variants -----------------

def _variants(leaf: DeviceModel) -> dict[str, DeviceModel]:
    """test_nvue's variants of the mixed example's NVUE leaf: IPv6 management, an OOB-role switch with access
    VLANs and no QoS, a port shut down."""
    assert leaf.mgmt is not None
    v6 = leaf.mgmt.model_copy(update={"address": "2001:db8::13/64", "gateway": "2001:db8::1"})
    oob = [p.model_copy(update={"role": "oob-access", "access_vlan": 100, "pfc_priorities": [], "lossless": False})
           if p.name.startswith("swp") else p for p in leaf.ports]
    down = [p.model_copy(update={"admin_up": False}) if p.name == "swp64" else p for p in leaf.ports]
    return {"ipv6-mgmt": leaf.model_copy(update={"mgmt": v6}),
            "oob-access": leaf.model_copy(update={"role": "oob", "qos": None, "ports": oob}),
            "port-down": leaf.model_copy(update={"ports": down})}


@functools.cache
def rendered() -> dict[str, dict[str, str]]:
    """Every NVUE device of intent/mixed.yaml and intent/minimal.yaml over inventory/mixed, and the variants."""
    found: dict[str, dict[str, str]] = {}
    for intent in ("mixed", "minimal"):
        for name, device in mixed(ROOT / "intent" / f"{intent}.yaml").devices.items():
            if device.platform == "nvue":
                found[f"{intent}:{name}"] = render_device(device)
    leaf = mixed().devices["leaf3"]
    found |= {f"mixed:leaf3:{kind}": render_device(device) for kind, device in _variants(leaf).items()}
    return found


def test_the_examples_render_nvue() -> None:
    assert sorted(rendered()) == ["minimal:leaf3", "mixed:leaf3", "mixed:leaf3:ipv6-mgmt", "mixed:leaf3:oob-access",
                                  "mixed:leaf3:port-down"]


@pytest.mark.parametrize("case", sorted(rendered()))
def test_yaml_fits_nvidias_object_model(case: str) -> None:
    assert problems(set_body(rendered()[case][YAML_FILE])) == []


@pytest.mark.parametrize("case", sorted(rendered()))
def test_commands_follow_the_model_and_make_the_yaml(case: str) -> None:
    files = rendered()[case]
    tree = command_tree(files[COMMANDS])
    assert problems(tree) == []
    assert tree == set_body(files[YAML_FILE])


def test_link_state_is_an_object_keyed_by_the_state() -> None:
    down = rendered()["mixed:leaf3:port-down"]
    interfaces = set_body(down[YAML_FILE])["interface"]
    assert interfaces["swp64"]["link"]["state"] == {"down": {}} and interfaces["swp63"]["link"]["state"] == {"up": {}}
    assert "nv set interface swp64 link state down\n" in down[COMMANDS]


@settings(max_examples=10, deadline=None, derandomize=True)
@given(raw=nvue_intents())
def test_generated_intents_fit_the_model(raw: dict[str, Any]) -> None:
    for device in generated_fabric(raw).devices.values():
        if device.platform == "nvue":
            files = render_device(device)
            body = set_body(files[YAML_FILE])
            assert problems(body) == [] and command_tree(files[COMMANDS]) == body


# --- test_nvue's hand-written configs are real NVUE too -----------------------------------------------------

def test_brownfield_fixtures_fit_their_releases() -> None:
    """BROWNFIELD_YAML is a 5.14 switch's file (its header says so); BROWNFIELD_COMMANDS uses 5.15 syntax
    (``router bgp state enabled``, ``qos roce state enabled``)."""
    assert problems(set_body(BROWNFIELD_YAML), "5.14") == []
    assert problems(command_tree(BROWNFIELD_COMMANDS, "5.15"), "5.15") == []


# --- the checks fail on what NVUE refuses ------------------------------------------------------------------

def test_the_old_link_state_value_is_refused() -> None:
    """``link: {state: up}``, the shape fabricgen wrote before: NVUE's ``link state`` is an object."""
    body = copy.deepcopy(set_body(rendered()["mixed:leaf3"][YAML_FILE]))
    body["interface"]["swp1"]["link"]["state"] = "up"
    found = problems(body)
    assert found and all(line.startswith("/interface/swp1/link/state: ") for line in found)


@pytest.mark.parametrize(("path", "value", "where"), [
    (("qos", "pfc", "pfc-sp3-3m", "tx"), "enabled", "/qos/pfc/pfc-sp3-3m/tx: "),  # PFC takes enable/disable
    (("interface", "swp1", "link", "mtu"), 9217, "/interface/swp1/link/mtu: "),
    (("interface", "swp1", "link", "mtu"), "9100", "/interface/swp1/link/mtu: "),  # an integer, not text
    (("interface", "swp1", "link", "speeds"), "400G", "/interface/swp1/link: "),  # no such attribute
    (("qos", "pfc-watchdog", "polling-interval"), 50, "/qos/pfc-watchdog/polling-interval: "),
    (("interface", "swp1", "description"), "x" * 256, "/interface/swp1/description: "),
])
def test_values_the_model_refuses(path: tuple[str, ...], value: Any, where: str) -> None:
    body = copy.deepcopy(set_body(rendered()["mixed:leaf3"][YAML_FILE]))
    node = body
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    found = problems(body)
    assert found and all(line.startswith(where) for line in found), found


@pytest.mark.parametrize(("command", "message"), [
    ("interface swp1 link state enabled", "nv set interface swp1 link state: no attribute 'enabled'"),
    ("interface swp1 link mtu", "nv set interface swp1 link mtu: a leaf needs a value"),
    ("interface swp1 qos pfc-watchdog state enable now", "a leaf takes one value, found ['enable', 'now']"),
    ("qos pfc p1 switch-priority 3 tx", "nv set qos pfc p1 switch-priority 3: no attribute 'tx'"),
])
def test_commands_off_the_model_are_refused(command: str, message: str) -> None:
    with pytest.raises(CommandError, match=re.escape(message)):
        command_tree(f"nv set {command}\n")


def test_command_values_are_checked_as_the_yaml_is() -> None:
    tree = command_tree("nv set qos congestion-control default-global traffic-class 3 ecn enabled\n"
                        "nv set interface swp1-2 link mtu 9100\n")
    assert tree["interface"] == {"swp1": {"link": {"mtu": 9100}}, "swp2": {"link": {"mtu": 9100}}}
    assert problems(tree) == ["/qos/congestion-control/default-global/traffic-class/3/ecn: 'enabled' is not one "
                              "of ['enable', 'disable']",
                              "/qos/congestion-control/default-global/traffic-class/3/ecn: Input should be "
                              "'enable' or 'disable'"]
