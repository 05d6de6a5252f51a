"""The fabric as a picture: devices laid out by tier (spines, leaves, GPU hosts under their leaf, the OOB
network below), each box naming its device and its platform/NOS, each cable its own line coloured by the worst
lint finding on either end, with its port facts, lint state and (when a counter history exists) latest health on
hover; port names at the line ends where they fit.

Pure data → SVG text. Names and facts are escaped as XML text; coordinates are computed here, not in a template.
The SVG scales to the page's width (viewBox, width 100%); a tier with more boxes than fit in one row wraps.
Large fabrics stay readable: past HOST_LIMIT GPU hosts, the hosts under one leaf become one box that says how
many there are, and their cables one line per leaf; cables between two single devices are always drawn apart.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from html import escape

from fabricgen.lint.registry import SEVERITY_ORDER, Finding
from fabricgen.models.device import DeviceModel, Fabric, NicModel, PortModel
from fabricgen.platforms import get_platform
from fabricgen.report.text import priorities, size, speed

TIERS = ("spine", "leaf", "gpu-host", "oob")
HOST_LIMIT = 128
ROW_LIMIT = 16  # boxes per drawn row; a tier with more wraps onto further rows
BOX_W, BOX_H, GAP_X, ROW_H, WRAP_H, MARGIN = 132, 42, 18, 150, 70, 30
MIN_WIDTH = 1200  # the drawing spreads its rows over at least this width, so it uses the page
LABEL_PITCH = 13  # px a vertical port label needs along a box edge; a crowded edge gets no labels
COLOURS = {"error": "#c62828", "warning": "#e09b00", "info": "#1e6fd9", "ok": "#43a047", "mgmt": "#9e9e9e"}


@dataclass
class Node:
    key: str  # the device name, or "hosts under <leaf>" for a collapsed group
    label: str
    tier: str
    members: list[str]
    platform: str = ""  # as the box says it: "SONiC", "Arista EOS", "ConnectX ×4"…
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
    port_a: str = ""  # the cable's port at a / at b (empty on a merged group line)
    port_b: str = ""


@dataclass
class Picture:
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    width: int = 0
    height: int = 0


def worst(severities: list[str]) -> str:
    ranked = [level for level in severities if level in SEVERITY_ORDER]
    return min(ranked, key=SEVERITY_ORDER.__getitem__) if ranked else "ok"


NOS_NAMES = {"sonic": "SONiC", "eos": "Arista EOS", "nvue": "Cumulus NVUE", "nxos": "Cisco NX-OS",
             "connectx": "ConnectX host", "linux-dcb": "Linux dcb host"}


def platform_label(platform: str) -> str:
    """The platform/NOS as a box says it."""
    return NOS_NAMES.get(platform, get_platform(platform).capability.name)


def layout(fabric: Fabric, findings: list[Finding], health: dict[tuple[str, str], str] | None = None) -> Picture:
    """``health``: (device, port) → the latest health verdict of that port, when a counter history exists."""
    picture = Picture()
    collapse = sum(1 for device in fabric.devices.values() if device.role == "gpu-host") > HOST_LIMIT
    for node in _nodes(fabric, collapse):
        picture.nodes[node.key] = node
    owner = {member: node.key for node in picture.nodes.values() for member in node.members}
    by_port, by_device, rules = _severities(findings)
    for node in picture.nodes.values():
        node.severity = worst([by_device.get(member, "ok") for member in node.members])
    picture.edges = _edges(fabric, owner, by_port, rules, health or {})
    _place(picture)
    return picture


def _nodes(fabric: Fabric, collapse: bool) -> list[Node]:
    leaves = sorted(name for name, device in fabric.devices.items() if device.role == "leaf")
    nodes = [Node(name, name, device.role if device.role in TIERS else "oob", [name], platform_label(device.platform))
             for name, device in sorted(fabric.devices.items()) if device.role != "gpu-host"]
    hosts_by_leaf: dict[str, list[str]] = defaultdict(list)
    for name, device in sorted(fabric.devices.items()):
        if device.role == "gpu-host":
            hosts_by_leaf[_first_leaf(device)].append(name)
    order = {leaf: index for index, leaf in enumerate(leaves)}
    for leaf in sorted(hosts_by_leaf, key=lambda leaf: (order.get(leaf, len(order)), leaf)):
        members = hosts_by_leaf[leaf]
        if collapse:
            kinds = sorted({platform_label(fabric.devices[m].platform) for m in members})
            nodes.append(Node(f"hosts under {leaf}", f"{len(members)} hosts", "gpu-host", members, " + ".join(kinds)))
        else:
            nodes += [Node(name, name, "gpu-host", [name], platform_label(fabric.devices[name].platform))
                      for name in members]
    return nodes


def _first_leaf(device: DeviceModel) -> str:
    peers = sorted(nic.peer.split(":")[0] for nic in (device.host.nics if device.host else []) if nic.peer)
    return peers[0] if peers else ""


def _severities(findings: list[Finding]) -> tuple[dict[tuple[str, str], str], dict[str, str],
                                                   dict[tuple[str, str], list[str]]]:
    by_port: dict[tuple[str, str], list[str]] = defaultdict(list)
    by_device: dict[str, list[str]] = defaultdict(list)
    rules: dict[tuple[str, str], list[str]] = defaultdict(list)
    for finding in findings:
        by_device[finding.device].append(finding.severity)
        if finding.port:
            by_port[(finding.device, finding.port)].append(finding.severity)
            rules[(finding.device, finding.port)].append(f"{finding.severity} {finding.rule}")
    return ({key: worst(levels) for key, levels in by_port.items()},
            {key: worst(levels) for key, levels in by_device.items()}, rules)


def _edges(fabric: Fabric, owner: dict[str, str], by_port: dict[tuple[str, str], str],
           rules: dict[tuple[str, str], list[str]], health: dict[tuple[str, str], str]) -> list[Edge]:
    """One edge per cable (both ends list it); cables into a collapsed host group become one edge per group."""
    seen: set[tuple[tuple[str, str], ...]] = set()
    single: list[Edge] = []
    merged: dict[tuple[str, str], Edge] = {}
    for name, device in sorted(fabric.devices.items()):
        for port_name, facts, peer in _cables(device):
            far_device, _, far_port = peer.partition(":")
            if far_device not in owner or name not in owner:
                continue
            ends = tuple(sorted([(name, port_name), (far_device, far_port)]))
            if ends in seen:
                continue
            seen.add(ends)
            severity = worst([by_port.get((name, port_name), "ok"), by_port.get((far_device, far_port), "ok")])
            mgmt = device.role == "oob" or fabric.devices[far_device].role == "oob"
            lint_state = "; ".join(rules.get((name, port_name), []) + rules.get((far_device, far_port), [])) or "clean"
            title = f"{name} {port_name} ↔ {far_device} {far_port}\n{facts}\nlint: {lint_state}"
            states = [health[end] for end in ((name, port_name), (far_device, far_port)) if end in health]
            if states:
                title += f"\nhealth: {worst(states) if worst(states) != 'ok' else 'ok'}"
            edge = Edge(owner[name], owner[far_device], title, severity, mgmt, port_a=port_name, port_b=far_port)
            if owner[name] == name and owner[far_device] == far_device:
                single.append(edge)
            else:
                _merge(merged, edge)
    return sorted(single, key=lambda e: (min(e.a, e.b), max(e.a, e.b), e.port_a)) + [merged[k] for k in sorted(merged)]


def _merge(merged: dict[tuple[str, str], Edge], edge: Edge) -> None:
    key = (min(edge.a, edge.b), max(edge.a, edge.b))
    if key not in merged:
        merged[key] = edge
        return
    kept = merged[key]
    kept.count += 1
    kept.severity = worst([kept.severity, edge.severity])
    kept.port_a = kept.port_b = ""
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
    tiers = [[node for node in picture.nodes.values() if node.tier == tier] for tier in TIERS]
    rows: list[list[Node]] = []
    first_of_tier: list[bool] = []
    for tier in tiers:
        for start in range(0, len(tier), ROW_LIMIT):
            rows.append(tier[start:start + ROW_LIMIT])
            first_of_tier.append(start == 0)
    widest = max((len(row) for row in rows), default=1)
    picture.width = max(MIN_WIDTH, 2 * MARGIN + widest * (BOX_W + GAP_X) - GAP_X)
    y = MARGIN
    for number, row in enumerate(rows):
        if number:
            y += ROW_H if first_of_tier[number] else WRAP_H
        slot = (picture.width - 2 * MARGIN) / len(row)  # each box centred in an equal share of the width
        for index, node in enumerate(row):
            node.x, node.y = int(MARGIN + slot * (index + 0.5) - BOX_W / 2), y
    picture.height = y + BOX_H + MARGIN


def _anchors(picture: Picture) -> dict[tuple[int, str], int]:
    """x of each line end ((edge number, "a"/"b") → x): the ends on one side of a box are spread evenly along
    it, ordered by where their far ends are, so parallel cables are drawn apart and lines do not cross there."""
    sides: dict[tuple[str, str], list[tuple[int, int, str]]] = defaultdict(list)
    for number, edge in enumerate(picture.edges):
        a, b = picture.nodes[edge.a], picture.nodes[edge.b]
        if a.y == b.y:
            continue
        side_a, side_b = ("bottom", "top") if a.y < b.y else ("top", "bottom")
        sides[(a.key, side_a)].append((b.x, number, "a"))
        sides[(b.key, side_b)].append((a.x, number, "b"))
    anchors: dict[tuple[int, str], int] = {}
    for (key, _), ends in sides.items():
        node = picture.nodes[key]
        ends.sort()
        for index, (_, number, end) in enumerate(ends):
            anchors[(number, end)] = int(node.x + BOX_W * (index + 1) / (len(ends) + 1))
    return anchors


def svg(picture: Picture) -> str:
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="topology" viewBox="0 0 {picture.width} {picture.height}" '
             f'width="100%" preserveAspectRatio="xMidYMin meet" role="img" aria-label="fabric topology">']
    anchors = _anchors(picture)
    crowded = _crowded(picture, anchors)
    for number, edge in enumerate(picture.edges):
        parts.append(_line(picture, number, edge, anchors, crowded))
    for node in picture.nodes.values():
        parts.append(_box(node))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _crowded(picture: Picture, anchors: dict[tuple[int, str], int]) -> set[tuple[str, bool]]:
    """(box, bottom side?) whose line ends sit closer than a vertical port label needs: no labels there."""
    per_side: dict[tuple[str, bool], int] = defaultdict(int)
    for number, end in anchors:
        edge = picture.edges[number]
        here, there = (picture.nodes[edge.a], picture.nodes[edge.b])[:: 1 if end == "a" else -1]
        per_side[(here.key, here.y < there.y)] += 1
    return {side for side, count in per_side.items() if BOX_W / (count + 1) < LABEL_PITCH}


def _line(picture: Picture, number: int, edge: Edge, anchors: dict[tuple[int, str], int],
          crowded: set[tuple[str, bool]]) -> str:
    a, b = picture.nodes[edge.a], picture.nodes[edge.b]
    ax = anchors.get((number, "a"), a.x + BOX_W // 2)
    bx = anchors.get((number, "b"), b.x + BOX_W // 2)
    ay, by = (a.y + BOX_H, b.y) if a.y < b.y else ((a.y, b.y + BOX_H) if a.y > b.y else (a.y + BOX_H // 2,) * 2)
    colour = COLOURS["mgmt"] if edge.mgmt and edge.severity == "ok" else COLOURS[edge.severity]
    dash = ' stroke-dasharray="4 3"' if edge.mgmt else ""
    text = [f'<line class="link {edge.severity}" data-a="{escape(edge.a)}" data-b="{escape(edge.b)}" '
            f'x1="{ax}" y1="{ay}" x2="{bx}" y2="{by}" stroke="{colour}" stroke-width="{2 if edge.count == 1 else 4}"'
            f'{dash}><title>{escape(edge.title)}</title></line>']
    if a.y != b.y:
        for node, port, x, y, downward in ((a, edge.port_a, ax, ay, a.y < b.y), (b, edge.port_b, bx, by, b.y < a.y)):
            if port and (node.key, downward) not in crowded:
                # Vertical, reading away from the box, just beside the line's end.
                ly = y + 3 if downward else y - 3
                angle = 90 if downward else -90
                text.append(f'<text class="port" x="{x + 3}" y="{ly}" transform="rotate({angle} {x + 3} {ly})">'
                            f"{escape(port)}</text>")
    return "\n".join(text)


def _box(node: Node) -> str:
    colour = COLOURS[node.severity]
    members = ", ".join(node.members[:8]) + (" …" if len(node.members) > 8 else "")
    middle = node.x + BOX_W // 2
    return (f'<g class="device {node.tier}" data-name="{escape(node.key)}">'
            f"<title>{escape(members)} ({escape(node.platform)})</title>"
            f'<rect x="{node.x}" y="{node.y}" width="{BOX_W}" height="{BOX_H}" rx="6" fill="#ffffff" '
            f'stroke="{colour}" stroke-width="2"/>'
            f'<text x="{middle}" y="{node.y + 17}" text-anchor="middle">{escape(node.label)}</text>'
            f'<text class="platform" x="{middle}" y="{node.y + 33}" text-anchor="middle">{escape(node.platform)}'
            f"</text></g>")
