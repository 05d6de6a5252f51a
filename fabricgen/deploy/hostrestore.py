"""Putting a GPU host's NIC settings back to what they were before a push: a restore script from its ``--check``.

Before a push the host driver runs the rendered NIC script with ``--check``. It prints one line per setting that
the push will change, ``DIFF <name>: have "<current>", want "<wanted>"``, and those ``have`` values are the
snapshot: rollback (and the revert timer on the host) must bring the NIC back to exactly them -- what was there,
not the previous render. :func:`restore_script` turns that output into a self-contained bash script which sets
each named setting back to its ``have`` value with the tools the rendered script uses (``mlnx_qos``, ``dcb``,
``ip``, ``cma_roce_tos``/``cma_roce_mode``, the sysfs/debugfs/configfs knob files, found the same way), reading
each value with the rendered script's own readers, so "restored" means the script would print the same ``have``.

The ``--check`` text comes from the device, so it is treated as hostile: a line is used only when it has exactly
the shape the script prints and each value matches a strict per-setting pattern; names and values are then
single-quoted into the script. Anything else is refused -- listed in ``unrestorable`` with the reason, never
interpolated -- and so is a value no tool can set back (most ``<unset>`` values: the script could not read them,
so nobody knows what to put back). The host driver refuses to push a device with anything unrestorable.

The script restores in the reverse order of the rendered script, as an undo does: the DSCP entries before the
trust they imply (deleting mlx5's last DSCP entry is what returns it to PCP trust), PFC before the ETS it leans
on (bnxt_en refuses PFC without ETS), DCBX last but for the MTU (with the firmware's DCBX back, the NIC may
refuse the other DCB writes). It changes a setting only when it reads differently from the snapshot, keeps going
when one fails (a half-done restore is worse than one that tried everything), then reads every setting again.
It exits 1 naming each setting that does not read back as in the snapshot, and always ends with a summary line.

What no tool can read is not pretended: mlx5's DSCP map for a DSCP without an APP entry (under DSCP trust the
NIC classifies by it, and deleting an entry sets it to 0), so on ConnectX a snapshot with some DSCPs without an
entry and others with one is refused; the RoCE defaults of an RDMA device whose RDMA-CM configfs group did not
exist (the kernel keeps them when the group goes), so on linux-dcb those ``<unset>`` values are refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

from fabricgen import __version__
from fabricgen.models.common import DEVICE_NAME
from fabricgen.platforms.common.hostscript import DCBX_FLAGS, KILL_AFTER_S, TOOL_TIMEOUT_S
from fabricgen.platforms.common.templating import templates_dir

PLATFORMS = ("connectx", "linux-dcb")
UNSET = "<unset>"  # what the script prints for a value it could not read

# Exactly what the rendered scripts' `setting` prints in --check mode (printf 'DIFF %s: have "%s", want "%s"').
# The name's words after the device are the setting; they come from the rendered script, never from a tool.
_DIFF_LINE = re.compile(r'DIFF (?P<subject>\S+) (?P<setting>[a-z0-9. -]+): have "(?P<have>[^"]*)", '
                        r'want "(?P<want>[^"]*)"')
# Linux netdev names as the inventory schema takes them (IFNAMSIZ: 15 characters); RDMA device names likewise.
_NETDEV = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,14}")
_RDMA_DEVICE = re.compile(r"[A-Za-z0-9_]{1,32}")
_NUM_DSCP = 64
# The first line of a rendered linux-dcb NIC function: its netdev and RDMA device (templates/linux_dcb).
_DCB_NIC_LOCALS = re.compile(r"^  local ifname=\S+ rdma=(?P<rdma>\S+) port$", re.M)
_NUMBER = re.compile(r"0|[1-9][0-9]{0,4}")  # as the kernel and the tools print numbers: no sign, no leading 0


@dataclass(frozen=True)
class RestorePlan:
    """The restore script, the settings it puts back (in --check order) and those it cannot, each with why."""

    script: str
    restored: list[str]
    unrestorable: list[str]


class Refused(ValueError):
    """A DIFF line whose current value is not put back; the message says why, for the user."""


@dataclass(frozen=True)
class Diff:
    """One parsed DIFF line: ``subject`` is a netdev or an RDMA device, ``setting`` what of it differs."""

    subject: str
    setting: str
    have: str
    want: str

    @property
    def name(self) -> str:
        return f"{self.subject} {self.setting}"


# A restore step: the DIFF line it undoes -> the bash line that does it (a call of a helper in the script).
Step = Callable[[Diff], str]


def restore_script(platform: str, device: str, check_output: str) -> RestorePlan:
    """The script that puts ``device``'s NIC settings back to the ``have`` values of its ``--check`` output.

    ``platform`` is ``connectx`` or ``linux-dcb`` (the rendered script that printed the output); ``device`` is the
    inventory name. Lines that do not start with ``DIFF`` (notes, ``ok:``) are ignored. Deterministic: the same
    arguments give the same plan, byte for byte.
    """
    if platform not in PLATFORMS:
        raise ValueError(f"{platform!r} is not a GPU-host platform ({', '.join(PLATFORMS)})")
    if not re.fullmatch(DEVICE_NAME, device):
        raise ValueError(f"{device!r} is not a device name")
    steps = _STEPS[platform]
    lines: list[str] = []
    restored: list[str] = []
    unrestorable: list[str] = []
    for diff in _parse(check_output, unrestorable):
        try:
            lines.append(_step_for(steps, diff)(diff))
            restored.append(diff.name)
        except Refused as refused:
            unrestorable.append(f"{diff.name} ({refused})")
    lines.reverse()  # undo in the reverse order of the rendered script (see the module docstring)
    return RestorePlan(_script(platform, device, lines), restored, unrestorable)


def snapshot_preparation(platform: str, script: str) -> str:
    """A POSIX shell command to run on the host before its snapshot is taken, so that ``--check`` reads every value
    the push will change ("" when nothing is needed); ``script`` is the rendered NIC script being pushed.

    linux-dcb reads the RoCE defaults from the RDMA-CM configfs group of each RDMA device. Until that group exists
    it reads ``<unset>``, which is unrestorable (the kernel keeps the values whether or not the group exists), while
    the push's ``--apply`` creates the group and writes them. The command creates the missing groups first, with
    the same ``mkdir`` the NIC script's ``--apply`` runs (and mlnx-tools' ``cma_roce_tos`` on every call): creating
    one changes no value, it only makes the kernel's values readable. A device without a group stays unread.
    """
    if platform != "linux-dcb":
        return ""
    devices = sorted({match["rdma"] for match in _DCB_NIC_LOCALS.finditer(script)
                      if _RDMA_DEVICE.fullmatch(match["rdma"])})
    if not devices:
        return ""
    return ('configfs="${FABRICGEN_CONFIGFS:-/sys/kernel/config}"; if [ -d "$configfs/rdma_cm" ]; then '
            f'for device in {" ".join(_quote(device) for device in devices)}; do [ -d "$configfs/rdma_cm/$device" ] '
            f'|| timeout -k {KILL_AFTER_S} {TOOL_TIMEOUT_S} mkdir "$configfs/rdma_cm/$device" || true; done; fi')


# --- parsing the --check output -----------------------------------------------------------------------------

def _parse(check_output: str, unrestorable: list[str]) -> list[Diff]:
    """The DIFF lines, each name once. A malformed DIFF line, or one name with two different values, is
    refused into ``unrestorable`` (named by line number: a malformed line's text is not repeated)."""
    diffs: dict[str, Diff] = {}
    conflicting: set[str] = set()
    for number, line in enumerate(check_output.split("\n"), 1):
        if not line.startswith("DIFF "):
            continue
        diff = _diff(line)
        if diff is None:
            unrestorable.append(f"DIFF line {number} (not a setting line as the NIC script prints it)")
        elif diffs.setdefault(diff.name, diff) != diff:
            conflicting.add(diff.name)
    for name in sorted(conflicting):
        unrestorable.append(f"{name} (two DIFF lines with different values)")
    return [diff for name, diff in diffs.items() if name not in conflicting]


def _diff(line: str) -> Diff | None:
    match = _DIFF_LINE.fullmatch(line)
    if match is None or not (_NETDEV.fullmatch(match["subject"]) or _RDMA_DEVICE.fullmatch(match["subject"])):
        return None
    return Diff(match["subject"], match["setting"], match["have"], match["want"])


def _step_for(steps: dict[str, Step], diff: Diff) -> Step:
    setting = re.sub(r"[0-9]+$", "N", diff.setting)  # "dcqcn np prio 3" -> "dcqcn np prio N"
    step = steps.get(setting)
    if step is None:
        raise Refused("fabricgen does not know this setting")
    subject = _RDMA_DEVICE if setting.startswith("roce ") else _NETDEV
    if not subject.fullmatch(diff.subject):
        raise Refused("not a device name")
    return step


# --- values ------------------------------------------------------------------------------------------------

def _quote(word: str) -> str:
    """Single-quoted for bash. Every word is validated first; the escape only keeps a slip harmless."""
    return "'" + word.replace("'", "'\\''") + "'"


def _call(helper: str, *words: str) -> str:
    return " ".join([helper, *(_quote(word) for word in words)])


def _known(have: str) -> str:
    if have == UNSET:
        raise Refused("the NIC script could not read its value before the push, so there is nothing to put back")
    return have


def _number(have: str, high: int, what: str) -> str:
    if not _NUMBER.fullmatch(_known(have)) or int(have) > high:
        raise Refused(f"not {what}")
    return have


def _choice(have: str, choices: dict[str, str], what: str) -> str:
    if _known(have) not in choices:
        raise Refused(f"not {what} ({', '.join(sorted(choices))})")
    return choices[have]


def _array(words: list[str], keyword: str, value: str) -> list[str]:
    """An 8-entry dcb array ``KEYWORD 0:V 1:V ... 7:V`` (as ``dcb ... show`` prints it): its values."""
    if len(words) != 9 or words[0] != keyword:
        raise Refused(f"not a {keyword} array as dcb prints it")
    values = []
    for index, word in enumerate(words[1:]):
        match = re.fullmatch(rf"{index}:({value})", word)
        if match is None:
            raise Refused(f"not a {keyword} array as dcb prints it")
        values.append(match[1])
    return values


@dataclass(frozen=True)
class Ets:
    prio_tc: list[str]
    tsa: list[str]
    bw: list[int]


def _ets(words: list[str], tsa_names: str) -> Ets:
    """``prio-tc ... tc-tsa ... tc-bw ...`` (27 words) as dcb shows them; TSA names from ``tsa_names``."""
    if len(words) != 27:
        raise Refused("not an ETS reading as the NIC script prints it")
    return Ets(_array(words[0:9], "prio-tc", "[0-7]"), _array(words[9:18], "tc-tsa", tsa_names),
               [int(bw) for bw in _array(words[18:27], "tc-bw", "0|[1-9][0-9]?|100")])


def _zero_bw_tcs(want: str) -> str:
    """The TCs the rendered script reads as 0 % (its ``read_ets`` arguments): those it wants at 0 %."""
    words = want.replace(" | ", " ").split(" ")
    bw = _array(words[-9:], "tc-bw", "0|[1-9][0-9]?|100") if len(words) == 27 else None
    if bw is None:
        raise Refused("its wanted ETS is not as the NIC script prints it")
    return " ".join(str(tc) for tc, share in enumerate(bw) if share == "0")


def _check_shares(ets: Ets, *, non_ets_may_count: bool) -> None:
    """The shares must be settable: the ETS TCs' sum to 100 (mlx5 and iproute2 refuse anything else). The script
    shows the TCs it wants at 0 % as 0 whatever they held, so a sum below 100 means a share it did not read."""
    has_ets = "ets" in ets.tsa
    counted = [share for share, tsa in zip(ets.bw, ets.tsa, strict=True) if non_ets_may_count or tsa == "ets"]
    if sum(counted) == 100 or (not has_ets and sum(counted) == 0):
        return
    raise Refused(f"the ETS shares read sum to {sum(counted)} %: the script shows a TC it wants at 0 % as 0, so "
                  "that TC's share before the push was not read")


# --- ConnectX (mlnx_qos) steps ------------------------------------------------------------------------------

def _mtu(diff: Diff) -> str:
    return _call("restore_mtu", diff.subject, _number(diff.have, 65535, "an MTU"))


def _cx_dcbx(diff: Diff) -> str:
    mode = _choice(diff.have, {"OS controlled": "os", "Firmware controlled": "fw"}, "a DCBX mode mlnx_qos sets")
    return _call("restore_dcbx", diff.subject, diff.have, mode)


def _cx_trust(diff: Diff) -> str:
    if _known(diff.have) == "dscp":
        raise Refused("the push to PCP trust deletes the DSCP APP entries, which the NIC script does not read, "
                      "so they cannot be put back")
    return _call("restore_trust", diff.subject, _choice(diff.have, {"pcp": "pcp"}, "a trust state"))


def _cx_dscp(diff: Diff) -> str:
    """``D:-`` (no entry) or ``D:P`` per DSCP the push changes, aligned with the wanted entries."""
    have, want = _known(diff.have).split(" "), diff.want.split(" ")
    if len(have) != len(want):
        raise Refused("its current and wanted DSCP entries do not pair up")
    for entry, wanted in zip(have, want, strict=True):
        match = re.fullmatch(r"(0|[1-9][0-9]?):(-|[0-7])", entry)
        if match is None or int(match[1]) > 63 or not wanted.startswith(f"{match[1]}:"):
            raise Refused("not DSCP entries as the NIC script prints them (mlx5 keeps one per DSCP)")
    if len({entry.split(":")[0] for entry in have}) != len(have):
        raise Refused("a DSCP is listed twice")
    _check_no_hidden_map(have)
    return _call("restore_dscp", diff.subject, *have)


def _check_no_hidden_map(have: list[str]) -> None:
    """Under DSCP trust mlx5 classifies a DSCP without an APP entry by the firmware's DSCP map, which dcbnl does not
    read, and deleting an entry sets that DSCP's map to priority 0 (en_dcbnl.c, mlx5e_dcbnl_ieee_delapp). So
    "no entry" is put back faithfully only when no entry is left at all (PCP trust, where the map is unused): the
    rendered script lists all 64 DSCPs, so the DSCPs it does not show keep their (wanted) entries."""
    absent = [entry for entry in have if entry.endswith(":-")]
    kept = _NUM_DSCP - len(absent)
    if absent and kept:
        raise Refused(f"{len(absent)} DSCPs had no APP entry beside {kept} that had one: under DSCP trust mlx5 "
                      "classified them by its firmware map, which no tool reads, and deleting the entries the push "
                      "adds would leave them at priority 0")


def _cx_pfc(diff: Diff) -> str:
    flags = _array(_known(diff.have).split(" "), "prio-pfc", "on|off")
    return _call("restore_pfc", diff.subject, diff.have, ",".join("1" if flag == "on" else "0" for flag in flags))


def _cx_ets(diff: Diff) -> str:
    ets = _ets(_known(diff.have).replace(" | ", " ").split(" "), "strict|ets|vendor")
    if diff.have.count(" | ") != 2:
        raise Refused("not an ETS reading as the NIC script prints it")
    _check_shares(ets, non_ets_may_count=False)
    # mlnx_qos: "Values set to TCs that are not configured to ETS algorithm must be zero"; mlx5 stores 100 for them.
    bw = [str(share) if tsa == "ets" else "0" for share, tsa in zip(ets.bw, ets.tsa, strict=True)]
    return _call("restore_ets", diff.subject, _zero_bw_tcs(diff.want), diff.have, ",".join(ets.prio_tc),
                 ",".join(ets.tsa), ",".join(bw))


def _knob(ofed: str, debugfs: str, high: int, what: str) -> Step:
    """A DCQCN/CNP knob file: under MLNX_OFED's ecn/ (``ofed``) or the upstream debugfs (``debugfs``, if any)."""
    def step(diff: Diff) -> str:
        prio = diff.setting.rsplit(" ", 1)[-1]  # the N of "dcqcn np prio N"; unused by the other knobs
        value = _number(diff.have, high, what)
        return _call("cc_setting", diff.subject, diff.setting, ofed.format(prio=prio), debugfs, value)
    return step


def _cx_roce_tos(diff: Diff) -> str:
    return _call("restore_roce_tos", diff.subject, _number(diff.have, 255, "a ToS"))


def _cx_roce_mode(diff: Diff) -> str:
    mode = _choice(diff.have, {"IB/RoCE v1": "1", "RoCE v2": "2"}, "a RoCE mode cma_roce_mode sets")
    return _call("restore_roce_mode", diff.subject, diff.have, mode)


# --- linux-dcb (iproute2 dcb) steps -------------------------------------------------------------------------

_APP_SELECTORS = ("ethtype", "stream-port", "dgram-port", "port", "dscp", "pcp")  # iproute2 dcb_app.c


def _dcb_dcbx(diff: Diff) -> str:
    flags = _known(diff.have).split(" ")
    if [flag for flag in DCBX_FLAGS if flag in flags] != flags:
        raise Refused("not DCBX flags as dcb prints them")
    return _call("restore_dcbx", diff.subject, *flags)


def _dcb_ets(diff: Diff) -> str:
    words = _known(diff.have).split(" ")
    ets = _ets(words, "strict|cbs|ets|vendor")
    _check_shares(ets, non_ets_may_count=True)  # dcb_ets_validate_bw() sums every TC
    return _call("restore_ets", diff.subject, _zero_bw_tcs(diff.want), *words)


def _dcb_pfc(diff: Diff) -> str:
    words = _known(diff.have).split(" ")
    _array(words, "prio-pfc", "on|off")
    return _call("restore_pfc", diff.subject, *words)


def _dcb_dscp(diff: Diff) -> str:
    """The whole DSCP APP table as ``dcb -N app show`` prints it (sorted), or none (``<unset>``: flushed)."""
    if diff.have == UNSET:
        return _call("restore_dscp", diff.subject)
    words = diff.have.split(" ")
    entries = []
    for word in words[1:]:
        match = re.fullmatch(r"(0|[1-9][0-9]?):([0-7])", word)
        if match is None or int(match[1]) > 63:
            raise Refused("not DSCP entries as dcb prints them")
        entries.append((int(match[1]), int(match[2])))
    if words[0] != "dscp-prio" or not entries or entries != sorted(set(entries)):
        raise Refused("not a DSCP APP table as dcb prints it (sorted, each entry once)")
    return _call("restore_dscp", diff.subject, *words[1:])


def _dcb_apptrust(diff: Diff) -> str:
    words = _known(diff.have).split(" ")
    selectors = words[1:]
    if words[0] != "order:" or any(word not in _APP_SELECTORS for word in selectors) or \
            len(set(selectors)) != len(selectors):
        raise Refused("not an apptrust order as dcb prints it")
    return _call("restore_apptrust", diff.subject, *selectors)


def _configfs_unread(have: str) -> str:
    if have == UNSET:
        raise Refused("the RDMA-CM configfs group did not exist before the push, so the value in effect was not "
                      "read; create it (mkdir rdma_cm/DEVICE under configfs, as cma_roce_tos does) and snapshot again")
    return have


def _dcb_roce_tos(diff: Diff) -> str:
    return _call("restore_roce_tos", diff.subject, _number(_configfs_unread(diff.have), 255, "a ToS"))


def _dcb_roce_mode(diff: Diff) -> str:
    if _configfs_unread(diff.have) not in ("IB/RoCE v1", "RoCE v2"):  # the GID types rdma_cm's configfs takes
        raise Refused("not a RoCE mode rdma_cm takes (IB/RoCE v1, RoCE v2)")
    return _call("restore_roce_mode", diff.subject, diff.have)


# Setting (as the DIFF line names it, a trailing number as N) -> its step, per platform.
_STEPS: dict[str, dict[str, Step]] = {
    "connectx": {
        "mtu": _mtu, "dcbx": _cx_dcbx, "trust": _cx_trust, "dscp-prio": _cx_dscp, "pfc": _cx_pfc, "ets": _cx_ets,
        "dcqcn np prio N": _knob("roce_np/enable/{prio}", "", 1, "0 or 1"),
        "dcqcn rp prio N": _knob("roce_rp/enable/{prio}", "", 1, "0 or 1"),
        "cnp dscp": _knob("roce_np/cnp_dscp", "np_cnp_dscp", 63, "a DSCP"),
        "cnp 802.1p priority": _knob("roce_np/cnp_802p_prio", "np_cnp_prio", 7, "a priority"),
        "roce tos": _cx_roce_tos, "roce mode": _cx_roce_mode,
    },
    "linux-dcb": {
        "mtu": _mtu, "dcbx": _dcb_dcbx, "ets": _dcb_ets, "pfc": _dcb_pfc, "dscp-prio": _dcb_dscp,
        "apptrust": _dcb_apptrust, "roce tos": _dcb_roce_tos, "roce mode": _dcb_roce_mode,
    },
}


# --- the script ---------------------------------------------------------------------------------------------

def _script(platform: str, device: str, steps: list[str]) -> str:
    body = "\n".join(f"  {step}" for step in steps) if steps else "  :"
    return "".join(_sections(platform, device, body))


def _sections(platform: str, device: str, body: str) -> Iterator[str]:
    yield (f"#!/usr/bin/env bash\n# fabricgen {__version__}: puts the NIC settings of {device} back to their values "
           "before a push,\n# as its NIC script's --check read them then. Generated; do not edit by hand.\n")
    yield _HEADER.replace("@TIMEOUT@", str(TOOL_TIMEOUT_S)).replace("@KILL_AFTER@", str(KILL_AFTER_S))
    yield _readers(platform)
    yield _CONNECTX if platform == "connectx" else _LINUX_DCB
    yield f"\nrestore_all() {{\n{body}\n}}\n"
    yield _TRAILER.replace("@DEVICE@", _quote(device))


# The NIC script's own readers, taken from its template (the one source of them), so a setting reads here exactly
# as its --check printed it: "restored" means the NIC script would print the snapshot's value again.
_READERS = {
    "connectx": ("connectx/fabricgen-nic.sh.j2", ("words", "read_file", "write_file", "mlnx_qos_field", "read_ets",
                                                   "dscp_entries", "roce_tos", "roce_mode", "cc_dir", "cc_setting")),
    "linux-dcb": ("linux_dcb/fabricgen-dcb.sh.j2", ("words", "read_file", "write_file", "netdev_mtu", "read_ets",
                                                     "dscp_sync")),
}


@cache
def _readers(platform: str) -> str:
    template, names = _READERS[platform]
    return "# Readers: the NIC script's own.\n" + "".join(
        _function((templates_dir() / template).read_text(encoding="utf-8"), name) for name in names)


def _function(text: str, name: str) -> str:
    """A top-level bash function of ``text`` (one line, or up to its closing ``}`` at the line start)."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{name}() {{"))
    if lines[start].rstrip().endswith("}"):
        return lines[start]
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip("\n") == "}")
    function = "".join(lines[start:end + 1])
    if "{{" in function or "{%" in function:
        raise ValueError(f"{name} in the NIC script template is not plain bash")
    return function


_HEADER = r"""#
# Each setting is changed only when it reads differently from the snapshot; a failure does not stop the others.
# Then every setting is read again. Exit status 0: all read back as in the snapshot; 1: some did not (each named,
# and in the last line); 2: coreutils timeout is missing or FABRICGEN_TOOL_TIMEOUT is not a number (nothing done).
set -u

SYSFS="${FABRICGEN_SYSFS:-/sys}"                   # the real /sys unless a test points it at a fake tree
TOOL_TIMEOUT="${FABRICGEN_TOOL_TIMEOUT:-@TIMEOUT@}"  # seconds each tool call may take

if ! [[ $TOOL_TIMEOUT =~ ^[0-9]+([.][0-9]+)?$ && $TOOL_TIMEOUT =~ [1-9] ]]; then
  echo "error: FABRICGEN_TOOL_TIMEOUT=$TOOL_TIMEOUT: expected seconds, a number above 0 (e.g. 30 or 2.5)" >&2
  exit 2
fi
command -v timeout >/dev/null || { echo "error: timeout not found (install coreutils)" >&2; exit 2; }

exec {stderr}>&2  # bounded's error reaches the caller's stderr even from a reader that silences the tool's
# bounded TOOL ARGS...: TOOL ARGS under coreutils timeout (SIGTERM after TOOL_TIMEOUT seconds, SIGKILL @KILL_AFTER@ s
# later). Unlike the NIC script, a timeout does not stop the run: the other settings are still put back.
bounded() {
  local status=0
  timeout -k @KILL_AFTER@ "$TOOL_TIMEOUT" "$@" || status=$?
  if ((status == 124 || status == 137)); then  # timeout's own status after its SIGTERM, or after SIGKILL
    echo "error: '$*' did not finish within ${TOOL_TIMEOUT}s (FABRICGEN_TOOL_TIMEOUT)" >&"$stderr"
  fi
  return "$status"
}
# run COMMAND...: a function of this script as it is (it bounds the tools it calls), a tool through bounded.
run() { if declare -F "$1" >/dev/null; then "$@"; else bounded "$@"; fi; }

mode=restore
steps=0
failed=()
declare -A failed_names=()
# fail NAME WHY: NAME is not back as in the snapshot (named once in the summary, however many times it fails).
fail() {
  echo "error: $1: $2" >&2
  if [[ -z ${failed_names[$1]:-} ]]; then failed_names[$1]=1; failed+=("$1"); fi
}
# setting NAME CURRENT SNAPSHOT -- COMMAND...: restore mode runs COMMAND when the setting reads differently from
# the snapshot; verify mode (the second pass) names it as not restored.
setting() {
  local name=$1 current=$2 wanted=$3
  shift 4
  if [[ $mode == restore ]]; then steps=$((steps + 1)); fi
  [[ "$current" == "$wanted" ]] && return 0
  if [[ $mode == restore ]]; then
    printf 'RESTORE %s: "%s" -> "%s"\n' "$name" "${current:-<unset>}" "${wanted:-<unset>}"
    run "$@" || fail "$name" "'$*' failed"
  else
    fail "$name" "reads \"${current:-<unset>}\" after the restore, not \"${wanted:-<unset>}\" as before the push"
  fi
}

"""

_CONNECTX = r"""
# The steps: each names the setting as the NIC script does and gives the value the snapshot read.
restore_mtu() {  # IFACE MTU
  setting "$1 mtu" "$(read_file "$SYSFS/class/net/$1/mtu")" "$2" -- ip link set dev "$1" mtu "$2"
}
restore_dcbx() {  # IFACE SHOWN os|fw
  setting "$1 dcbx" "$(mlnx_qos_field "$1" 'DCBX mode')" "$2" -- mlnx_qos -i "$1" -d "$3"
}
restore_trust() {  # IFACE pcp
  setting "$1 trust" "$(mlnx_qos_field "$1" 'Priority trust state')" "$2" -- mlnx_qos -i "$1" --trust "$2"
}
# restore_dscp IFACE DSCP:PRIO|DSCP:-...: those DSCPs' entries as in the snapshot. mlx5 keeps one entry per DSCP:
# `set` replaces it; `DSCP:-` (no entry then) deletes whatever entry the DSCP has now -- the one the push added.
restore_dscp() {
  local ifname=$1 entry dscp found now table have=() args=()
  shift
  table=" $(words dcb -N app show dev "$ifname" dscp-prio) "
  for entry in "$@"; do
    dscp=${entry%%:*}
    found=$(dscp_entries "$table" "$dscp")
    have+=("$found")
    if [[ $found == "$entry" ]]; then continue; fi
    if [[ $entry == *:- ]]; then
      for now in ${found//,/ }; do args+=(--dscp2prio "del,$dscp,${now##*:}"); done
    else
      args+=(--dscp2prio "set,$dscp,${entry##*:}")
    fi
  done
  setting "$ifname dscp-prio" "${have[*]}" "$*" -- mlnx_qos -i "$ifname" "${args[@]}"
}
restore_pfc() {  # IFACE SHOWN FLAGS_CSV
  setting "$1 pfc" "$(words dcb pfc show dev "$1" prio-pfc)" "$2" -- mlnx_qos -i "$1" --pfc "$3"
}
restore_ets() {  # IFACE ZERO_BW_TCS SHOWN PRIO_TC_CSV TSA_CSV TCBW_CSV
  local zero
  read -ra zero <<< "$2"
  setting "$1 ets" "$(read_ets "$1" "${zero[@]}")" "$3" -- mlnx_qos -i "$1" --prio_tc "$4" --tsa "$5" --tcbw "$6"
}
restore_roce_tos() {  # RDMA_DEVICE TOS
  setting "$1 roce tos" "$(roce_tos "$1")" "$2" -- cma_roce_tos -d "$1" -p 1 -t "$2"
}
restore_roce_mode() {  # RDMA_DEVICE SHOWN 1|2
  setting "$1 roce mode" "$(roce_mode "$1")" "$2" -- cma_roce_mode -d "$1" -p 1 -m "$3"
}
"""

_LINUX_DCB = r"""CONFIGFS="${FABRICGEN_CONFIGFS:-/sys/kernel/config}"  # likewise configfs (RDMA-CM defaults)

# The steps: each names the setting as the NIC script does and gives the value the snapshot read.
restore_mtu() {  # IFACE MTU
  setting "$1 mtu" "$(netdev_mtu "$1")" "$2" -- ip link set dev "$1" mtu "$2"
}
restore_dcbx() {  # IFACE FLAG...
  local ifname=$1
  shift
  setting "$ifname dcbx" "$(words dcb dcbx show dev "$ifname")" "$*" -- dcb dcbx set dev "$ifname" "$@"
}
restore_ets() {  # IFACE ZERO_BW_TCS prio-tc ... tc-tsa ... tc-bw ...
  local ifname=$1 zero
  read -ra zero <<< "$2"
  shift 2
  setting "$ifname ets" "$(read_ets "$ifname" "${zero[@]}")" "$*" -- dcb ets set dev "$ifname" "$@"
}
restore_pfc() {  # IFACE prio-pfc ...
  local ifname=$1
  shift
  setting "$ifname pfc" "$(words dcb pfc show dev "$ifname" prio-pfc)" "$*" -- dcb pfc set dev "$ifname" "$@"
}
# restore_dscp IFACE DSCP:PRIO...: exactly these DSCP APP entries (none: the table was empty), as the NIC script's
# dscp_sync makes a table: a DSCP with an entry it should not have loses all of them, then gets its own.
restore_dscp() {
  local ifname=$1 want=""
  shift
  if (($#)); then want="dscp-prio $*"; fi
  setting "$ifname dscp-prio" "$(words dcb -N app show dev "$ifname" dscp-prio)" "$want" -- dscp_sync "$ifname" "$@"
}
restore_apptrust() {  # IFACE SELECTOR... (none: an empty order, which iproute2 takes)
  local ifname=$1 have
  shift
  have=$(bounded dcb apptrust show dev "$ifname" order 2>/dev/null) || true
  setting "$ifname apptrust" "$(set -f; echo $have)" "order:${*:+ $*}" -- dcb apptrust set dev "$ifname" order "$@"
}
restore_roce_tos() {  # RDMA_DEVICE TOS
  local file="$CONFIGFS/rdma_cm/$1/ports/1/default_roce_tos"
  setting "$1 roce tos" "$(read_file "$file")" "$2" -- write_file "$file" "$2"
}
restore_roce_mode() {  # RDMA_DEVICE MODE
  local file="$CONFIGFS/rdma_cm/$1/ports/1/default_roce_mode"
  setting "$1 roce mode" "$(read_file "$file")" "$2" -- write_file "$file" "$2"
}
"""

_TRAILER = r"""
restore_all
mode=verify  # every setting must now read as the snapshot did
restore_all
device=@DEVICE@
if ((${#failed[@]})); then
  summary=$(printf '%s, ' "${failed[@]}")
  echo "error: $device: ${#failed[@]} of $steps NIC settings not back as before the push: ${summary%, }"
  exit 1
fi
echo "restored: $device: $steps NIC settings read as before the push"
"""
