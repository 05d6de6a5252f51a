"""Building blocks shared by the intent and inventory schemas.

Every string that can reach a rendered file has a type here whose values cannot carry a second config line, a
shell word or a path: the check is made once, at load, so no renderer has to escape (and none can forget to).
"""

from __future__ import annotations

import re
import unicodedata
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, StringConstraints, WithJsonSchema
from pydantic_core import PydanticCustomError


class StrictModel(BaseModel):
    """Unknown keys are errors: a misspelt ``loseless: true`` must not silently render a lossy fabric."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def refuse(kind: str, message: str, hint: str) -> PydanticCustomError:
    """A validation error whose ``hint`` load prints after the message, as ``message (hint)``. Neither may quote
    the refused value raw: it may hold the very line break it is refused for."""
    return PydanticCustomError(kind, message.replace("{", "{{").replace("}", "}}"), {"hint": hint})


# --- free text ------------------------------------------------------------------------------------------

# Every code point that some reader takes as the end of a line: Python's str.splitlines(), Unicode line
# breaking (NEL, LS, PS) and the ASCII ones (LF, VT, FF, CR, FS/GS/RS). They are also Unicode categories
# Cc/Zl/Zp, refused below with every other control, format, private-use, surrogate or unassigned code point.
LINE_BREAKS = "\n\x0b\x0c\r\x1c\x1d\x1e\x85\u2028\u2029"
_REFUSED_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def _single_line(value: str) -> str:
    for char in value:
        if unicodedata.category(char) in _REFUSED_CATEGORIES:
            what = "a line break" if char in LINE_BREAKS else "a control or invisible character"
            raise refuse("single_line", f"{what} (U+{ord(char):04X}) is not allowed here",
                         "write one line of printable text: the value is copied into rendered files")
    return value


# Names end up in device configs (map names, descriptions, comments; SONiC caps names at 32 chars).
# Restricting them to a safe alphabet is what guarantees that no string from the intent or inventory
# can inject an extra config line.
ClassName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,25}$")]
DEVICE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"
DeviceName = Annotated[str, StringConstraints(pattern=DEVICE_NAME)]


def name_like(pattern: str, what: str) -> AfterValidator:
    """The check of a name type's pattern, for fields that only refer to a name (a waiver's device or port): the
    same values pass, without a second copy of the pattern in the published JSON schema."""
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise refuse("name", f"not a {what} name", "use letters, digits, '.', '_', '-' (and '/' in port "
                         "names), as the inventory names it")
        return value
    return AfterValidator(check)


# Free text (e.g. a fabric description): printable, single line, no config-comment breakers. The pattern covers
# ASCII (and is what the JSON schema shows); the validator also refuses NEL, LS, PS and other non-ASCII controls.
Text = Annotated[str, StringConstraints(pattern=r"^[^\x00-\x1f\x7f]{0,200}$"), AfterValidator(_single_line)]


def _hardware(value: str) -> str:
    # Written into config comments and SONiC's DEVICE_METADATA: a model or HWSKU name is one word.
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}", value):
        raise refuse("hardware", "a hardware model must be one word of letters, digits, '.', '_', '+', '-'",
                     "write the model or SONiC HWSKU as the vendor spells it, e.g. ACS-MSN4700")
    return value


Hardware = Annotated[Text, AfterValidator(_hardware)]


# --- port names -----------------------------------------------------------------------------------------

def not_a_path(value: str) -> str:
    # Port names become path components on hosts (/sys/class/net/<name>) and keys elsewhere: `.`/`..` segments
    # and empty segments would make them mean another place. A name without '/' is its one segment (checked
    # without splitting: 150k port names at 32,768 GPUs).
    if ".." in value or (value in ("", ".") if "/" not in value else
                         any(segment in ("", ".") for segment in value.split("/"))):
        raise refuse("port_path", "a port name cannot contain '..', an empty '/' segment or a trailing '/'",
                     "write the interface name as the platform shows it, e.g. Ethernet1/1 or ens1f0np0")
    return value


PORT_NAME = r"^[A-Za-z0-9][A-Za-z0-9/._-]{0,63}$"
PortName = Annotated[str, StringConstraints(pattern=PORT_NAME), AfterValidator(not_a_path)]


def shell_name(interface: str) -> str:
    """``interface`` with every character a bash function name cannot hold as ``_``: the host scripts name one
    function per NIC after it (``nic_<shell_name>``), so two ports of a host must not share one."""
    return "".join(c if c.isalnum() else "_" for c in interface)


# --- addresses ------------------------------------------------------------------------------------------

def _scope_id_free(value: Any) -> Any:
    # Python's ipaddress accepts `fe80::1%<anything but %>` (a scope id, RFC 4007), line breaks included, and
    # prints it back; no platform config takes a scope id in these places, so it is refused before parsing.
    if isinstance(value, str) and "%" in value:
        raise refuse("scope_id", "an IPv6 scope id ('%...') is not allowed here",
                     "drop the '%' and what follows it: configs name the interface elsewhere")
    if isinstance(value, IPv6Address | IPv6Network) and _scope(value) is not None:
        raise refuse("scope_id", "an IPv6 scope id ('%...') is not allowed here",
                     "drop the '%' and what follows it: configs name the interface elsewhere")
    return value


def _scope(value: IPv6Address | IPv6Network) -> str | None:
    return value.scope_id if isinstance(value, IPv6Address) else value.network_address.scope_id


def _written_as_text(value: Any) -> Any:
    # ipaddress also takes integers (and so YAML's true, a bool): `gateway: true` would be 0.0.0.1, a number
    # the address 0.0.0.10 — never what the user meant. Addresses come as text (or already parsed, from code).
    if isinstance(value, int | float):
        raise refuse("address_type", "an address or subnet is written as text, not as a number or true/false",
                     "write it as in 192.0.2.1 or 192.0.2.0/24")
    return value


IpAddress = Annotated[IPv4Address | IPv6Address, BeforeValidator(_scope_id_free), BeforeValidator(_written_as_text),
                      AfterValidator(_scope_id_free)]
IpNetwork = Annotated[IPv4Network | IPv6Network, BeforeValidator(_scope_id_free), BeforeValidator(_written_as_text),
                      AfterValidator(_scope_id_free)]


_DNS_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"


def _hostname(value: str) -> str:
    """Nornir's ``hostname``: an IP address without scope id, or a DNS name (RFC 1123 labels; '_' tolerated)."""
    _scope_id_free(value)
    if ":" in value:
        try:
            IPv6Address(value)
        except ValueError:
            raise refuse("hostname", "not an IPv6 address", "write the management address, e.g. "
                         "2001:db8::11, or a DNS name") from None
        return value
    if len(value) > 253 or not re.fullmatch(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*\.?", value):
        raise refuse("hostname", "not an IP address or DNS name",
                     "write the management address, e.g. 192.0.2.11, or a DNS name of letters, digits, '-', '.'")
    return value


# What editors check (the validator above decides): an IPv6 address's alphabet, or dot-separated DNS labels.
_HOSTNAME_SCHEMA = {"type": "string", "maxLength": 253,
                    "pattern": rf"^(?:[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*|{_DNS_LABEL}(?:\.{_DNS_LABEL})*\.?)$",
                    "description": "Nornir's `hostname`: how to reach the device, an IP address or a DNS name "
                                   "(RFC 1123 labels: letters, digits, '-'; '_' tolerated)"}
Hostname = Annotated[str, AfterValidator(_hostname), WithJsonSchema(_HOSTNAME_SCHEMA)]
