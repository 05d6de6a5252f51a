"""The fabric report: one self-contained HTML file (inline SVG, CSS and a few lines of script, nothing fetched)
with the topology picture, the class matrix across the fabric's platforms, PFC headroom per port and the lint
summary. Values are computed here; the template only lays them out, with Jinja's HTML autoescaping on."""

from __future__ import annotations

from collections import Counter
from typing import Any

import jinja2

from fabricgen import __version__
from fabricgen.lint.registry import Finding
from fabricgen.model import DeviceModel, Fabric, QosModel
from fabricgen.platforms import FEATURES, get_platform
from fabricgen.report.device import QOS_MATRIX_HEADER, qos_matrix_rows
from fabricgen.report.text import priorities, size, speed
from fabricgen.report.topology import layout, svg

_ENVIRONMENT = jinja2.Environment(loader=jinja2.PackageLoader("fabricgen.report", "templates"),
                                  autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def fabric_report(fabric: Fabric, findings: list[Finding]) -> str:
    platforms = sorted({device.platform for device in fabric.devices.values()})
    qos = _fabric_qos(fabric)
    context: dict[str, Any] = {
        "fabric": fabric.name,
        "version": __version__,
        "counts": {"devices": len(fabric.devices),
                   "roles": sorted(Counter(device.role for device in fabric.devices.values()).items())},
        "lint": {level: sum(1 for finding in findings if finding.severity == level)
                 for level in ("error", "warning", "info")},
        "topology": svg(layout(fabric, findings)),
        "matrix_header": QOS_MATRIX_HEADER,
        "matrix_rows": qos_matrix_rows(qos) if qos is not None else [],
        "platforms": platforms,
        "spelling": _spelling(platforms),
        "headroom": [row for device in sorted(fabric.devices.values(), key=lambda d: d.name)
                     for row in _headroom_rows(device)],
        "findings": findings,
    }
    return _ENVIRONMENT.get_template("fabric.html.j2").render(context)


def _fabric_qos(fabric: Fabric) -> QosModel | None:
    """The class layout; resolve gives every data device the same one, so the first switch's stands for all."""
    for device in sorted(fabric.devices.values(), key=lambda d: d.name):
        if device.qos is not None:
            return device.qos
    return None


def _spelling(platforms: list[str]) -> list[tuple[str, list[str]]]:
    capabilities = [get_platform(name).capability for name in platforms]
    rows = []
    for key, title in FEATURES:
        cells = [capability.spelling.get(key, "—") for capability in capabilities]
        if any(cell != "—" for cell in cells):
            rows.append((title, cells))
    return rows


def _headroom_rows(device: DeviceModel) -> list[tuple[object, ...]]:
    capability = get_platform(device.platform).capability
    rows: list[tuple[object, ...]] = []
    for port in device.ports:
        if port.headroom is None:
            continue
        if port.headroom.buffer_model == "dynamic":
            owner = "switch (buffermgrd)"
        else:
            owner = "fabricgen" if capability.programs_headroom else "switch, from cable length"
        cable = f"{port.cable_m} m" + (" (assumed)" if port.cable_assumed else "") if port.cable_m is not None else "-"
        rows.append((device.name, port.name, speed(port.speed_mbps), cable, port.mtu,
                     priorities(port.pfc_priorities), size(port.headroom.xoff), size(port.headroom.size), owner))
    return rows
