"""The text a GPU host prints for `fabricgen observe`, shared by the ConnectX and the generic-dcb readers.

One command per host (:func:`host_command`) prints, for each RDMA NIC port, a `== <interface>` line, then
`ethtool -S <interface>` ("NIC statistics:" and one `name: value` per line, as ethtool's do_gstats prints them),
then `carrier_changes: N` from /sys/class/net/<interface>/carrier_changes; then every RDMA hw_counter as
`grep -H` prints it: `/sys/class/infiniband/<dev>/ports/<n>/hw_counters/<name>:<value>`. Reading only. As the
rendered host scripts do, sysfs is `${FABRICGEN_SYSFS:-/sys}`: the real /sys unless a test points at a fake tree.
"""

from __future__ import annotations

import re
import shlex

from fabricgen.observe.model import ParseError

_STAT = re.compile(r"^[ \t]*([A-Za-z0-9_.\[\]-]+): *(-?[0-9]+)[ \t]*$", re.MULTILINE)
_HW_COUNTER = re.compile(r"^/sys/class/infiniband/([^/\n]+)/ports/[0-9]+/hw_counters/([A-Za-z0-9_]+):([0-9]+)[ \t]*$",
                         re.MULTILINE)


def host_command(interfaces: list[str]) -> str:
    words = " ".join(shlex.quote(name) for name in interfaces)
    return (f"SYSFS=\"${{FABRICGEN_SYSFS:-/sys}}\"; for i in {words}; do echo \"== $i\"; ethtool -S \"$i\" 2>&1; "
            "echo \"carrier_changes: $(cat \"$SYSFS/class/net/$i/carrier_changes\" 2>/dev/null || echo -1)\"; "
            "done; grep -H . \"$SYSFS\"/class/infiniband/*/ports/*/hw_counters/* 2>/dev/null "
            "| sed \"s|^$SYSFS|/sys|\"; true")


def split(device: str, text: str) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """({interface: {ethtool stat: value}}, {rdma device: {hw_counter: value}}) from :func:`host_command`'s output.
    Lines that are none of those (ethtool's "NIC statistics:", an error message) are skipped. Whole-text regular
    expressions rather than a loop over lines: 4,096 hosts print 2.5 million lines (bench/observe.py)."""
    interfaces: dict[str, dict[str, int]] = {}
    for name, pairs in ethtool_sections(text):
        stats = interfaces.setdefault(name, {})
        stats.update((key, int(value)) for key, value in pairs)
    rdma = hw_counters(text)
    if not interfaces and not rdma:
        raise ParseError(f"{device}: the counter command printed no ethtool statistics and no RDMA hw_counters")
    return interfaces, rdma


def ethtool_sections(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """[(interface, [(stat, digits)] in printed order)] of each `== <interface>` section, as printed (an interface
    may appear twice; :func:`split` merges, the later value winning)."""
    sections = []
    for section in ("\n" + text).split("\n== ")[1:]:
        name, _, body = section.partition("\n")
        sections.append((name.strip(), _STAT.findall(body)))
    return sections


def hw_counters(text: str) -> dict[str, dict[str, int]]:
    """{rdma device: {hw_counter: value}} of the `grep -H` lines."""
    rdma: dict[str, dict[str, int]] = {}
    for rdma_device, name, value in _HW_COUNTER.findall(text):
        rdma.setdefault(rdma_device, {})[name] = int(value)
    return rdma
