"""jsontext writes exactly what json.dumps(indent=2|4, sort_keys=True) writes (resolved.json, SONiC config_db.json)."""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import fabricgen.models.device as model
import fabricgen.platforms.common.jsontext as jsontext
from fabricgen.api import dump_device
from fabricgen.models.device import DeviceModel, Fabric

# Every character class json and orjson might treat differently: controls, DEL, Latin-1, line/paragraph
# separators, the BOM, a lone surrogate (orjson refuses it), astral characters, runs of spaces (like indentation).
TRICKY = st.sampled_from(["\x00", "\x1f", "\n", "\t", '"', "\\", "/", "\x7f", "\x80", "é", "\u2028", "\ufeff",
                          "\ud800", "\U0001f600", " ", "  ", "   ", "{", ":", ","])
TEXT = st.one_of(st.text(st.characters(max_codepoint=0x7e), max_size=8),  # orjson's text (printable ASCII)...
                 st.lists(st.one_of(st.characters(), TRICKY), max_size=8).map("".join))  # ... and json's
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70), TEXT)
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(TEXT, inner, max_size=4)), max_leaves=30)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(data=JSON)
def test_dumps_is_json_dumps(data: Any) -> None:
    for indent in (2, 4):
        assert jsontext.dumps(data, indent) == json.dumps(data, indent=indent, sort_keys=True)


@pytest.mark.parametrize("data", [
    {"a": "\x7f"},  # DEL: json escapes it, orjson does not
    {"a": "café"},  # non-ASCII: json escapes it (ensure_ascii)
    {"big": 2**64},  # beyond orjson's 64-bit integers
    {10: "x", 9: "y"},  # int keys: json sorts them as ints, then writes them as strings
    {"a": "two  spaces", "b": {"c": ["  lead", "trail  "]}},  # indent 4 must not double spaces in strings
    {"": {"": [[], {}, [{}]]}},
])
def test_dumps_edge_cases(data: Any) -> None:
    for indent in (2, 4):
        assert jsontext.dumps(data, indent) == json.dumps(data, indent=indent, sort_keys=True)


def test_dumps_refuses_other_indents() -> None:
    with pytest.raises(ValueError, match="indent 3"):
        jsontext.dumps({}, 3)


def test_model_dumps_is_json_of_model_dump(example_fabric: Fabric) -> None:
    """The shared QosModel spliced in as text gives the same bytes as dumping each device whole."""
    for device in example_fabric.devices.values():
        plain = device.model_dump(mode="json", exclude_none=True)
        assert jsontext.model_dumps(device, shared=("qos",)) == json.dumps(plain, indent=2, sort_keys=True)
        assert dump_device(device, "json") == json.dumps(plain, indent=2, sort_keys=True) + "\n"


def test_the_fields_dumped_once_are_one_object_for_every_nic(example_fabric: Fabric) -> None:
    """NIC_SHARED_FIELDS names what resolve makes once per fabric: were one of them made per NIC, its text would
    be made per NIC too (still right, no longer cheap)."""
    nics = [nic for device in example_fabric.devices.values() if device.host for nic in device.host.nics]
    assert len(nics) > 1
    for name in model.NIC_SHARED_FIELDS:
        assert len({id(getattr(nic, name)) for nic in nics}) == 1, name


def test_nested_shared_fields_dump_as_the_whole_model(example_fabric: Fabric) -> None:
    """A NIC whose maps are its own objects, not the fabric's shared ones, and values orjson refuses inside a
    shared field, still give json's bytes."""
    host = next(d for d in example_fabric.devices.values() if d.host is not None and len(d.host.nics) > 1)
    assert host.host is not None
    first, *others = host.host.nics
    own = first.model_copy(update={"dscp2prio": {**first.dscp2prio, 63: 5}, "pfc": [0] * 8})
    huge = first.model_copy(update={"tcbw": [2**64, 0, 0, 0, 0, 0, 0, 0]})  # beyond orjson's 64-bit integers
    for nics in ([own, *others], [huge, *others]):
        device = host.model_copy(update={"host": host.host.model_copy(update={"nics": nics})})
        plain = device.model_dump(mode="json", exclude_none=True)
        assert dump_device(device, "json") == json.dumps(plain, indent=2, sort_keys=True) + "\n"


def test_a_shared_list_of_models_dumps_as_the_whole_model(example_fabric: Fabric) -> None:
    """A shared field holding models (a host's whole NIC list) leaves out their None fields, as model_dump does."""
    host = next(d for d in example_fabric.devices.values() if d.host is not None)
    plain = host.model_dump(mode="json", exclude_none=True)
    assert jsontext.model_dumps(host, shared=("host.nics",)) == json.dumps(plain, indent=2, sort_keys=True)


@pytest.mark.parametrize("path", ["host.nics.*", "host..nics", ""])
def test_a_shared_path_must_end_in_a_field(example_fabric: Fabric, path: str) -> None:
    device = next(iter(example_fabric.devices.values()))
    with pytest.raises(ValueError, match="a path of field names"):
        jsontext.model_dumps(device, shared=(path,))


def test_model_dumps_falls_back_to_json_for_non_ascii(example_fabric: Fabric) -> None:
    device = next(d for d in example_fabric.devices.values() if d.qos is not None)
    renamed = device.model_copy(update={"name": "leaf-été", "qos": device.qos.model_copy() if device.qos else None})
    plain = renamed.model_dump(mode="json", exclude_none=True)
    assert jsontext.model_dumps(renamed, shared=("qos",)) == json.dumps(plain, indent=2, sort_keys=True)
    assert "\\u00e9" in jsontext.model_dumps(renamed, shared=("qos",))


def _annotation_types(annotation: Any) -> list[Any]:
    args = typing.get_args(annotation)
    return [annotation, *(t for arg in args for t in _annotation_types(arg))] if args else [annotation]


def _models(root: type[BaseModel]) -> set[type[BaseModel]]:
    found = {root}
    for info in root.model_fields.values():
        for kind in _annotation_types(info.annotation):
            if isinstance(kind, type) and issubclass(kind, BaseModel) and kind not in found:
                found |= _models(kind)
    return found


def test_no_model_field_is_a_float() -> None:
    """jsontext trusts orjson for every value resolved models hold; floats are where it spells numbers
    differently from json (1e16 vs 1e+16, NaN as null). A float field needs jsontext to learn floats first."""
    models = _models(Fabric)
    assert {DeviceModel, model.QosModel, model.PortModel, model.NicModel} <= models
    for kind in models:
        for name, info in kind.model_fields.items():
            assert float not in _annotation_types(info.annotation), f"{kind.__name__}.{name} is a float"
