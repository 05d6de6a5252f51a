"""The pure core: no disk, no network. The CLI and deploy are thin edges around these functions."""

from __future__ import annotations

import json
from typing import Any

import yaml

from fabricgen.model import DeviceModel, Fabric
from fabricgen.platforms import get_platform
from fabricgen.templating import Templates, default_templates

RESOLVED_FILE = "resolved.yaml"


def render_device(device: DeviceModel, templates: Templates | None = None) -> dict[str, str]:
    """Text of every file of one device, keyed by file name."""
    return get_platform(device.platform).render(device, templates or default_templates())


def generate(fabric: Fabric, templates: Templates | None = None, *, with_resolved: bool = True) -> dict[str, str]:
    """Every output file of the fabric, keyed by ``<device>/<file>`` (sorted, deterministic)."""
    files: dict[str, str] = {}
    for name in sorted(fabric.devices):
        device = fabric.devices[name]
        for file, text in render_device(device, templates).items():
            files[f"{name}/{file}"] = text
        if with_resolved:
            files[f"{name}/{RESOLVED_FILE}"] = dump_device(device, "yaml")
    return files


def _plain(device: DeviceModel) -> dict[str, Any]:
    return device.model_dump(mode="json", exclude_none=True)


def dump_device(device: DeviceModel, fmt: str) -> str:
    return _dump(_plain(device), fmt)


def dump_fabric(fabric: Fabric, fmt: str) -> str:
    data = {"fabric": fabric.name, "devices": {n: _plain(d) for n, d in sorted(fabric.devices.items())}}
    return _dump(data, fmt)


def _dump(data: Any, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    return yaml.dump(data, Dumper=_Dumper, sort_keys=True, default_flow_style=False, allow_unicode=True, width=100)


_BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml: ~10x faster


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Short lists of numbers (PFC vectors, TC maps) read best on one line."""


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = len(data) <= 16 and all(isinstance(v, int | str) and not isinstance(v, bool) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _represent_list)
