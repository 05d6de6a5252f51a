"""The fabric as a picture: devices laid out by tier (spines, leaves, GPU hosts under their leaf, the OOB
network below), each cable a line coloured by the worst lint finding on either end, its port facts on hover.

Pure data → SVG text. Names and facts are escaped as XML text; coordinates are computed here, not in a template.
Large fabrics stay readable: past HOST_LIMIT GPU hosts, the hosts under one leaf become one box that says how
many there are, and their cables one line per leaf.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from html import escape

from fabricgen.lint.registry import SEVERITY_ORDER, Finding
from fabricgen.model import DeviceModel, Fabric, NicModel, PortModel
from fabricgen.report.text import priorities, size, speed

TIERS = ("spine", "leaf", "gpu-host", "oob")
HOST_LIMIT = 128
BOX_W, BOX_H, GAP_X, ROW_H, MARGIN = 120, 36, 16, 130, 30
COLOURS = {"error": "#c62828", "warning": "#e09b00", "info": "#1e6fd9", "ok": "#43a047", "mgmt": "#9e9e9e"}


@dataclass
class Node:
    key: str  # the device name, or "hosts under <leaf>" for a collapsed group
    label: str
    tier: str
    members: list[str]
    x: int = 0
    y: int = 0
    severity: str = "ok"


@dataclass
class Edge:
    a: str
    b: str
    title: str
    severity: str = "ok"
    mgmt: bool = False
    count: int = 1


@dataclass
class Picture:
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    width: int = 0
    height: int = 0


def worst(severities: list[str]) -> str:
    ranked = [level for level in severities if level in SEVERITY_ORDER]
    return min(ranked, key=SEVERITY_ORDER.__getitem__) if ranked else "ok"


def layout(fabric: Fabric, findings: list[Finding]) -> Picture:
    picture = Picture()
    collapse = sum(1 for device in fabric.devices.values() if device.role == "gpu-host") > HOST_LIMIT
    for node in _nodes(fabric, collapse):
        picture.nodes[node.key] = node
    owner = {member: node.key for node in picture.nodes.values() for member in node.members}
    by_port, by_device = _severities(findings)
    for node in picture.nodes.values():
        node.severity = worst([by_device.get(member, "ok") for member in node.members])
    picture.edges = _edges(fabric, owner, by_port)
    _place(picture)
    return picture


def _nodes(fabric: Fabric, collapse: bool) -> list[Node]:
    leaves = sorted(name for name, device in fabric.devices.items() if device.role == "leaf")
    nodes = [Node(name, name, device.role if device.role in TIERS else "oob", [name])
             for name, device in sorted(fabric.devices.items()) if device.role != "gpu-host"]
    hosts_by_leaf: dict[str, list[str]] = defaultdict(list)
    for name, device in sorted(fabric.devices.items()):
        if device.role == "gpu-host":
            hosts_by_leaf[_first_leaf(device)].append(name)
    order = {leaf: index for index, leaf in enumerate(leaves)}
    for leaf in sorted(hosts_by_leaf, key=lambda leaf: (order.get(leaf, len(order)), leaf)):
        members = hosts_by_leaf[leaf]
        if collapse:
            nodes.append(Node(f"hosts under {leaf}", f"{len(members)} hosts", "gpu-host", members))
        else:
            nodes += [Node(name, name, "gpu-host", [name]) for name in members]
    return nodes


def _first_leaf(device: DeviceModel) -> str:
    peers = sorted(nic.peer.split(":")[0] for nic in (device.host.nics if device.host else []) if nic.peer)
    return peers[0] if peers else ""


def _severities(findings: list[Finding]) -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    by_port: dict[tuple[str, str], list[str]] = defaultdict(list)
    by_device: dict[str, list[str]] = defaultdict(list)
    for finding in findings:
        by_device[finding.device].append(finding.severity)
        if finding.port:
            by_port[(finding.device, finding.port)].append(finding.severity)
    return ({key: worst(levels) for key, levels in by_port.items()},
            {key: worst(levels) for key, levels in by_device.items()})


def _edges(fabric: Fabric, owner: dict[str, str], by_port: dict[tuple[str, str], str]) -> list[Edge]:
    """One edge per cable (both ends list it), or per group of cables between the same two boxes."""
    seen: set[tuple[tuple[str, str], tuple[str, str]]] = set()
    merged: dict[tuple[str, str], Edge] = {}
    for name, device in sorted(fabric.devices.items()):
        for port_name, facts, peer in _cables(device):
            far_device, _, far_port = peer.partition(":")
            if far_device not in owner or name not in owner:
                continue
            ends = tuple(sorted([(name, port_name), (far_device, far_port)]))
            if ends in seen:
                continue
            seen.add(ends)  # type: ignore[arg-type]
            severity = worst([by_port.get((name, port_name), "ok"), by_port.get((far_device, far_port), "ok")])
            mgmt = device.role == "oob" or fabric.devices[far_device].role == "oob"
            title = f"{name} {port_name} ↔ {far_device} {far_port}\n{facts}"
            _merge(merged, owner[name], owner[far_device], Edge(owner[name], owner[far_device], title, severity, mgmt))
    return [merged[key] for key in sorted(merged)]


def _merge(merged: dict[tuple[str, str], Edge], a: str, b: str, edge: Edge) -> None:
    key = (min(a, b), max(a, b))
    if key not in merged:
        merged[key] = edge
        return
    kept = merged[key]
    kept.count += 1
    kept.severity = worst([kept.severity, edge.severity])
    kept.title = f"{kept.a} ↔ {kept.b}: {kept.count} cables"


def _cables(device: DeviceModel) -> list[tuple[str, str, str]]:
    """(port, its facts as hover text, peer) of every cabled port or NIC."""
    cables = [(port.name, _port_facts(port), port.peer) for port in device.ports if port.peer]
    if device.host is not None:
        cables += [(nic.interface, _nic_facts(nic), nic.peer) for nic in device.host.nics if nic.peer]
    return cables


def _port_facts(port: PortModel) -> str:
    facts = [f"{speed(port.speed_mbps)} {port.fec or ''}".strip(), f"MTU {port.mtu}"]
    if port.cable_m is not None:
        facts.append(f"cable {port.cable_m} m {port.media or ''}".strip())
    if port.pfc_priorities:
        facts.append(f"PFC {priorities(port.pfc_priorities)}")
    if port.headroom is not None:
        facts.append(f"headroom xoff {size(port.headroom.xoff)} size {size(port.headroom.size)}")
    return ", ".join(facts)


def _nic_facts(nic: NicModel) -> str:
    return (f"MTU {nic.mtu}, PFC {priorities(p for p, on in enumerate(nic.pfc) if on)}, RoCE ToS {nic.roce_tos}, "
            f"xoff {size(nic.xoff_bytes)}")


def _place(picture: Picture) -> None:
    rows = [[node for node in picture.nodes.values() if node.tier == tier] for tier in TIERS]
    rows = [row for row in rows if row]
    widest = max((len(row) for row in rows), default=1)
    picture.width = 2 * MARGIN + widest * (BOX_W + GAP_X) - GAP_X
    for number, row in enumerate(rows):
        span = len(row) * (BOX_W + GAP_X) - GAP_X
        start = (picture.width - span) // 2
        for index, node in enumerate(row):
            node.x, node.y = start + index * (BOX_W + GAP_X), MARGIN + number * ROW_H
    picture.height = 2 * MARGIN + (len(rows) - 1) * ROW_H + BOX_H


def svg(picture: Picture) -> str:
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="topology" viewBox="0 0 {picture.width} {picture.height}" '
             f'width="{picture.width}" height="{picture.height}" role="img" aria-label="fabric topology">']
    for edge in picture.edges:
        a, b = picture.nodes[edge.a], picture.nodes[edge.b]
        colour = COLOURS["mgmt"] if edge.mgmt and edge.severity == "ok" else COLOURS[edge.severity]
        dash = ' stroke-dasharray="4 3"' if edge.mgmt else ""
        parts.append(f'<line class="link {edge.severity}" data-a="{escape(edge.a)}" data-b="{escape(edge.b)}" '
                     f'x1="{a.x + BOX_W // 2}" y1="{a.y + BOX_H}" x2="{b.x + BOX_W // 2}" y2="{b.y}" '
                     f'stroke="{colour}" stroke-width="{2 if edge.count == 1 else 4}"{dash}>'
                     f"<title>{escape(edge.title)}</title></line>")
    for node in picture.nodes.values():
        colour = COLOURS[node.severity]
        members = ", ".join(node.members[:8]) + (" …" if len(node.members) > 8 else "")
        parts.append(f'<g class="device {node.tier}" data-name="{escape(node.key)}">'
                     f"<title>{escape(members)}</title>"
                     f'<rect x="{node.x}" y="{node.y}" width="{BOX_W}" height="{BOX_H}" rx="6" fill="#ffffff" '
                     f'stroke="{colour}" stroke-width="2"/>'
                     f'<text x="{node.x + BOX_W // 2}" y="{node.y + BOX_H // 2 + 5}" text-anchor="middle">'
                     f"{escape(node.label)}</text></g>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
