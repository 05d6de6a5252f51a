"""One Markdown page per device, in the spirit of Arista AVD's device documentation: what the device is, its
interfaces with the facts that decide lossless behaviour, and the QoS matrix in the platform's own words."""

from __future__ import annotations

from fabricgen.lint.registry import Finding
from fabricgen.models.device import DeviceModel, HeadroomModel, NicModel, PortModel, QosModel
from fabricgen.platforms import FEATURES, Capability, get_platform
from fabricgen.report.text import (
    dscp_ranges,
    md_cell,
    md_table,
    port_ecn,
    priorities,
    scheduler,
    size,
    speed,
)
from fabricgen.report.text import ecn as ecn_text


def device_page(device: DeviceModel, findings: list[Finding]) -> str:
    capability = get_platform(device.platform).capability
    sections = [_header(device, capability), _management(device)]
    if device.host is not None:
        sections += [_nics(device.host.nics), _nccl(device.host.nccl_env)]
    else:
        sections.append(_interfaces(device, capability))
    if device.qos is not None:
        sections.append(_qos_matrix(device.qos))
    sections += [_spelling(capability), _findings(findings)]
    return "\n".join(section for section in sections if section)


def _header(device: DeviceModel, capability: Capability) -> str:
    facts = [("Role", device.role), ("Platform", f"{device.platform} ({capability.target})"),
             ("Hardware", device.hardware), ("ASIC", device.asic)]
    lines = [f"# {md_cell(device.name)}", ""]
    lines += [f"- **{label}:** {md_cell(value)}" for label, value in facts if value]
    return "\n".join(lines) + "\n"


def _management(device: DeviceModel) -> str:
    mgmt = device.mgmt
    if mgmt is None:
        return ""
    rows = [(mgmt.interface, mgmt.vrf, mgmt.address, mgmt.gateway, mgmt.vlan, mgmt.mtu)]
    return "## Management\n\n" + md_table(("Interface", "VRF", "Address", "Gateway", "OOB VLAN", "MTU"), rows)


def _interfaces(device: DeviceModel, capability: Capability) -> str:
    header = ("Port", "Role", "Admin", "Speed", "FEC", "Peer", "Cable", "MTU", "PFC priorities",
              "Headroom xoff / size", "Headroom set by", "ECN kmin / kmax / prob", "Description")
    rows = [_interface_row(device, capability, port) for port in device.ports]
    return "## Interfaces\n\n" + md_table(header, rows)


def _interface_row(device: DeviceModel, capability: Capability, port: PortModel) -> tuple[object, ...]:
    cable = f"{port.cable_m} m {port.media or ''}".strip() if port.cable_m is not None else None
    if cable and port.cable_assumed:
        cable += " (assumed)"
    return (port.name, port.role, "up" if port.admin_up else "down", speed(port.speed_mbps), port.fec, port.peer,
            cable, port.mtu, priorities(port.pfc_priorities), _headroom(port.headroom),
            _headroom_owner(capability, port.headroom), port_ecn(device, port) if port.lossless else "-",
            port.description)


def _headroom(headroom: HeadroomModel | None) -> str:
    """What the lossless priority group needs (fabricgen's sizing: cable, speed, MTU)."""
    if headroom is None:
        return "-"
    return f"{size(headroom.xoff)} / {size(headroom.size)}"


def _headroom_owner(capability: Capability, headroom: HeadroomModel | None) -> str:
    """Required vs configured: who turns the required headroom into the switch's buffer setting."""
    if headroom is None:
        return "-"
    if headroom.buffer_model == "dynamic":
        return "the switch (buffermgrd, from the cable length)"
    if capability.programs_headroom:
        return "fabricgen (rendered as sized)"
    return "the switch (from the cable length fabricgen renders)"


def _nics(nics: list[NicModel]) -> str:
    header = ("NIC", "RDMA device", "Peer", "Cable", "MTU", "Trust", "PFC priorities", "prio → TC", "ETS shares",
              "DCQCN", "CNP DSCP / prio", "RoCE ToS", "xoff")
    rows = [(nic.interface, nic.rdma_device, nic.peer, f"{nic.cable_m} m" if nic.cable_m is not None else None,
             nic.mtu, nic.trust, priorities(p for p, on in enumerate(nic.pfc) if on), ",".join(map(str, nic.prio_tc)),
             ",".join(map(str, nic.tcbw)),
             f"on ({priorities(nic.dcqcn_priorities)})" if nic.dcqcn_enabled else "off",
             f"{nic.cnp_dscp} / {nic.cnp_priority}", nic.roce_tos, size(nic.xoff_bytes)) for nic in nics]
    return "## RDMA NICs\n\n" + md_table(header, rows)


def _nccl(env: dict[str, str]) -> str:
    if not env:
        return ""
    return "## NCCL environment\n\n" + md_table(("Variable", "Value"), sorted(env.items()))


def qos_matrix_rows(qos: QosModel) -> list[tuple[object, ...]]:
    """DSCP → class → priority → TC → queue → PFC → ECN → scheduler, one row per egress queue."""
    rows: list[tuple[object, ...]] = []
    for queue in sorted(qos.queues, key=lambda item: item.index):
        dscps = [dscp for dscp, tc in qos.dscp_to_tc.items() if tc == queue.traffic_class]
        prios = [prio for prio, index in qos.pfc_priority_to_queue.items() if index == queue.index]
        if not prios and queue.lossless:
            prios = [queue.traffic_class]
        rows.append((queue.class_name, dscp_ranges(dscps), priorities(prios), queue.traffic_class, queue.index,
                     "lossless (PFC)" if queue.lossless else "lossy", ecn_text(queue.ecn), scheduler(queue)))
    return rows


QOS_MATRIX_HEADER = ("Class", "DSCP", "Priority", "TC", "Queue", "PFC", "ECN kmin / kmax / prob", "Scheduler")


def _qos_matrix(qos: QosModel) -> str:
    notes = [f"Trust: {qos.trust}. RDMA: DSCP {qos.rdma_dscp}, priority {qos.rdma_priority}. "
             f"CNP: DSCP {qos.cnp_dscp}, priority {qos.cnp_priority}."]
    if qos.watchdog is not None:
        watchdog = qos.watchdog
        notes.append(f"PFC watchdog: detection {watchdog.detection_ms} ms, restoration {watchdog.restoration_ms} ms, "
                     f"poll {watchdog.poll_ms} ms, action {watchdog.action}.")
    return "## QoS matrix\n\n" + md_table(QOS_MATRIX_HEADER, qos_matrix_rows(qos)) + "\n" + " ".join(notes) + "\n"


def _spelling(capability: Capability) -> str:
    rows = [(title, capability.spelling[key]) for key, title in FEATURES if key in capability.spelling]
    if not rows:
        return ""
    return f"## How {capability.name} spells it\n\n" + md_table(("Feature", "Configuration"), rows)


def _findings(findings: list[Finding]) -> str:
    if not findings:
        return "## Lint\n\nNo findings.\n"
    rows = [(finding.severity, finding.rule, finding.port, finding.message, finding.fix) for finding in findings]
    return "## Lint\n\n" + md_table(("Severity", "Rule", "Port", "Finding", "Fix"), rows)
