"""The fabric report: one self-contained HTML file (inline SVG, CSS and a few lines of script, nothing fetched)
with the topology picture, the class matrix across the fabric's platforms, PFC headroom per port and the lint
summary. Values are computed here; the template only lays them out, with Jinja's HTML autoescaping on."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import jinja2

from fabricgen import __version__
from fabricgen.lint.registry import Finding
from fabricgen.models.device import DeviceModel, Fabric, QosModel
from fabricgen.platforms import FEATURES, get_platform
from fabricgen.report.device import QOS_MATRIX_HEADER, qos_matrix_rows
from fabricgen.report.text import priorities, size, speed
from fabricgen.report.topology import layout, platform_label, svg

if TYPE_CHECKING:
    from fabricgen.observe.reportdata import ReportHealth

_ENVIRONMENT = jinja2.Environment(loader=jinja2.PackageLoader("fabricgen.report", "templates"),
                                  autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def fabric_report(fabric: Fabric, findings: list[Finding], waived: int = 0, health: ReportHealth | None = None) -> str:
    """``waived``: findings a waiver accepted (counted apart, never coloured); ``health``: the latest counter
    verdicts and trends when a history exists (fabricgen/observe/reportdata.py)."""
    platforms = sorted({device.platform for device in fabric.devices.values()})
    qos = _fabric_qos(fabric)
    headroom = [row for device in sorted(fabric.devices.values(), key=lambda d: d.name)
                for row in _headroom_rows(device)]
    context: dict[str, Any] = {
        "fabric": fabric.name,
        "version": __version__,
        "counts": {"devices": len(fabric.devices),
                   "roles": sorted(Counter(device.role for device in fabric.devices.values()).items())},
        "lint": {**{level: sum(1 for finding in findings if finding.severity == level)
                    for level in ("error", "warning", "info")}, "waived": waived},
        "topology": svg(layout(fabric, findings, health.by_port if health else None)),
        "matrix_header": QOS_MATRIX_HEADER,
        "matrix_rows": qos_matrix_rows(qos) if qos is not None else [],
        "platforms": platforms,
        "spelling": _spelling(platforms),
        "headroom": headroom,
        "headroom_absent": _headroom_absent(fabric, {str(row[0]) for row in headroom}),
        "findings": findings,
        "health": health,
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


def _headroom_absent(fabric: Fabric, shown: set[str]) -> list[tuple[str, str]]:
    """(platform, why its devices have no row in the headroom table) for each platform of the fabric without one."""
    reasons: dict[str, str] = {}
    for device in sorted(fabric.devices.values(), key=lambda d: d.name):
        if device.name in shown or device.platform in reasons:
            continue
        if device.host is not None:
            reason = "GPU hosts: a NIC has no switch ingress headroom to size (its PFC buffer is the NIC's own)"
        elif not any(port.lossless for port in device.ports):
            reason = f"{device.role} switches here carry no lossless port"
        else:
            reason = "its lossless ports have no headroom figure (the switch sizes it itself)"
        reasons[device.platform] = reason
    owners = {name for name in reasons if any(d.platform == name and d.name in shown for d in fabric.devices.values())}
    return [(platform_label(name), reason) for name, reason in sorted(reasons.items()) if name not in owners]
