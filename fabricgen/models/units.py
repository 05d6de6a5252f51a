"""Units people write in fabric files: byte sizes (``150KB``, ``1.5MB``, ``40000``) and port speeds (``400G``).

KB/MB/GB are decimal (1 KB = 1,000 B) as NVIDIA writes ECN thresholds (``150KB`` = 150,000 B);
KiB/MiB/GiB are binary. Everything resolves to whole bytes and whole Mb/s, the units SONiC stores.

Byte units are taken exactly as spelt here: ``Kb`` and ``kb`` are kilobits to most readers, and ``kB`` or
``mb`` could be either, so any other spelling is refused with the accepted ones rather than guessed.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

_BYTE_UNITS = {"": 1, "B": 1, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
BYTE_UNIT_SPELLINGS = "B, KB, MB, GB (decimal) or KiB, MiB, GiB (binary)"
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
_SPEED = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([GgMm])\s*$")


def parse_bytes(value: Any) -> int:
    """``"150KB"`` → 150000, ``"1.5MiB"`` → 1572864, ``40000`` → 40000."""
    if isinstance(value, bool):
        raise ValueError("expected a size such as 150KB, 1.5MB or a number of bytes")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative")
        return value
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f"{value!r} is not a size; write e.g. 150KB, 1.5MB, 64KiB or 40000 (bytes)")
    unit = match.group(2)
    if unit not in _BYTE_UNITS:
        raise ValueError(f"{value!r} is not a size: unknown unit {unit!r}; the units are {BYTE_UNIT_SPELLINGS}, "
                         "spelt as here (e.g. 150KB, 64KiB)")
    try:
        exact = Decimal(match.group(1)) * _BYTE_UNITS[unit]
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise ValueError(f"{value!r} is not a number") from exc
    if exact != exact.to_integral_value():
        raise ValueError(f"{value!r} is not a whole number of bytes")
    return int(exact)


def parse_speed_mbps(value: Any) -> int:
    """``"400G"`` → 400000, ``"100M"`` → 100 (Mb/s, SONiC's PORT.speed unit)."""
    if isinstance(value, str):
        return _parse_speed_text(value)  # a 70k-port inventory has a handful of distinct speeds
    raise ValueError(f"{value!r} is not a port speed; write e.g. 400G, 100G, 25G or 1G")


@lru_cache(maxsize=256)
def _parse_speed_text(value: str) -> int:
    match = _SPEED.match(value)
    if not match:
        raise ValueError(f"{value!r} is not a port speed; write e.g. 400G, 100G, 25G or 1G")
    scale = 1000 if match.group(2).upper() == "G" else 1
    mbps = Decimal(match.group(1)) * scale
    if mbps != mbps.to_integral_value() or mbps <= 0:
        raise ValueError(f"{value!r} is not a whole number of Mb/s")
    return int(mbps)


def format_speed(mbps: int) -> str:
    return f"{mbps // 1000}G" if mbps % 1000 == 0 else f"{mbps}M"


ByteSize = Annotated[
    int,
    BeforeValidator(parse_bytes),
    WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 0},
                              {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*([KMG]i?B|B)?\s*$"}],
                    "description": "bytes, or a size with unit: 150KB, 1.5MB (decimal) or 64KiB (binary)"}),
]

SpeedMbps = Annotated[
    int,
    BeforeValidator(parse_speed_mbps),
    PlainSerializer(format_speed, return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*[GgMm]\s*$", "examples": ["400G", "100G", "1G"]}),
]
