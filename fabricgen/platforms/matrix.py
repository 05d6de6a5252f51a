"""docs/platforms.md: what each platform supports and how it spells each intent feature, from the registry."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fabricgen.platforms import DEPLOY_STEPS, FEATURES, Capability, get_platform, platform_names


def _lossless_classes(c: Capability) -> str:
    if c.lossless_limit_per_sku is None:
        return str(c.lossless_class_limit)
    known = ", ".join(f"{sku} {limit}" for sku, limit in sorted(c.lossless_limit_per_sku.items()))
    return (f"per SKU: {known}; others as declared (data.lossless_limit), else unknown: lint warns above "
            f"{c.lossless_class_limit}")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def platforms_markdown(outcomes: Sequence[tuple[str, str]]) -> str:
    """The page; ``outcomes`` are deploy's results and what each means (the command line passes them: the
    registry sits below deploy and never imports it)."""
    platforms = [get_platform(name) for name in platform_names()]
    caps = [p.capability for p in platforms]
    out = ["# fabricgen platform matrix", "",
           "Generated from the platform registry by `fabricgen platforms --format markdown`; do not edit by hand.",
           "A feature a platform cannot express is refused at render time with the platform's name, never dropped.",
           "", "## Capabilities", "",
           "| | " + " | ".join(c.name for c in caps) + " |", "|---" * (len(caps) + 1) + "|"]
    rows: list[tuple[str, Callable[[Capability], str]]] = [
        ("target", lambda c: c.target), ("kind", lambda c: c.kind), ("max MTU", lambda c: str(c.max_mtu)),
        ("MTU semantics", lambda c: c.mtu_semantics),
        ("lossless classes", _lossless_classes),
        ("ECN unit / granularity", lambda c: f"{c.ecn_threshold_unit} / {c.ecn_granularity_bytes} B"),
        ("programs headroom", lambda c: "yes" if c.programs_headroom else "no"),
        ("management", lambda c: f"{c.mgmt_interface}, VRF {c.mgmt_vrf_fixed_name or '(intent)'}"),
        ("PFC watchdog", lambda c: f"{c.watchdog_step_ms} ms steps; {', '.join(c.watchdog_actions)}"),
        ("apply / rollback", lambda c: c.commit_strategy), ("files", lambda c: ", ".join(c.output_files)),
        ("reads configs back", lambda c: "yes" if get_platform(c.name).read else "no"),
    ]
    out += [f"| {label} | " + " | ".join(_cell(value(c)) for c in caps) + " |" for label, value in rows]
    out += ["", "## Intent features and how each platform spells them", "",
            "| feature | " + " | ".join(c.name for c in caps) + " |", "|---" * (len(caps) + 1) + "|"]
    for key, label in FEATURES:
        out.append(f"| {label} | " + " | ".join(_cell(c.spelling.get(key, "—")) for c in caps) + " |")
    out += ["", "## Deploy: how each step is done", "",
            "`fabricgen diff | push | rollback` through each platform's NAPALM driver (`napalm_driver`).", "",
            "| step | " + " | ".join(c.name for c in caps) + " |", "|---" * (len(caps) + 1) + "|",
            "| NAPALM driver | " + " | ".join(_cell(c.napalm_driver or "— (not deployed yet)") for c in caps) + " |"]
    for key, label in DEPLOY_STEPS:
        out.append(f"| {label} | " + " | ".join(_cell(c.deploy.get(key, "—")) for c in caps) + " |")
    out += ["", "### What each result means", "",
            "Every result of `push`, `push --resume` and `rollback` is read on the device, never taken from the "
            "journal alone:", ""]
    out += [f"- **{state}**: {_cell(meaning)}" for state, meaning in outcomes]
    out += ["", "## Owned sections", ""]
    for c in caps:
        out += [f"- **{c.name}**: " + "; ".join(_cell(s) for s in c.owned_sections)]
    return "\n".join(out) + "\n"


# What each per-port setting key of the owned views means, for the reader table (keys not listed show as they are).
SETTING_LABELS: dict[str, str] = {
    "admin_up": "admin state", "description": "description", "mode": "port mode (routed / switched)",
    "mtu": "MTU in the port's mode", "speed_mbps": "speed", "fec": "FEC", "lanes": "lanes",
    "cable_m": "cable length", "headroom": "PFC headroom (xon / xoff / size)", "lossless": "lossless",
    "pfc_priorities": "PFC enable (priorities)", "access_vlan": "access VLAN", "tagged_vlans": "tagged (trunk) VLANs",
    "qos": "per-port QoS: trust, DSCP→TC, TC→PG, PFC→queue, schedulers, ECN, watchdog",
    "rdma_device": "RDMA device", "trust": "trust", "dscp2prio": "DSCP → priority (all 64)",
    "pfc": "PFC enable (8 priorities)", "prio_tc": "priority → TC",
    "tsa": "TC scheduler (strict / ETS)", "tcbw": "ETS shares", "dcqcn_priorities": "DCQCN priorities",
    "dcqcn_enabled": "DCQCN on", "cnp_dscp": "CNP DSCP", "cnp_priority": "CNP priority", "roce_tos": "RoCE ToS",
}


def readers_markdown() -> str:
    """The table of what each platform's config reader reads back per port (``Capability.port_settings``): what
    `lint --configs` compares with the intent (FG-CFG-001) and tests/test_lint_completeness.py mutates."""
    caps = [get_platform(name).capability for name in platform_names()]
    settings = sorted({s for c in caps for s in c.port_settings}, key=lambda s: (SETTING_LABELS.get(s) or s).lower())
    out = ["| per-port setting | " + " | ".join(c.name for c in caps) + " |", "|---" * (len(caps) + 1) + "|"]
    for setting in settings:
        marks = ["✓" if setting in c.port_settings else "—" for c in caps]
        out.append(f"| {_cell(SETTING_LABELS.get(setting, setting))} (`{setting}`) | " + " | ".join(marks) + " |")
    return "\n".join(out)
