"""A Cumulus Linux switch's NVUE for the lab (no Cumulus image runs here): the ``nv`` command's configuration
management, as NVIDIA documents it, on a configuration kept in the lab host's state directory.

What is modelled, and where each behaviour comes from (NVIDIA's NVUE command reference, "Config Commands", and
the Cumulus Linux 5.15 user guide, "NVUE CLI" — `CumulusNetworks/docs:content/nvue-reference/Config-Commands.md`,
`content/cumulus-linux-515/System-Configuration/NVIDIA-User-Experience-NVUE/NVUE-CLI.md`):

* revisions: numbered configurations; ``applied``, ``startup`` and ``empty`` are named ones. A user's edits go to
  the *pending* revision attached to that user ("``nv set``/``nv unset`` edit the pending revision; nothing changes
  until ``nv config apply``"); ``nv config attach applied`` starts a new one from the applied configuration (the
  form a community NAPALM Cumulus driver uses, printing ``attached [rev_id: N]``), ``nv config detach``
  "detaches the configuration from the current pending configuration and uses an integer to identify it",
  ``nv config delete`` "deletes a configuration revision";
* ``nv config patch <file>`` "updates the pending configuration" with the file's ``- set:``/``- unset:`` blocks;
  "NVUE does not support both unset and set commands for the same object in a single patch" (refused here);
  ``nv config replace <file>`` "replaces the pending configuration". Only YAML files: NVUE also takes a text file
  of ``nv set``/``nv unset`` lines, which this target refuses, saying so;
* ``nv config diff [<base> <target>]`` (default: applied against the pending revision), printed as NVUE prints it:
  a YAML list of an ``- unset:`` block (what goes, its keys without a value) and a ``- set:`` block;
* ``nv config apply [<revision>] [-y] [-m <message>] [--confirm [<time>]] [--confirm-status]``: validates the
  revision against NVIDIA's NVUE object model for Cumulus Linux 5.15 (the OpenAPI document, read through the
  ``nvueschema`` package, as tests/test_nvue_openapi.py does) and refuses an invalid one the way NVUE does::

      Invalid config [rev_id: 4]
        Config invalid at interface.swp1.link.breakout: '4x10G' is not of type 'object'

  (NVIDIA knowledge base, "NVUE Fails to Apply Configuration After Upgrade"); nothing changes then. ``--confirm``
  "applies the configuration change, but you must confirm the applied configuration. If you do not confirm within
  ten minutes, the configuration rolls back automatically" — the timer is a detached process of this host, so it
  fires with no SSH session and no controller alive. The confirm and abort options ``--confirm-yes`` and
  ``--confirm-no`` are not in NVIDIA's reference pages; they are the ones a community NAPALM Cumulus driver
  (napalm-cumulus) sends. With auto-save on (the default since 5.9) an apply also writes the startup
  configuration — after its confirm, for a confirmed apply; with ``system config auto-save state disabled``
  only ``nv config save`` does ("Overwrites the startup configuration with the applied configuration");
* ``nv config history`` / ``nv config revision`` (columns of NVIDIA's ``nv config revision`` example: Rev ID,
  State, Apply ID, Apply Date, Type, User, Reason, Message), ``nv config show [-r <rev>]``, all with ``-o json``;
* ``nv show interface`` / ``nv show system`` (``-o json``): operational state. A port is up when it is
  configured, administratively up and cabled (the lab's cabling: :data:`CABLED`);
* ``nv show interface <port> counters | counters qos pfc-stats | counters qos egress-queue-stats | qos roce
  counters | link phy-detail``: the counter pages fabricgen's observe reads, in the layouts of NVIDIA's examples,
  with the numbers a test writes (:func:`show_counters`).

Exact wording of messages NVIDIA does not document is this target's own. State: ``nvue.json`` (revisions,
attachments, history, the pending confirm) and ``startup.yaml`` in the state directory, under a lock.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import os
import pwd
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

TOOLS = ("nv",)
STATE_VAR = "NVUE_TARGET_STATE"
LOG_VAR = "NVUE_TARGET_LOG"
RELEASE = "5.15"
STARTUP_FILE = Path(__file__).with_name("data") / "nvue" / "startup.yaml"
# The lab's cabling of leaf3 (inventory/mixed): its host and spine ports, the operator's storage port, eth0.
CABLED = ("eth0", "swp1", "swp2", "swp5", "swp63", "swp64")
HEADER = {"model": "SN5600", "nvue-api-version": "nvue_v1", "rev-id": 1.0, "version": "Cumulus Linux 5.15.0"}
NAMED = ("applied", "startup", "empty")
DEFAULT_CONFIRM_S = 600  # "If you do not confirm within ten minutes, the configuration rolls back automatically"
LINK_STATE = ("interface", "*", "link", "state")  # an object keyed by the state: one key at a time

Tree = dict[str, Any]


class NvError(Exception):
    """What ``nv`` prints before exiting 1."""


# --- state -----------------------------------------------------------------------------------------------

def lab_connection(lab: Any, host: str) -> dict[str, Any]:
    """The inventory fields that let fabricgen reach this target in the lab (tests/fabric_lab.py): SSH as root
    with the lab key, the host key checked against the lab's known_hosts."""
    options = {"key_file": str(lab.key_file), "known_hosts": str(lab.known_hosts)}
    return {"username": "root",
            "connection_options": {"napalm": {"platform": "fabricgen_nvue", "extras": {"optional_args": options}}}}


def lab_init(state_dir: Path | str) -> None:
    """Revision 1 is the switch's startup configuration, applied and saved."""
    directory = Path(state_dir)
    directory.mkdir(parents=True, exist_ok=True)
    text = STARTUP_FILE.read_text()
    first = {"config": _set_body(yaml.safe_load(text)), "state": "applied_and_saved",
             **_apply_fields("1", 1, "root", "Config update", "startup")}
    state = {"next": 2, "applied": "1", "attached": {}, "confirm": None, "revisions": {"1": first},
             "history": [_history_entry(first, "1")]}
    _write(directory, state)
    (directory / "startup.yaml").write_text(text)


def read_state(state_dir: Path | str) -> Tree:
    """The target's whole state (for tests reading it from outside the host)."""
    state: Tree = json.loads((Path(state_dir) / "nvue.json").read_text())
    return state


def applied_config(state_dir: Path | str) -> Tree:
    state = read_state(state_dir)
    config: Tree = state["revisions"][state["applied"]]["config"]
    return config


def _write(directory: Path, state: Tree) -> None:
    temporary = directory / ".nvue.json.tmp"
    temporary.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n")
    temporary.replace(directory / "nvue.json")


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[Tree]:
    """The state under the lock every ``nv`` command and the confirm timer take; written back on success."""
    with (directory / "lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = read_state(directory)
        before = json.dumps(state, sort_keys=True)
        yield state
        if json.dumps(state, sort_keys=True) != before:
            _write(directory, state)


def _user() -> str:
    return os.environ.get("USER") or pwd.getpwuid(os.getuid()).pw_name


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())


def _apply_fields(rev: str, count: int, user: str, reason: str, message: str) -> Tree:
    return {"apply-id": f"rev_{rev}_apply_{count}", "apply-date": _now(), "type": "CLI", "user": user,
            "reason": reason, "message": message}


def _history_entry(revision: Tree, rev: str) -> Tree:
    return {"apply-id": revision["apply-id"], "rev-id": rev, "date": revision["apply-date"], "user": revision["user"],
            "type": revision["type"], "reason": revision["reason"], "message": revision["message"]}


# --- configuration trees ----------------------------------------------------------------------------------

def _set_body(blocks: Any) -> Tree:
    """The ``set`` block of an NVUE YAML file (a list of ``- header:``/``- set:`` blocks)."""
    if not isinstance(blocks, list):
        raise NvError("Error: the file is not an NVUE YAML configuration (a list of - header:/- set: blocks)")
    body: Tree = {}
    for block in blocks:
        if isinstance(block, dict) and isinstance(block.get("set"), dict):
            _merge(body, block["set"], ())
    return body


def _matches(path: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return len(path) == len(pattern) and all(p in ("*", k) for k, p in zip(path, pattern, strict=True))


def _merge(into: Tree, patch: Tree, path: tuple[str, ...]) -> None:
    """``nv set`` of every leaf of ``patch``: containers merge, values replace. Setting a link state replaces the
    other one (``nv set interface swp1 link state down`` after ``up`` leaves ``down`` only)."""
    if _matches(path, LINK_STATE):
        into.clear()
    for key, value in patch.items():
        key = str(key)
        here = into.get(key)
        if isinstance(value, dict) and isinstance(here, dict):
            _merge(here, value, (*path, key))
        elif isinstance(value, dict):
            into[key] = {}
            _merge(into[key], value, (*path, key))
        else:
            into[key] = value


def _unset(into: Tree, patch: Tree) -> None:
    """``nv unset`` of every key of ``patch`` that has no value under it (``key:``, ``key: {}``)."""
    for key, value in patch.items():
        key = str(key)
        if isinstance(value, dict) and value:
            if isinstance(into.get(key), dict):
                _unset(into[key], value)
        else:
            into.pop(key, None)


def _paths(tree: Tree, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in tree.items():
        yield (*prefix, str(key))
        if isinstance(value, dict):
            yield from _paths(value, (*prefix, str(key)))


def _same_object(sets: Tree, unsets: Tree) -> list[str]:
    """Objects a patch both sets and unsets (one path the other's or equal): NVUE refuses such a patch."""
    removed = {path for path in _paths(unsets) if not _has_children(unsets, path)}
    found = []
    for path in _paths(sets):
        if any(path[:len(gone)] == gone or gone[:len(path)] == path for gone in removed):
            found.append(" ".join(path))
    return sorted(set(found))


def _has_children(tree: Tree, path: tuple[str, ...]) -> bool:
    node: Any = tree
    for key in path:
        node = node[key]
    return isinstance(node, dict) and bool(node)


def diff(base: Tree, target: Tree) -> tuple[Tree, Tree]:
    """(unset, set): what ``target`` removes from ``base`` (keys without a value) and what it adds or changes."""
    unsets: Tree = {}
    sets: Tree = {}
    for key in base.keys() - target.keys():
        unsets[key] = None
    for key, value in target.items():
        old = base.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            removed, added = diff(old, value)
            if removed:
                unsets[key] = removed
            if added:
                sets[key] = added
        elif key not in base or old != value:
            sets[key] = copy.deepcopy(value)
    return unsets, sets


class _Dumper(yaml.SafeDumper):
    """NVUE's YAML: a key without a value is written ``key:``, not ``key: null``."""


_Dumper.add_representer(type(None), lambda dumper, _: dumper.represent_scalar("tag:yaml.org,2002:null", ""))


def dump_yaml(blocks: list[Tree]) -> str:
    return yaml.dump(blocks, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=1000)


# --- NVIDIA's object model ---------------------------------------------------------------------------------

def closed_schema(node: Any) -> Any:
    """``node`` with ``additionalProperties: false`` on every object that lists its properties (an NVUE
    *instance*; collections, whose ``additionalProperties`` is the id's schema, stay open to any id), and
    without the null each optional field allows (Pydantic's ``anyOf: [X, null]`` becomes X): NVUE reads a null
    in a patch as "remove", fabricgen never writes one, and without the choice an error names the key itself,
    not the first object above it."""
    if isinstance(node, list):
        return [closed_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    closed = {key: closed_schema(value) for key, value in node.items()}
    branches = [branch for branch in closed.get("anyOf", ()) if branch != {"type": "null"}]
    if "anyOf" in closed and len(branches) == 1:
        del closed["anyOf"]
        closed |= branches[0]
    elif branches:
        closed["anyOf"] = branches
    if "properties" in closed and "additionalProperties" not in closed:
        closed["additionalProperties"] = False
    return closed


def invalid(config: Tree) -> list[str]:
    """Where ``config`` leaves NVIDIA's object model, as NVUE words it (``Config invalid at a.b.c: ...``)."""
    import importlib

    import pydantic
    from jsonschema import Draft202012Validator

    model = importlib.import_module(f"nvueschema.models.v{RELEASE.replace('.', '_')}").NvueConfig
    validator = Draft202012Validator(closed_schema(model.model_json_schema(by_alias=True)))
    found = [f"Config invalid at {'.'.join(map(str, error.absolute_path))}: {error.message}"
             for error in sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))]
    if not found:  # JSON mode: addresses are text in a configuration, as on the wire
        try:
            model.model_validate_json(json.dumps(config), strict=True)
        except pydantic.ValidationError as exc:
            found = [f"Config invalid at {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
    return found


# --- the nv command ----------------------------------------------------------------------------------------

def _revision_config(state: Tree, directory: Path, name: str) -> Tree:
    if name == "applied":
        return copy.deepcopy(state["revisions"][state["applied"]]["config"])
    if name == "startup":
        return _set_body(yaml.safe_load((directory / "startup.yaml").read_text()))
    if name == "empty":
        return {}
    if name == "pending":
        name = _attached(state)
    if name not in state["revisions"]:
        raise NvError(f"Error: Revision '{name}' does not exist")
    return copy.deepcopy(state["revisions"][name]["config"])


def _attached(state: Tree) -> str:
    rev = state["attached"].get(_user())
    if rev is None:
        raise NvError("Error: no pending configuration is attached")
    return str(rev)


def _new_revision(state: Tree, config: Tree) -> str:
    rev = str(state["next"])
    state["next"] += 1
    state["revisions"][rev] = {"config": config, "state": "pending", "apply-id": "", "apply-date": "", "type": "CLI",
                               "user": _user(), "reason": "", "message": ""}
    return rev


def _pending(state: Tree) -> str:
    """The user's pending revision, a new one from the applied configuration if none is attached."""
    rev = state["attached"].get(_user())
    if rev is None:
        rev = _new_revision(state, copy.deepcopy(state["revisions"][state["applied"]]["config"]))
        state["attached"][_user()] = rev
    return str(rev)


def _read_patch(path: str) -> list[Tree]:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise NvError(f"Error: cannot read {path}: {exc.strerror}") from None
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    if lines and all(line.startswith(("nv set ", "nv unset ")) for line in lines):
        raise NvError("Error: this lab target (not NVUE) takes YAML files only, not nv set/unset command files")
    try:
        blocks = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise NvError(f"Error: {path} is not valid YAML: {exc}") from None
    if not isinstance(blocks, list) or not all(isinstance(block, dict) for block in blocks):
        raise NvError(f"Error: {path}: an NVUE YAML file is a list of - set: / - unset: blocks")
    return blocks


def config_patch(state: Tree, directory: Path, path: str) -> str:
    blocks = _read_patch(path)
    sets: Tree = {}
    unsets: Tree = {}
    for block in blocks:
        _merge(sets, block.get("set") or {}, ())
        _merge(unsets, block.get("unset") or {}, ())
    both = _same_object(sets, unsets)
    if both:
        raise NvError("Error: NVUE does not support both unset and set commands for the same object in a single "
                      f"patch: {', '.join(both)}")
    config = state["revisions"][_pending(state)]["config"]
    _unset(config, unsets)
    _merge(config, sets, ())
    return ""


def config_replace(state: Tree, directory: Path, path: str) -> str:
    state["revisions"][_pending(state)]["config"] = _set_body(_read_patch(path))
    return ""


def config_diff(state: Tree, directory: Path, revisions: list[str]) -> str:
    if len(revisions) > 2:
        raise NvError("Error: nv config diff takes at most two revisions")
    if not revisions and _user() not in state["attached"]:
        return ""  # nothing pending: nothing to show
    base, target = revisions if len(revisions) == 2 else ("applied", revisions[0] if revisions else "pending")
    unsets, sets = diff(_revision_config(state, directory, base), _revision_config(state, directory, target))
    blocks = ([{"unset": unsets}] if unsets else []) + ([{"set": sets}] if sets else [])
    return dump_yaml(blocks) if blocks else ""


def config_attach(state: Tree, directory: Path, name: str) -> str:
    if name == "applied":
        rev = _new_revision(state, _revision_config(state, directory, "applied"))
    elif name in state["revisions"] and state["revisions"][name]["state"] in ("pending", "invalid"):
        rev = name
    else:
        raise NvError(f"Error: Revision '{name}' cannot be attached")
    state["attached"][_user()] = rev
    return f"attached [rev_id: {rev}]\n"


def config_detach(state: Tree, directory: Path) -> str:
    rev = state["attached"].pop(_user(), None)
    return f"detached [rev_id: {rev}]\n" if rev is not None else ""


def config_delete(state: Tree, directory: Path, name: str) -> str:
    if name in NAMED or name == state["applied"]:
        raise NvError(f"Error: Revision '{name}' cannot be deleted: it is the applied, startup or empty revision")
    if name not in state["revisions"]:
        raise NvError(f"Error: Revision '{name}' does not exist")
    if state["confirm"] and state["confirm"]["rev"] == name:
        raise NvError(f"Error: Revision '{name}' cannot be deleted: it is waiting for its confirm")
    del state["revisions"][name]
    state["attached"] = {user: rev for user, rev in state["attached"].items() if rev != name}
    return f"deleted [rev_id: {name}]\n"


def config_save(state: Tree, directory: Path) -> str:
    applied = state["revisions"][state["applied"]]
    (directory / "startup.yaml").write_text(dump_yaml([{"header": HEADER}, {"set": applied["config"]}]))
    if applied["state"] == "applied":
        applied["state"] = "applied_and_saved"
    return "saved\n"


def config_show(state: Tree, directory: Path, name: str, output: str) -> str:
    blocks = [{"header": HEADER}, {"set": _revision_config(state, directory, name)}]
    return json.dumps(blocks, indent=2, sort_keys=True) + "\n" if output == "json" else dump_yaml(blocks)


def config_history(state: Tree, directory: Path, name: str | None, output: str) -> str:
    entries = [entry for entry in state["history"] if name is None or entry["rev-id"] == name]
    if output == "json":
        return json.dumps({entry["apply-id"]: entry for entry in entries}, indent=2) + "\n"
    columns = ("apply-id", "rev-id", "date", "user", "type", "reason", "message")
    return _table(columns, [[str(entry[c]) for c in columns] for entry in entries])


def config_revision(state: Tree, directory: Path, output: str) -> str:
    fields = ("state", "apply-id", "apply-date", "type", "user", "reason", "message")
    revisions = {rev: {f: item[f] for f in fields} for rev, item in sorted(state["revisions"].items(),
                                                                          key=lambda kv: int(kv[0]))}
    if output == "json":
        return json.dumps(revisions, indent=2) + "\n"
    return _table(("rev-id", *fields), [[rev, *(str(item[f]) for f in fields)] for rev, item in revisions.items()])


def _table(columns: tuple[str, ...], rows: list[list[str]]) -> str:
    widths = [max([len(c), *(len(row[i]) for row in rows)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in rows]
    return "".join(line.rstrip() + "\n" for line in lines)


# --- apply, confirm, the confirm timer ---------------------------------------------------------------------

def _seconds(text: str) -> int:
    """``--confirm <time>``: a number of minutes ("--confirm 60 requires you to confirm within one hour"), or with
    a unit: ``300s``, ``60m``, ``1h``."""
    match = re.fullmatch(r"(\d+)([smh]?)", text)
    if match is None or int(match.group(1)) == 0:
        raise NvError(f"Error: invalid confirm time {text!r} (a number of minutes, or with s, m or h)")
    return int(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "": 60}[match.group(2)]


def _auto_save(config: Tree) -> bool:
    """``system config auto-save state``: enabled unless disabled (the default since Cumulus Linux 5.9)."""
    return str(config.get("system", {}).get("config", {}).get("auto-save", {}).get("state", "enabled")) != "disabled"


def _make_applied(state: Tree, directory: Path, rev: str, reason: str, message: str) -> None:
    revision = state["revisions"][rev]
    count = sum(1 for entry in state["history"] if entry["rev-id"] == rev) + 1
    revision.update(_apply_fields(rev, count, _user(), reason, message))
    revision["state"] = "applied"
    state["applied"] = rev
    state["history"].append(_history_entry(revision, rev))
    state["attached"] = {user: r for user, r in state["attached"].items() if r != rev}


def config_apply(state: Tree, directory: Path, target: str | None, message: str, confirm_s: int | None) -> str:
    if state["confirm"]:
        raise NvError(f"Error: revision {state['confirm']['rev']} is waiting for its confirm: confirm it (nv config "
                      "apply --confirm-yes) or roll it back (nv config apply --confirm-no) first")
    if target is None:
        rev = _attached(state)
    elif target in ("startup", "empty"):
        rev = _new_revision(state, _revision_config(state, directory, target))
    else:
        rev = state["applied"] if target == "applied" else target
        _revision_config(state, directory, rev)  # it exists
    problems = invalid(state["revisions"][rev]["config"])
    if problems:
        state["revisions"][rev]["state"] = "invalid"
        raise NvError(f"Invalid config [rev_id: {rev}]\n" + "".join(f"  {line}\n" for line in problems))
    previous = state["applied"]
    _make_applied(state, directory, rev, "Config update", message or f"Config update by {_user()}")
    if confirm_s is not None:
        state["revisions"][rev]["state"] = "confirm"
        token = f"{rev}-{time.time_ns()}"
        state["confirm"] = {"rev": rev, "previous": previous, "deadline": time.time() + confirm_s, "token": token,
                            "pid": _start_timer(token, confirm_s)}
        return f"applied [rev_id: {rev}]; confirm within {confirm_s} s or it rolls back to revision {previous}\n"
    if _auto_save(state["revisions"][rev]["config"]):
        config_save(state, directory)
    return f"applied [rev_id: {rev}]\n"


def _start_timer(token: str, seconds: int) -> int:
    """A process of its own session (no SSH hang-up reaches it), outliving this command, the login and the
    controller: the switch rolls back by itself."""
    timer = subprocess.Popen([sys.executable, sys.argv[0], "__confirm-timer", token, str(seconds)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True, close_fds=True)
    return timer.pid


def confirm_timer(directory: Path, token: str, seconds: int) -> int:
    time.sleep(seconds)
    with _locked(directory) as state:
        if state["confirm"] and state["confirm"]["token"] == token:
            _roll_back(state, "Confirm timeout rollback")
    return 0


def _roll_back(state: Tree, reason: str) -> None:
    pending = state["confirm"]
    state["confirm"] = None
    state["revisions"][pending["rev"]]["state"] = "rolled_back"
    previous = state["revisions"][pending["previous"]]
    count = sum(1 for entry in state["history"] if entry["rev-id"] == pending["previous"]) + 1
    previous.update(_apply_fields(pending["previous"], count, "root", reason, f"rollback of revision {pending['rev']}"))
    previous["state"] = "applied"
    state["applied"] = pending["previous"]
    state["history"].append(_history_entry(previous, pending["previous"]))


def _stop_timer(pending: Tree) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(int(pending["pid"]), signal.SIGTERM)


def config_confirm(state: Tree, directory: Path, keep: bool) -> str:
    pending = state["confirm"]
    if not pending:
        raise NvError("Error: no applied configuration is waiting for its confirm")
    _stop_timer(pending)
    if not keep:
        _roll_back(state, "Config rollback")
        return f"rolled back to revision {state['applied']}\n"
    state["confirm"] = None
    state["revisions"][pending["rev"]]["state"] = "applied"
    if _auto_save(state["revisions"][pending["rev"]]["config"]):
        config_save(state, directory)
    return f"confirmed [rev_id: {pending['rev']}]\n"


def confirm_status(state: Tree) -> str:
    pending = state["confirm"]
    if not pending:
        return "No pending confirm\n"
    return f"revision {pending['rev']}: {max(0, round(pending['deadline'] - time.time()))} s left before rollback\n"


# --- nv show -----------------------------------------------------------------------------------------------

def show_interface(state: Tree, output: str) -> str:
    config = state["revisions"][state["applied"]]["config"]
    interfaces = {}
    for name, item in sorted(config.get("interface", {}).items()):
        link = item.get("link", {})
        admin = "down" if "down" in link.get("state", {}) else "up"
        oper = "up" if admin == "up" and (name in CABLED or item.get("type") == "loopback") else "down"
        interfaces[name] = {"type": item.get("type", "swp"), "description": item.get("description", ""),
                            "link": {"admin-status": admin, "oper-status": oper, "mtu": link.get("mtu", 9216),
                                     "speed": link.get("speed", "auto")}}
    if output == "json":
        return json.dumps(interfaces, indent=2) + "\n"
    rows = [[name, i["link"]["admin-status"], i["link"]["oper-status"], str(i["link"]["mtu"]), i["type"],
             i["description"]] for name, i in interfaces.items()]
    return _table(("interface", "admin", "oper", "mtu", "type", "description"), rows)


def show_system(state: Tree, output: str) -> str:
    system = state["revisions"][state["applied"]]["config"].get("system", {})
    uptime = -1.0
    with contextlib.suppress(OSError):
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    facts = {"hostname": system.get("hostname", "cumulus"), "build": HEADER["version"], "product-name": "Cumulus Linux",
             "platform": HEADER["model"], "uptime": uptime}
    return json.dumps(facts, indent=2) + "\n" if output == "json" else "".join(f"{k}  {v}\n" for k, v in facts.items())


# --- nv show interface <port> counters … ---------------------------------------------------------------------
# The five counter pages fabricgen's reader asks for, in the layouts of NVIDIA's examples (Cumulus Linux 5.12 user
# guide, "Monitoring Interfaces and Transceivers with NVUE" and "RDMA over Converged Ethernet - RoCE"; NVUE
# command reference, "QoS"). The numbers are the test's: ``counters.json`` in the state directory,
# {port: {counter: value}} (COUNTER_NAMES), 0 for any counter it does not name, so a test injects a fault by
# writing a number there. A port the switch does not have is NVUE's error.
COUNTERS_FILE = "counters.json"
COUNTER_NAMES = ("carrier-transitions", "fcs-errors", "symbol-errors", "buffer-drops",
                 *(f"{d}-pause-frames-{p}" for d in ("rx", "tx") for p in range(8)),
                 *(f"wred-discards-{tc}" for tc in range(8)), "ecn-marked-packets",
                 "roce-tx-unicast-no-buffer-discard", "roce-rx-no-buffer-discard", "cnp-tx-unicast-no-buffer-discard",
                 "phy-symbol-errors", "phy-effective-errors", "raw-ber",
                 *(f"rs-num-corr-err-bin{n}" for n in range(16)))
COUNTER_PAGES = ("counters", "counters qos pfc-stats", "counters qos egress-queue-stats", "qos roce counters",
                 "link phy-detail")


def port_counters(directory: Path, state: Tree, port: str) -> dict[str, str]:
    if port not in state["revisions"][state["applied"]]["config"].get("interface", {}):
        raise NvError(f"Error: The requested item does not exist: interface {port}")
    path = directory / COUNTERS_FILE
    given = json.loads(path.read_text()).get(port, {}) if path.exists() else {}
    unknown = sorted(set(given) - set(COUNTER_NAMES))
    if unknown:
        raise NvError(f"Error: this lab target's {COUNTERS_FILE} names counters it does not model: {unknown}")
    return {name: str(given.get(name, "0E-255" if name == "raw-ber" else 0)) for name in COUNTER_NAMES}


def _section(title: str, columns: tuple[str, ...], rows: list[list[str]]) -> str:
    body = "".join("    " + line + "\n" for line in _table(columns, rows).splitlines())
    return f"\n{title}\n{'=' * (len(title) + 3)}\n{body}"


def _tree_table(rows: list[tuple[int, str, str, str]]) -> str:
    """A key/value page: (depth, key, operational, description) rows under `operational  applied  description`."""
    return _table(("", "operational", "applied", "description"),
                  [["  " * depth + key, value, "", text] for depth, key, value, text in rows])


def show_counters(directory: Path, state: Tree, port: str, page: str) -> str:
    c = port_counters(directory, state, port)
    if page == "counters":
        out = _table(("", "operational", "applied"), [["carrier-transitions", c["carrier-transitions"], ""]])
        out += _section("Drop Counters", ("Counter", "Receive", "Transmit"),
                        [["ACL Drops", "0", "n/a"], ["Buffer Drops", c["buffer-drops"], "n/a"],
                         ["Non-Queue Drops", "n/a", "0"], ["Queue Drops", "n/a", "0"],
                         ["Total Drops", c["buffer-drops"], "0"]])
        errors = int(c["fcs-errors"]) + int(c["symbol-errors"])
        return out + _section("Error Counters", ("Counter", "Receive", "Transmit"),
                              [["Alignment Errors", "0", "n/a"], ["FCS Errors", c["fcs-errors"], "n/a"],
                               ["Symbol Errors", c["symbol-errors"], "n/a"], ["Total Errors", str(errors), "0"]])
    if page == "counters qos pfc-stats":
        return _table(("switch-priority", "rx-pause-frames", "rx-pause-duration", "tx-pause-frames",
                       "tx-pause-duration"),
                      [[str(p), c[f"rx-pause-frames-{p}"], "0", c[f"tx-pause-frames-{p}"], "0"] for p in range(8)])
    if page == "counters qos egress-queue-stats":
        return _table(("traffic-class", "tx-frames", "tx-bytes", "tx-uc-buffer-discards", "wred-discards"),
                      [[str(tc), "0", "0 Bytes", "0 Bytes", c[f"wred-discards-{tc}"]] for tc in range(8)])
    if page == "qos roce counters":
        return _tree_table([(0, "rx-stats", "", ""), (1, "rx-roce-stats", "", ""),
                            (2, "no-buffer-discard", c["roce-rx-no-buffer-discard"], "Rx buffer discards for RoCE "
                                                                                     "traffic"),
                            (2, "roce-bytes", "0 Bytes", "Rx RoCE Bytes"), (0, "tx-stats", "", ""),
                            (1, "tx-cnp-stats", "", ""),
                            (2, "unicast-no-buffer-discard", c["cnp-tx-unicast-no-buffer-discard"],
                             "Tx buffer discards for CNP traffic"), (1, "tx-ecn-stats", "", ""),
                            (2, "ecn-marked-packets", c["ecn-marked-packets"], "Tx ECN marked packets"),
                            (1, "tx-roce-stats", "", ""), (2, "buffer-usage", "0 Bytes", "Current Egress Pool-buffer "
                                                                                        "usage for RoCE traffic"),
                            (2, "unicast-no-buffer-discard", c["roce-tx-unicast-no-buffer-discard"],
                             "Tx buffer discards for RoCE traffic")])
    rows = [["time-since-last-clear-min", "1"], ["symbol-errors", c["phy-symbol-errors"]],
            ["effective-errors", c["phy-effective-errors"]], ["raw-ber", c["raw-ber"]],
            *([f"rs-num-corr-err-bin{n}", c[f"rs-num-corr-err-bin{n}"]] for n in range(16))]
    return _table(("", "operational"), rows)


# --- command line ------------------------------------------------------------------------------------------

def _options(args: list[str]) -> tuple[list[str], dict[str, str | None]]:
    """Positional words and options (``-o json``, ``-m msg``, ``--confirm [time]``, flags)."""
    words: list[str] = []
    options: dict[str, str | None] = {}
    valued = {"-o": "output", "--output": "output", "-m": "message", "--message": "message", "-r": "rev",
              "--rev": "rev"}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in valued and index + 1 < len(args):
            options[valued[arg]] = args[index + 1]
            index += 1
        elif arg == "--confirm":
            following = args[index + 1] if index + 1 < len(args) else ""
            options["confirm"] = following if re.fullmatch(r"\d+[smh]?", following) else None
            index += 1 if options["confirm"] is not None else 0
        elif arg.startswith("-"):
            options[arg.lstrip("-")] = ""
        else:
            words.append(arg)
        index += 1
    return words, options


def _run_config(state: Tree, directory: Path, words: list[str], options: dict[str, str | None]) -> str:
    verb, rest = words[0], words[1:]
    output = options.get("output") or "auto"
    if verb == "apply":
        if "confirm-status" in options:
            return confirm_status(state)
        if "confirm-yes" in options or "confirm-no" in options:
            return config_confirm(state, directory, keep="confirm-yes" in options)
        confirm = _seconds(options["confirm"] or "") if options.get("confirm") else (
            DEFAULT_CONFIRM_S if "confirm" in options else None)
        return config_apply(state, directory, rest[0] if rest else None, options.get("message") or "", confirm)
    simple = {"detach": lambda: config_detach(state, directory), "save": lambda: config_save(state, directory),
              "revision": lambda: config_revision(state, directory, output),
              "show": lambda: config_show(state, directory, options.get("rev") or "applied", output),
              "history": lambda: config_history(state, directory, rest[0] if rest else None, output),
              "diff": lambda: config_diff(state, directory, rest)}
    if verb in simple:
        return simple[verb]()
    one = {"patch": config_patch, "replace": config_replace, "attach": config_attach, "delete": config_delete}
    if verb in one and len(rest) == 1:
        return str(one[verb](state, directory, rest[0]))
    raise NvError(f"Error: unknown or incomplete command: nv config {' '.join(words)}")


def run(argv: list[str], directory: Path) -> str:
    words, options = _options(argv)
    if words[:1] == ["config"] and len(words) > 1:
        with _locked(directory) as state:
            return _run_config(state, directory, words[1:], options)
    if words[:1] == ["show"] and words[1:] in (["interface"], ["system"]):
        state = read_state(directory)
        output = options.get("output") or "auto"
        return show_interface(state, output) if words[1] == "interface" else show_system(state, output)
    if words[:2] == ["show", "interface"] and len(words) > 3 and " ".join(words[3:]) in COUNTER_PAGES:
        return show_counters(directory, read_state(directory), words[2], " ".join(words[3:]))
    raise NvError(f"Error: this lab target models nv config, nv show interface|system and the counter pages of "
                  f"nv show interface <port>, not: nv {' '.join(argv)}")


def _log(argv: list[str]) -> None:
    log = os.environ.get(LOG_VAR)
    if log:
        with Path(log).open("a") as stream:
            stream.write(json.dumps({"tool": "nv", "argv": argv, "user": _user(), "time": time.time()}) + "\n")


def main() -> int:
    directory = Path(os.environ[STATE_VAR])
    argv = sys.argv[1:]
    if argv[:1] == ["__confirm-timer"]:
        return confirm_timer(directory, argv[1], int(argv[2]))
    _log(argv)
    try:
        sys.stdout.write(run(argv, directory))
    except NvError as exc:
        sys.stderr.write(str(exc).rstrip("\n") + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
