"""The command grammar of the lab's NX-OS target (test infrastructure): which command forms each configuration
mode takes, so that a misspelt keyword or a command in the wrong mode is refused as NX-OS's parser refuses it,
instead of passing silently because only values were checked.

A config file (a ``configure replace`` user file, a rollback file) is read the way a running-config is written:
indentation is structure, a mode-entering line (``interface …``, ``policy-map type queuing …``, ``class …``) opens
a mode for the lines indented under it, ``!`` lines and blank lines are comments. Every other line must match one
form of the table in the mode its indentation puts it in; the first failure is reported with NX-OS's marker
(``% Invalid command at '^' marker.`` or, when the line stops short of a complete form, ``% Incomplete command at
'^' marker.``), the line echoed and the caret under the first word the parser could not take.

The table, COMMANDS, holds every form fabricgen renders for NX-OS (templates/nxos/nxos.cfg.j2) and the forms the
lab's starting running-config holds (tests/targets/data/nxos/running-config.cfg: a configure replace file is the
whole running config, so its lines go back to the switch too). Each form names the Cisco document its syntax was
checked against and how far:

* ``VERIFIED``: the form (keywords and mode) was read in Cisco's own text;
* ``PARTLY``: Cisco's text read here shows the command family or the keyword, not the whole line as rendered
  (the note says which part is unconfirmed);
* ``UNVERIFIED``: no Cisco text showing the syntax could be read here; the form is the one fabricgen renders
  (from the Azure Local reference ToR QoS policy for Nexus, see fabricgen/platforms/nxos/render.py) or the one
  the lab's starting running-config holds. A real switch may refuse such a form: these are the lines to check on
  hardware first.

Values are checked for shape only here (a number where a number goes, an address where an address goes); the
ranges (MTU, speeds, FEC modes, qos-group, DSCP, CoS) stay with the target's value checks (tests/targets/nxos.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from ipaddress import ip_address, ip_interface

VERIFIED = "verified"
PARTLY = "partly verified"
UNVERIFIED = "unverified"

# --- the Cisco documents (as read for this table) ----------------------------------------------------------
QOS_GUIDE_7X = ("Cisco Nexus 9000 Series NX-OS Quality of Service Configuration Guide, Release 7.x, 'Configuring "
                "Priority Flow Control', steps 20-21 (copy at manualslib.com/manual/2396766, p. 172)")
PFC_GUIDE_105X = ("Cisco Nexus 9000 Series NX-OS Quality of Service Configuration Guide, Release 10.5(x), 'Configuring "
                  "Priority Flow Control' (cisco.com/c/en/us/td/docs/dcn/nx-os/nexus9000/105x/configuration/qos/"
                  "cisco-nexus-9000-series-nx-os-quality-of-service-configuration-guide-105x/"
                  "m-configuring-priority-flow-control.html)")
QUEUING_GUIDE_103X = ("Cisco Nexus 9000 NX-OS Quality of Service Configuration Guide, Release 10.3(x), 'Configuring "
                      "Queuing and Scheduling' (cisco.com/c/en/us/td/docs/dcn/nx-os/nexus9000/103x/configuration/qos/"
                      "cisco-nexus-9000-nx-os-quality-of-service-configuration-guide-103x/"
                      "m-configuring-queuing-and-scheduling.html)")
SDK = ("Cisco Nexus 3000 and 9000 Series NX-API REST SDK User Guide and API Reference, Release 9.3(x) "
       "(developer.cisco.com/docs/cisco-nexus-3000-and-9000-series-nx-api-rest-sdk-user-guide-and-api-reference-"
       "release-9-3x/)")
SDK_CLASS_MAPS = f"{SDK}, 'Configuring QoS Class Maps'"
SDK_POLICY_MAPS = f"{SDK}, 'Configuring QoS Policy Maps'"
SDK_NETWORK_QOS = f"{SDK}, 'Configuring a User-Defined Network QoS Policy'"
SDK_PFC = f"{SDK}, 'Configuring Priority Flow Control'"
SDK_PFC_PORT = f"{SDK}, 'Configuring Priority Flow Control on an Ethernet Interface'"
NAC_NETWORK_QOS = ("Cisco Network as Code data model, NX-OS 'Network QoS' (netascode.cisco.com/docs/data_models/"
                   "nxos/qos/network_qos/)")
SDK_LLFC_WATCHDOG = f"{SDK}, 'Configuring LLFC Watch-Dog Interval Globally'"
N5K_QOS_GUIDE = ("Cisco Nexus 5000 Series NX-OS Quality of Service Configuration Guide, 'Configuring QoS' (cisco.com/c/"
                 "en/us/td/docs/switches/datacenter/nexus5000/sw/qos/b_Cisco_Nexus_5000_Series_NX-OS_Quality_of_"
                 "Service_Configuration_Guide/b_Cisco_Nexus_5000_Series_NX-OS_Quality_of_Service_Configuration_"
                 "Guide_chapter_011.html)")
NO_CISCO_TEXT = "no Cisco text showing this syntax could be read here"
RENDERED_FROM = ("the form fabricgen renders (fabricgen/platforms/nxos/render.py: the Azure Local reference ToR "
                 "policy)")
LAB_BASE = "a line of the lab's starting running-config (tests/targets/data/nxos/running-config.cfg)"

# --- modes (named after NX-OS's prompts where Cisco's text shows them) --------------------------------------
CONFIG = "config"
IF_ETHERNET = "config-if (Ethernet)"
IF_MGMT = "config-if (mgmt0)"
IF_LOOPBACK = "config-if (loopback)"
CMAP_QOS = "config-cmap-qos"
PMAP_QOS = "config-pmap-qos"
PMAP_C_QOS = "config-pmap-c-qos"
PMAP_QUE = "config-pmap-que"
PMAP_C_QUE = "config-pmap-c-que"
PMAP_NQOS = "config-pmap-nqos"
PMAP_NQOS_C = "config-pmap-nqos-c"
SYS_QOS = "config-sys-qos"
VRF = "config-vrf"
VLAN = "config-vlan"
VDC = "config-vdc"
ACL = "config-acl"
LINE = "config-line"
ROUTER = "config-router"
ROUTER_AF = "config-router-af"
NEIGHBOR = "config-router-neighbor"
NEIGHBOR_AF = "config-router-neighbor-af"


@dataclass(frozen=True)
class Command:
    """One command form: ``syntax`` is words separated by spaces, each a keyword, ``a|b`` (one of the keywords) or
    ``<kind>`` (a value, see KINDS; ``<text>`` takes the rest of the line)."""

    mode: str
    syntax: str
    status: str
    source: str
    note: str = ""
    enters: str | None = None

    @property
    def words(self) -> list[str]:
        return self.syntax.split()


def _is_ip(value: str, version: int, prefix: bool) -> bool:
    try:
        parsed = ip_interface(value) if prefix else ip_address(value)
    except ValueError:
        return False
    return parsed.version == version and ("/" in value) == prefix


KINDS: dict[str, Callable[[str], bool]] = {
    "name": lambda w: re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:$/-]*", w) is not None,
    "word": lambda w: True,  # any one word (a hash, a key)
    "int": str.isdigit,
    "dscp-list": lambda w: re.fullmatch(r"\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*", w) is not None,
    "cos-list": lambda w: re.fullmatch(r"\d(?:,\d)*", w) is not None,
    "ipv4": lambda w: _is_ip(w, 4, False),
    "ipv4-prefix": lambda w: _is_ip(w, 4, True),
    "ipv6": lambda w: _is_ip(w, 6, False),
    "ipv6-prefix": lambda w: _is_ip(w, 6, True),
    "ethernet": lambda w: re.fullmatch(r"Ethernet\d+/\d+(?:/\d+)?", w) is not None,
    "loopback": lambda w: re.fullmatch(r"loopback\d+", w) is not None,
}

_QOS = "fabricgen's classification policy"
_WRED = ("random-detect minimum-threshold <int> packets|bytes|kbytes|mbytes maximum-threshold <int> "
         "packets|bytes|kbytes|mbytes drop-probability <int> weight <int> ecn")

COMMANDS: tuple[Command, ...] = (
    # --- classification: class-map type qos / policy-map type qos (fabricgen's FG_* classes, FABRICGEN_QOS) --
    Command(CONFIG, "class-map type qos match-all|match-any <name>", PARTLY, SDK_CLASS_MAPS,
            "Cisco's CLI line reads `class-map type qos class1`; `match-all` is read only as the DME attribute "
            "matchType \"match-all\" of the same example", enters=CMAP_QOS),
    Command(CMAP_QOS, "match dscp <dscp-list>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(CMAP_QOS, "match cos <cos-list>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "policy-map type qos <name>", PARTLY, SDK_POLICY_MAPS,
            "Cisco's CLI line reads `policy-map type queuing foo`; the `type qos` variant is not shown there",
            enters=PMAP_QOS),
    Command(PMAP_QOS, "class <name>", UNVERIFIED, NO_CISCO_TEXT, f"{RENDERED_FROM}; `class class-default` too",
            enters=PMAP_C_QOS),
    Command(PMAP_C_QOS, "set qos-group <int>", UNVERIFIED, NO_CISCO_TEXT,
            f"{RENDERED_FROM}; {SDK_NETWORK_QOS} shows a DME attribute setQosGroup, not this CLI line"),
    # --- egress queuing: policy-map type queuing (FABRICGEN_QUEUING) ------------------------------------------
    Command(CONFIG, "policy-map type queuing <name>", VERIFIED, SDK_POLICY_MAPS,
            "CLI line `policy-map type queuing foo`", enters=PMAP_QUE),
    Command(PMAP_QUE, "class type queuing <name>", UNVERIFIED, NO_CISCO_TEXT,
            f"{RENDERED_FROM}; {SDK_CLASS_MAPS} says queuing classes are the system-defined ones (c-out-8q-q…)",
            enters=PMAP_C_QUE),
    Command(PMAP_C_QUE, "bandwidth remaining percent <int>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(PMAP_C_QUE, "priority level <int>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(PMAP_C_QUE, _WRED, UNVERIFIED, QUEUING_GUIDE_103X,
            "the guide's WRED/ECN section was read only in its introduction (\"ECN is an extension to WRED that "
            "marks packets instead of dropping them\"); the syntax line was not readable here. The threshold units "
            "are the Cisco NX-OS device YANG model's ipqos_ThreshUnit (per fabricgen/platforms/nxos/render.py, "
            "not re-read here)"),
    # --- no-drop classes and MTU: policy-map type network-qos (FABRICGEN_NETWORK_QOS) ---------------------------
    Command(CONFIG, "policy-map type network-qos <name>", PARTLY, SDK_NETWORK_QOS,
            "the CLI example was readable only as far as `policy-map type netwo…`", enters=PMAP_NQOS),
    Command(PMAP_NQOS, "class type network-qos <name>", PARTLY, SDK_NETWORK_QOS,
            "the DME example puts class c-8q-nq3 under a network-qos policy-map; the CLI line was not readable",
            enters=PMAP_NQOS_C),
    Command(PMAP_NQOS_C, "pause pfc-cos <cos-list>", PARTLY, N5K_QOS_GUIDE,
            "the Nexus 5000 guide names the `pause no-drop` policy and its `pfc-cos` parameter of a network-qos "
            "class; the Nexus 9000 line (without `no-drop`) was not read in Cisco's text"),
    Command(PMAP_NQOS_C, "mtu <int>", PARTLY, N5K_QOS_GUIDE,
            "the Nexus 5000 guide: \"Each system class has a default MTU and the system class MTU is configurable\"; "
            "the command line itself was not read"),
    # --- system qos ------------------------------------------------------------------------------------------
    Command(CONFIG, "system qos", VERIFIED, N5K_QOS_GUIDE, "`switch(config)# system qos` (an NX-OS guide of the "
            "Nexus 5000; the Nexus 9000 guide's line was not read)", enters=SYS_QOS),
    Command(SYS_QOS, "service-policy type network-qos <name>", VERIFIED, N5K_QOS_GUIDE,
            "`switch(config-sys-qos)# service-policy type network-qos fcoe-default-nq-policy`"),
    Command(SYS_QOS, "service-policy type queuing input|output <name>", VERIFIED, N5K_QOS_GUIDE,
            "`switch(config-sys-qos)# service-policy type queuing output fcoe-default-out-policy`"),
    # --- PFC watchdog (global) --------------------------------------------------------------------------------
    Command(CONFIG, "priority-flow-control watch-dog-interval on|off", UNVERIFIED, QOS_GUIDE_7X,
            "the guide has a section 'Configuring a Priority Flow Control Watchdog Interval' but its command lines "
            f"were not on the page read; {SDK_LLFC_WATCHDOG} shows the link-level analogue `link-level-flow-control "
            "watch-dog-interval on`"),
    Command(CONFIG, "priority-flow-control watch-dog interval <int>", UNVERIFIED, PFC_GUIDE_105X,
            "the guide's 'About Priority Flow Control Watchdog' describes the watchdog interval and the 100 ms poll, "
            f"and {NAC_NETWORK_QOS} the global watchdog's poll interval and shutdown/restore multipliers; the command "
            "lines were not readable in either"),
    Command(CONFIG, "priority-flow-control watch-dog shutdown-multiplier <int>", UNVERIFIED, PFC_GUIDE_105X,
            "the guide describes a shutdown multiplier; the command line was not readable here"),
    Command(CONFIG, "priority-flow-control watch-dog restore-multiplier <int>", UNVERIFIED, SDK_PFC,
            "NOT confirmed: Cisco's SDK shows a different restore command, `priority-flow-control fixed-restore…` "
            "(DME fixedRestoreMultiplier, 9.3(3)); which spelling NX-OS 10.3 takes must be checked on a switch"),
    # --- VLAN, management VRF -------------------------------------------------------------------------------
    Command(CONFIG, "vlan <int>", UNVERIFIED, NO_CISCO_TEXT, f"{RENDERED_FROM}; oob switches", enters=VLAN),
    Command(VLAN, "name <name>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(CONFIG, "vrf context <name>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM, enters=VRF),
    Command(VRF, "ip route <ipv4-prefix> <ipv4>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(VRF, "ipv6 route <ipv6-prefix> <ipv6>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(VRF, "ip name-server <ipv4>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    # --- interfaces ---------------------------------------------------------------------------------------------
    Command(CONFIG, "interface <ethernet>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM, enters=IF_ETHERNET),
    Command(IF_ETHERNET, "priority-flow-control mode auto|on|off", VERIFIED, QOS_GUIDE_7X,
            f"step 20: `priority-flow-control mode {{ auto | on | off }}` in (config-if); {SDK_PFC} lists the same "
            f"three modes; {SDK_PFC_PORT}: `interface eth1/2` / `  priority-flow-control mode auto`"),
    Command(IF_ETHERNET, "service-policy type qos input <name>", VERIFIED, QOS_GUIDE_7X,
            f"step 21: `service-policy type qos input policy-name` in (config-if); {_QOS}"),
    Command(IF_ETHERNET, "priority-flow-control watch-dog-interval on|off", UNVERIFIED, QOS_GUIDE_7X,
            "per-port form of the global command; not in the steps read"),
    Command(IF_ETHERNET, "description <text>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_ETHERNET, "switchport", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_ETHERNET, "no switchport", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_ETHERNET, "switchport mode access", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_ETHERNET, "switchport access vlan <int>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_ETHERNET, "mtu <int>", UNVERIFIED, NO_CISCO_TEXT,
            f"{RENDERED_FROM}; the project cites Cisco doc 118994 for `no switchport` + `mtu 9216` (not re-read)"),
    Command(IF_ETHERNET, "speed auto|100|1000|10000|25000|40000|50000|100000|200000|400000|800000", UNVERIFIED,
            NO_CISCO_TEXT, f"{RENDERED_FROM}; speeds in Mb/s from the device YANG model's l1 speed enumeration "
            "(not re-read here)"),
    Command(IF_ETHERNET, "fec auto|fc-fec|rs-fec|off|rs-ieee|rs-cons16|kp-fec", UNVERIFIED, NO_CISCO_TEXT,
            f"{RENDERED_FROM}; modes from the device YANG model's l1_FECMode and Cisco bug CSCvy03375's `fec ?` "
            "(not re-read here)"),
    Command(IF_ETHERNET, "shutdown", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_ETHERNET, "no shutdown", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_ETHERNET, "ip address <ipv4-prefix>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "interface mgmt0", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM, enters=IF_MGMT),
    Command(IF_MGMT, "description <text>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_MGMT, "vrf member <name>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_MGMT, "ip address <ipv4-prefix>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_MGMT, "ipv6 address <ipv6-prefix>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_MGMT, "mtu <int>", UNVERIFIED, NO_CISCO_TEXT, RENDERED_FROM),
    Command(IF_MGMT, "ip access-group <name> in|out", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "interface <loopback>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE, enters=IF_LOOPBACK),
    Command(IF_LOOPBACK, "ip address <ipv4-prefix>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    # --- the rest of the lab's starting running-config (never rendered by fabricgen, sent back by replace) -------
    Command(CONFIG, "version <text>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "hostname <name>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "vdc <name> id <int>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE, enters=VDC),
    Command(VDC, "limit-resource vlan|vrf minimum <int> maximum <int>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "feature <name>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "username <name> password 5 <word> role <name>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "ip domain-lookup", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "copp profile strict|moderate|lenient|dense", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "snmp-server user <name> <name> auth md5|sha <word> priv <word> localizedkey", UNVERIFIED,
            NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "rmon event <int> <text>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "ntp server <ipv4> use-vrf <name>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "ip access-list <name>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE, enters=ACL),
    Command(ACL, "<int> permit|deny <text>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "line console|vty", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE, enters=LINE),
    Command(LINE, "access-class <name> in|out", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(CONFIG, "router bgp <int>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE, enters=ROUTER),
    Command(ROUTER, "router-id <ipv4>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(ROUTER, "address-family ipv4 unicast", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE, enters=ROUTER_AF),
    Command(ROUTER_AF, "network <ipv4-prefix>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(ROUTER_AF, "maximum-paths <int>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(ROUTER, "neighbor <ipv4>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE, enters=NEIGHBOR),
    Command(NEIGHBOR, "remote-as <int>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(NEIGHBOR, "description <text>", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE),
    Command(NEIGHBOR, "address-family ipv4 unicast", UNVERIFIED, NO_CISCO_TEXT, LAB_BASE, enters=NEIGHBOR_AF),
)

INVALID = "% Invalid command at '^' marker."
INCOMPLETE = "% Incomplete command at '^' marker."


class GrammarError(Exception):
    """A line the table does not take; ``str()`` is the CLI's reply: the line, the caret, the marker message."""

    def __init__(self, number: int, line: str, column: int, message: str) -> None:
        self.number, self.line, self.column, self.message = number, line, column, message
        super().__init__(f"line {number}:\n{line.strip()}\n{' ' * column}^\n{message}")


def _word_fits(spec: str, word: str) -> bool:
    if spec.startswith("<") and spec.endswith(">"):
        return KINDS[spec[1:-1]](word)
    return word in spec.split("|")


def _match_depth(command: Command, words: list[str]) -> tuple[int, bool]:
    """(how many of ``words`` the form takes before it fails, whether it takes them all and is complete)."""
    specs = command.words
    for index, spec in enumerate(specs):
        if spec == "<text>":
            return (len(words), True) if index < len(words) else (index, False)
        if index >= len(words):
            return index, False
        if not _word_fits(spec, words[index]):
            return index, False
    return min(len(specs), len(words)), len(words) == len(specs)


def match(mode: str, body: str) -> Command:
    """The form of ``mode`` that takes ``body`` (a stripped line); GrammarError (line 0) when none does."""
    words = body.split()
    deepest = 0
    for command in COMMANDS:
        if command.mode != mode:
            continue
        depth, whole = _match_depth(command, words)
        if whole:
            return command
        deepest = max(deepest, depth)
    # every word taken by some form that wants more: the line stops short (NX-OS's "Incomplete command")
    incomplete = bool(words) and deepest == len(words)
    raise GrammarError(0, body, _column(body, deepest), INCOMPLETE if incomplete else INVALID)


def _column(body: str, word_index: int) -> int:
    """Where the ``word_index``-th word of ``body`` starts (its end when there are fewer words)."""
    spans = [found.start() for found in re.finditer(r"\S+", body)]
    return spans[word_index] if word_index < len(spans) else len(body)


def check(text: str) -> None:
    """Every command line of a config file in its mode (see the module docstring); GrammarError at the first that
    is not, with the file's line number and the caret placed in the echoed line."""
    stack: list[tuple[int, str]] = [(-1, CONFIG)]
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        body = line.strip()
        if not body or body.startswith("!"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        while stack[-1][0] >= indent:
            stack.pop()
        try:
            command = match(stack[-1][1], body)
        except GrammarError as refused:
            raise GrammarError(number, body, refused.column, refused.message) from None
        if command.enters is not None:
            stack.append((indent, command.enters))


def table() -> list[tuple[str, str, str, str, str]]:
    """The table as rows (mode, syntax, status, source, note), for a reader or a report."""
    return [(c.mode, c.syntax, c.status, c.source, c.note) for c in COMMANDS]
