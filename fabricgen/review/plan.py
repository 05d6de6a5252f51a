"""`fabricgen plan`'s core: what changes between two renders of a fabric, per device, for a reviewer.

Pure: it compares what the caller loaded and rendered (``Side``: the rendered files of each device and, when
known, its resolved model) and formats the result as text, JSON or Markdown. Reading git revisions, loading
and rendering happen at the command's edge (fabricgen/cli/plan.py), which reads each file of a base
revision with :func:`revision_blob`: bounded in size (checked with ``git cat-file`` before a byte is read) and
in time, as every input file is.

Two views of each changed device:

- a *semantic summary* from the two resolved DeviceModels (fabricgen/models/device.py), compared field by field,
  generically, with readable names and units for the settings a reviewer cares about (PFC priorities, ECN
  thresholds, MTU, headroom, DSCP maps, scheduler weights, PFC watchdog): ``leaf1 Ethernet0: MTU 9100 → 9000``;
- the unified diff of its rendered files.

A device is listed when any file that goes to it differs; one whose files are byte for byte the same is not,
even when its resolved model changed (a GPU host's copy of the fabric's ECN thresholds, which no host file
carries: nothing changes on the host). Neither ``resolved.json`` (fabricgen's record of its decisions, which
the summary puts in words) nor the manifest (hashes and input digests, which change with every edit) is
compared as a file.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import signal
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel

from fabricgen.api import RESOLVED_FILE
from fabricgen.load.yamlsource import MAX_FILE_BYTES, Limit
from fabricgen.models.device import DeviceModel

Change = Literal["changed", "added", "removed"]
MAX_MAP_ENTRIES = 8
"""a map (DSCP → TC, ...) shows at most this many changed entries, then how many more"""
MARKDOWN_LIMIT = 60_000
"""characters of a Markdown plan; GitHub refuses a comment over 65,536, so diffs beyond this are left out"""
UNSET = "unset"


@dataclass(frozen=True)
class Side:
    """One end of the comparison: every rendered file (``<device>/<file>`` → text, no manifest) and the
    resolved model of every device, or None when they are not known (a rendered tree whose resolved.json files
    this fabricgen cannot read)."""

    files: Mapping[str, str]
    models: Mapping[str, DeviceModel] | None
    description: Mapping[str, str] = field(default_factory=dict)
    """what this side is (for the output): kind, revision, commit, path, how it was chosen"""


@dataclass(frozen=True)
class DevicePlan:
    """What changes on one device."""

    device: str
    change: Change
    role: str | None
    platform: str | None
    files: list[str]
    """the device's files that differ (added and removed ones included), sorted; never resolved.json"""
    summary: list[str]
    """one line per port, NIC or the device itself: ``leaf1 Ethernet0: PFC 3 → 3,4; MTU 9100 → 9000``"""
    diff: str
    """unified diff of the changed files (``a/<device>/<file>`` → ``b/<device>/<file>``)"""
    disruption: list[str] | None = None
    """a SONiC switch's ports that GCU takes admin-down and up again going from base to head (None: another
    platform, or a switch one side lacks)"""


@dataclass(frozen=True)
class Plan:
    """The devices that change between two sides, and what each side was."""

    base: Mapping[str, str]
    head: Mapping[str, str]
    semantic: bool
    """whether both sides' models were known (else: file diffs only)"""
    devices: list[DevicePlan]
    unchanged: int

    def names(self, change: Change) -> list[str]:
        return [d.device for d in self.devices if d.change == change]


# --- comparing ----------------------------------------------------------------------------------------------

def compare(base: Side, head: Side) -> Plan:
    """Every device whose rendered files differ between ``base`` and ``head``, in name order."""
    base_files, head_files = _by_device(base.files), _by_device(head.files)
    semantic = base.models is not None and head.models is not None
    devices: list[DevicePlan] = []
    for name in sorted(base_files.keys() | head_files.keys()):
        old, new = base_files.get(name, {}), head_files.get(name, {})
        changed = sorted(f for f in old.keys() | new.keys() if old.get(f) != new.get(f) and f != RESOLVED_FILE)
        if changed:
            before = base.models.get(name) if base.models is not None else None
            after = head.models.get(name) if head.models is not None else None
            devices.append(_device_plan(name, old, new, changed, before, after, semantic))
    return Plan(base.description, head.description, semantic, devices,
                len(base_files.keys() | head_files.keys()) - len(devices))


def _by_device(files: Mapping[str, str]) -> dict[str, dict[str, str]]:
    grouped: dict[str, dict[str, str]] = {}
    for path, text in files.items():
        device, _, name = path.partition("/")
        grouped.setdefault(device, {})[name] = text
    return grouped


def _device_plan(name: str, old: dict[str, str], new: dict[str, str], changed: list[str],
                 before: DeviceModel | None, after: DeviceModel | None, semantic: bool) -> DevicePlan:
    change: Change = "added" if not old else "removed" if not new else "changed"
    known = after or before
    summary = device_summary(name, before, after) if semantic else []
    diff = "".join(file_diff(f"{name}/{f}", old.get(f), new.get(f)) for f in changed)
    return DevicePlan(name, change, known.role if known else None, known.platform if known else None, changed,
                      summary, diff, _bounced(old, new))


def _bounced(old: dict[str, str], new: dict[str, str]) -> list[str] | None:
    """The ports a SONiC switch holding the base bounces when the head is pushed (its config_db.json both sides)."""
    if "config_db.json" not in old or "config_db.json" not in new:
        return None
    from fabricgen.platforms.sonic.gcu import CandidateError, bounced_between

    try:
        return bounced_between(old["config_db.json"], new["config_db.json"])
    except (CandidateError, ValueError):
        return None


def file_diff(path: str, old: str | None, new: str | None) -> str:
    """Unified diff of one file (3 lines of context); an absent side is /dev/null, as git shows it. Every line
    ends with a newline, also a last line that had none (marked as git marks it)."""
    lines = difflib.unified_diff(_lines(old), _lines(new), "/dev/null" if old is None else f"a/{path}",
                                 "/dev/null" if new is None else f"b/{path}", n=3)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _lines(text: str | None) -> list[str]:
    """Lines as git splits them: at "\n" only (str.splitlines would also split at form feeds, U+2028, ...)."""
    if text is None:
        return []
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


# --- the semantic summary -----------------------------------------------------------------------------------

Format = Callable[[Any], str]


def _bytes(value: int) -> str:
    """Bytes as the intent writes them: KB = 1000 bytes (``ecn: {max: 40KB}``), else plain bytes."""
    return f"{value // 1000} KB" if value and value % 1000 == 0 else f"{value} B"


def _priorities(value: Sequence[int]) -> str:
    return ",".join(str(v) for v in value) or "none"


def _flags(value: Sequence[int]) -> str:
    """8 per-priority flags (a NIC's PFC vector) → the priorities that are on."""
    return _priorities([priority for priority, on in enumerate(value) if on])


def _speed(mbps: int) -> str:
    return f"{mbps // 1000}G" if mbps % 1000 == 0 else f"{mbps} Mb/s"


_FIELDS: dict[tuple[str, str], tuple[str, Format | None]] = {
    # (model, field) → (label, format of one value); a field not listed is named after itself.
    ("DeviceModel", "mgmt"): ("mgmt", None), ("DeviceModel", "qos"): ("", None), ("DeviceModel", "host"): ("", None),
    ("PortModel", "admin_up"): ("admin up", None), ("PortModel", "speed_mbps"): ("speed", _speed),
    ("PortModel", "fec"): ("FEC", None), ("PortModel", "mtu"): ("MTU", None),
    ("PortModel", "cable_m"): ("cable", lambda v: f"{v} m"), ("PortModel", "pfc_priorities"): ("PFC", _priorities),
    ("PortModel", "access_vlan"): ("access VLAN", None), ("PortModel", "tagged_vlans"): ("tagged VLANs", None),
    ("PortModel", "qos"): ("QoS override", None), ("PortModel", "headroom"): ("headroom", None),
    ("HeadroomModel", "xon"): ("xon", _bytes), ("HeadroomModel", "xoff"): ("xoff", _bytes),
    ("HeadroomModel", "size"): ("size", _bytes), ("HeadroomModel", "release"): ("SONiC release", None),
    ("QosModel", "dscp_to_tc"): ("DSCP→TC", None), ("QosModel", "tc_to_pg"): ("TC→PG", None),
    ("QosModel", "tc_to_queue"): ("TC→queue", None),
    ("QosModel", "pfc_priority_to_queue"): ("PFC priority→queue", None),
    ("QosModel", "lossless_priorities"): ("lossless priorities", _priorities),
    ("QosModel", "rdma_dscp"): ("RDMA DSCP", None), ("QosModel", "rdma_priority"): ("RDMA priority", None),
    ("QosModel", "cnp_dscp"): ("CNP DSCP", None), ("QosModel", "cnp_priority"): ("CNP priority", None),
    ("QosModel", "watchdog"): ("PFC watchdog", None), ("QosModel", "queues"): ("queue", None),
    ("QueueModel", "traffic_class"): ("TC", None), ("QueueModel", "class_name"): ("class", None),
    ("QueueModel", "weight"): ("DWRR weight", lambda v: f"{v} %"), ("QueueModel", "ecn"): ("ECN", None),
    ("EcnThresholds", "min_bytes"): ("kmin", _bytes), ("EcnThresholds", "max_bytes"): ("kmax", _bytes),
    ("EcnThresholds", "probability_pct"): ("probability", lambda v: f"{v} %"),
    ("WatchdogModel", "detection_ms"): ("detection", lambda v: f"{v} ms"),
    ("WatchdogModel", "restoration_ms"): ("restoration", lambda v: f"{v} ms"),
    ("WatchdogModel", "poll_ms"): ("poll", lambda v: f"{v} ms"),
    ("MgmtModel", "vrf"): ("VRF", None), ("MgmtModel", "vlan"): ("VLAN", None), ("MgmtModel", "mtu"): ("MTU", None),
    ("HostModel", "nccl_env"): ("nccl.env", None), ("HostModel", "path_mtu"): ("path MTU", None),
    ("NicModel", "rdma_device"): ("RDMA device", None), ("NicModel", "mtu"): ("MTU", None),
    ("NicModel", "pfc"): ("PFC", _flags), ("NicModel", "prio_tc"): ("priority→TC", None),
    ("NicModel", "tsa"): ("TSA", None), ("NicModel", "tcbw"): ("ETS shares", None),
    ("NicModel", "dscp2prio"): ("DSCP→priority", None), ("NicModel", "dcqcn_priorities"): ("DCQCN priorities",
                                                                                        _priorities),
    ("NicModel", "dcqcn_enabled"): ("DCQCN", None), ("NicModel", "cnp_dscp"): ("CNP DSCP", None),
    ("NicModel", "cnp_priority"): ("CNP priority", None), ("NicModel", "roce_tos"): ("RoCE ToS", None),
    ("NicModel", "cable_m"): ("cable", lambda v: f"{v} m"), ("NicModel", "xoff_bytes"): ("xoff", _bytes),
}
_SCOPES = {("DeviceModel", "ports"), ("HostModel", "nics")}
"""lists whose items each get a summary line of their own (a switch port, a host NIC)"""
_KEYS = ("name", "interface", "index")
"""the field that names an item of a list of models (ports, NICs, queues), in this order of preference"""


@dataclass(frozen=True)
class _Delta:
    scope: str
    """"" for the device itself, else the port or NIC the change is on"""
    text: str


def device_summary(name: str, before: DeviceModel | None, after: DeviceModel | None) -> list[str]:
    """The changes from ``before`` to ``after`` (None: the device is absent on that side), one line per port,
    NIC or the device itself, in model order: ``leaf1 Ethernet0: PFC 3 → 3,4; MTU 9100 → 9000``."""
    if before is None or after is None:
        present = after or before
        if present is None:
            return []
        return [f"{name}: {'added' if after else 'removed'} ({present.role}, {present.platform})"]
    grouped: dict[str, list[str]] = {}
    for delta in _model_deltas(before, after, "", ""):
        texts = grouped.setdefault(delta.scope, [])
        if delta.text not in texts:  # a host NIC is a port and a NIC: its MTU, PFC and cable are said once
            texts.append(delta.text)
    return [f"{name} {scope}: " + "; ".join(texts) if scope else f"{name}: " + "; ".join(texts)
            for scope, texts in grouped.items()]


def _model_deltas(before: BaseModel | None, after: BaseModel | None, scope: str, label: str) -> Iterator[_Delta]:
    """Field by field, in declaration order; either side may be None (a nested model that one side lacks)."""
    present = after if after is not None else before
    if present is None:
        return
    model = type(present)
    for name in model.model_fields:
        if name in _KEYS and label:  # an item's own name is in its label already
            continue
        old, new = getattr(before, name, None), getattr(after, name, None)
        if old == new:
            continue
        own, fmt = _FIELDS.get((model.__name__, name), (name.replace("_", " "), None))
        here = " ".join(part for part in (label, own) if part)
        if (model.__name__, name) in _SCOPES:
            yield from _item_deltas(old or [], new or [], scope, "", scoped=True)
        elif isinstance(old, BaseModel) or isinstance(new, BaseModel):
            yield from _model_deltas(old, new, scope, here)
        elif _is_model_list(old) or _is_model_list(new):
            yield from _item_deltas(old or [], new or [], scope, here, scoped=False)
        else:
            yield _Delta(scope, _value_change(here, old, new, fmt))


def _is_model_list(value: object) -> bool:
    return isinstance(value, list) and bool(value) and isinstance(value[0], BaseModel)


def _item_deltas(old: list[BaseModel], new: list[BaseModel], scope: str, label: str, scoped: bool) -> Iterator[_Delta]:
    """Items of a list of models, matched by their name (ports, NICs) or index (queues), not by position."""
    before, after = _keyed(old), _keyed(new)
    for key in [*before, *(k for k in after if k not in before)]:
        item_old, item_new = before.get(key), after.get(key)
        if item_old == item_new:
            continue
        name = _item_name(key, item_new or item_old)
        where, here = (name, "") if scoped else (scope, f"{label} {name}")
        if item_old is None or item_new is None:
            yield _Delta(where, " ".join(p for p in (here, "added" if item_new is not None else "removed") if p))
        else:
            yield from _model_deltas(item_old, item_new, where, here)


def _keyed(items: list[BaseModel]) -> dict[object, BaseModel]:
    keyed: dict[object, BaseModel] = {}
    for position, item in enumerate(items):
        keyed[next((getattr(item, k) for k in _KEYS if hasattr(item, k)), position)] = item
    return keyed


def _item_name(key: object, item: BaseModel | None) -> str:
    """A queue is named with its class (``3 (rdma)``); ports and NICs by their name."""
    class_name = getattr(item, "class_name", None)
    return f"{key} ({class_name})" if class_name else str(key)


def _value_change(label: str, old: object, new: object, fmt: Format | None) -> str:
    if isinstance(old, dict | None) and isinstance(new, dict | None):  # a map (DSCP → TC, nccl.env, ...)
        return f"{label} {_map_change(old or {}, new or {})}"
    return f"{label} {_value(old, fmt)} → {_value(new, fmt)}"


def _map_change(old: Mapping[Any, Any], new: Mapping[Any, Any]) -> str:
    """Only the entries that differ: ``26: 3 → 0, 24: 0 → 3``, at most MAX_MAP_ENTRIES of them."""
    keys = sorted((k for k in old.keys() | new.keys() if old.get(k) != new.get(k)), key=_natural)
    shown = [f"{k}: {_value(old.get(k), None)} → {_value(new.get(k), None)}" for k in keys[:MAX_MAP_ENTRIES]]
    more = len(keys) - MAX_MAP_ENTRIES
    return ", ".join(shown) + (f" (and {more} more)" if more > 0 else "")


def _natural(key: object) -> tuple[int, str]:
    return (int(key), "") if isinstance(key, int) else (1 << 30, str(key))


def _value(value: object, fmt: Format | None) -> str:
    if value is None:
        return UNSET
    if fmt is not None:
        return fmt(value)
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "none"
    return str(value)


# --- output -------------------------------------------------------------------------------------------------

def describe(side: Mapping[str, str]) -> str:
    """One line saying what a side is: ``abc1234 (merge base of HEAD and origin/main)``."""
    if side.get("kind") == "git":
        return f"{side['commit'][:12]} ({side['how']})"
    if side.get("kind") == "tree":
        return f"rendered tree {side['path']}"
    return f"working tree ({side.get('intent')}, {side.get('inventory')})"


def _counts(plan: Plan) -> str:
    total = len(plan.devices) + plan.unchanged
    return (f"{len(plan.devices)} of {total} devices change: {len(plan.names('changed'))} changed, "
            f"{len(plan.names('added'))} added, {len(plan.names('removed'))} removed")


def _no_semantic_note(plan: Plan) -> list[str]:
    if plan.semantic:
        return []
    return ["no semantic summary: the base's resolved models are not known (a rendered tree without resolved.json "
            "files this fabricgen reads); file diffs only"]


def to_text(plan: Plan) -> str:
    """Header, one block per device (its files and summary lines), then every diff, then the counts."""
    lines = [f"base: {describe(plan.base)}", f"head: {describe(plan.head)}", *_no_semantic_note(plan)]
    if not plan.devices:
        return "\n".join([*lines, "no device changes"]) + "\n"
    for device in plan.devices:
        kind = f" ({device.role}, {device.platform})" if device.role else ""
        lines += ["", f"{_MARKS[device.change]} {device.device}{kind} {device.change}: {' '.join(device.files)}"]
        lines += [f"    {line}" for line in device.summary]
        lines += [f"  ! {_disruption(device.disruption)}"] if device.disruption is not None else []
        if plan.semantic and device.change == "changed" and not device.summary:
            lines.append("    (the resolved model is the same: only the rendering changed)")
    diffs = "".join(device.diff for device in plan.devices)
    return "\n".join([*lines, ""]) + ("\n" + diffs if diffs else "") + "\n" + _counts(plan) + "\n"


_MARKS: dict[Change, str] = {"changed": "~", "added": "+", "removed": "-"}


def _disruption(ports: list[str]) -> str:
    if not ports:
        return "disruption: none (SONiC GCU bounces no port for this change)"
    return (f"disruption: GCU takes {', '.join(ports)} admin-down and up again on a switch holding the base (its "
            "QUEUE, PORT_QOS_MAP, BUFFER_PG rows change; `fabricgen diff` asks the switch itself)")


def to_json(plan: Plan, lint_errors: int = 0) -> str:
    data = {
        "base": dict(plan.base), "head": dict(plan.head), "semantic_summary": plan.semantic,
        "changed_devices": [{"device": d.device, "change": d.change, "role": d.role, "platform": d.platform,
                             "files": d.files, "summary": d.summary, "diff": d.diff, "disruption": d.disruption}
                            for d in plan.devices],
        "added": plan.names("added"), "removed": plan.names("removed"), "unchanged": plan.unchanged,
        "lint_errors": lint_errors,
    }
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def to_markdown(plan: Plan, lint_errors: int = 0) -> str:
    """A pull-request comment: a heading, a table of the changed devices, each device's diff folded in a
    <details> block. Diffs that would take the comment past MARKDOWN_LIMIT are left out, and the comment says
    so."""
    head = [f"### fabricgen plan: {_counts(plan) if plan.devices else 'no device changes'}", "",
            f"Base: {_cell(describe(plan.base))} · head: {_cell(describe(plan.head))}", ""]
    head += [f"_{_cell(note)}_\n" for note in _no_semantic_note(plan)]
    if lint_errors:
        head.append(f"**Lint finds {lint_errors} error(s) in the head**: run `fabricgen lint`.\n")
    if not plan.devices:
        return "\n".join(head)
    head += ["| device | change | files | summary |", "|---|---|---|---|"]
    head += [f"| {_cell(d.device)} | {d.change} | {_cell(' '.join(d.files))} | "
             f"{'<br>'.join(_cell(_in_row(line, d.device)) for line in d.summary)} |" for d in plan.devices]
    bounce = [f"- {_cell(d.device)}: {_cell(_disruption(d.disruption))}" for d in plan.devices
              if d.disruption is not None]
    head += ["", *bounce] if bounce else []
    text, left_out = "\n".join(head) + "\n", 0
    for device in plan.devices:
        block = _details(device)
        if len(text) + len(block) > MARKDOWN_LIMIT:
            left_out += 1
            continue
        text += block
    if left_out:
        text += f"\n_{left_out} device diff(s) left out to fit a comment: run `fabricgen plan` to see them._\n"
    return text


def _in_row(line: str, device: str) -> str:
    """A summary line without the device name its table row starts with."""
    return line.removeprefix(f"{device}: ").removeprefix(f"{device} ")


def _details(device: DevicePlan) -> str:
    if not device.diff:
        return ""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", device.diff)), default=0))
    return (f"\n<details><summary>{_cell(device.device)}: {_cell(' '.join(device.files))}</summary>\n\n"
            f"{fence}diff\n{device.diff}{fence}\n\n</details>\n")


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell and in HTML: no markup, no column break, one line."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
    return escaped.replace("\n", " ")


# --- reading a base revision: bounded in size and time --------------------------------------------------------

GIT_SECONDS: Final = Limit("FABRICGEN_GIT_SECONDS", 120, "seconds for each git read of the base revision")


class RevisionError(Exception):
    """A file of the base revision cannot be read within the limits (the message names the limit and the fix)."""


def revision_blob(top: Path, commit: str, path: str) -> bytes | None:
    """The file at ``path`` in ``commit`` of the repository at ``top``; None when the commit has no such file.
    Its size is asked first (``git cat-file --batch-check``): a file larger than an input file may be
    (MAX_FILE_BYTES, ``$FABRICGEN_MAX_INPUT_BYTES``) is refused before a byte of it is read, and no read
    takes longer than GIT_SECONDS. RevisionError naming the file, the limit and how to raise it."""
    where = f"{commit[:12]}:{path}"
    if "\n" in path:  # git's batch protocol reads one name per line
        raise RevisionError(f"--base: {where!r}: a path with a line break cannot be read from a revision")
    found = _git_bounded(top, ["cat-file", "--batch-check"], f"{commit}:{path}\n".encode(), 4096, where).split()
    if len(found) != 3 or found[1] != b"blob":  # "<spec> missing", or a folder where a file was expected
        return None
    size, limit = int(found[2]), MAX_FILE_BYTES.value()
    if size > limit:
        raise RevisionError(f"--base: {where} is {size:,} bytes; refusing to read it ({MAX_FILE_BYTES.hint()})")
    return _git_bounded(top, ["cat-file", "blob", found[0].decode()], b"", limit, where)


def _git_bounded(top: Path, args: list[str], stdin: bytes, limit: int, where: str) -> bytes:
    """git's stdout, at most ``limit`` bytes of it (a longer answer is an error), within GIT_SECONDS."""
    seconds = GIT_SECONDS.value()
    try:
        process = subprocess.Popen(["git", "-C", str(top), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as exc:  # git itself is missing
        raise RevisionError(f"--base needs git: {exc}") from None
    try:
        out, _ = process.communicate(stdin, timeout=seconds)
    except subprocess.TimeoutExpired:
        _kill(process)
        raise RevisionError(f"--base: git did not give {where} within {seconds} s; nothing was compared (the "
                            f"limit is {seconds} {GIT_SECONDS.what}; raise it with {GIT_SECONDS.variable}=N on a "
                            "slow disk)") from None
    except BaseException:
        _kill(process)
        raise
    if process.returncode != 0 or len(out) > limit:
        raise RevisionError(f"--base: git cannot read {where} (exit {process.returncode})")
    return out


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()
