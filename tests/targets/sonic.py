"""A SONiC switch's configuration CLI for the test lab (no SONiC image runs here): sonic-utilities' ``config``
GCU commands and the ``show`` commands fabricgen reads, on a CONFIG_DB kept in a JSON file.

What it implements, after sonic-utilities (``config/main.py``, ``generic_config_updater/``) and the GCU design
document (sonic-net/SONiC ``doc/config-generic-update-rollback/SONiC_Generic_Config_Update_and_Rollback_Design.md``):

* ``config apply-patch [-d/--dry-run] [-v] [-f CONFIGDB] PATCH`` — "Apply given patch of updates to Config. A patch
  is a JsonPatch which follows rfc6902." As ``generic_config_updater/main.py`` ``apply_patch_from_file`` and
  ``generic_updater.py`` ``PatchApplier.apply`` do, in this order: the patch file must be a list of operations
  ("Invalid patch format in file: ..."); the patched config is simulated and validated against SONiC's YANG models
  ("Failed validating patch: ..."); field rules (``gu_common.py`` ``validate_field_operation``: removing
  ``/PFC_WD/GLOBAL``, ``/PFC_WD/GLOBAL/POLL_INTERVAL`` or ``/LOOPBACK_INTERFACE/Loopback0`` is illegal; BUFFER_POOL
  may not change at all; a BUFFER_PROFILE only its ``dynamic_th``/``xoff``, and on 202505 and older no profile may be
  added or removed); no empty table ("EmptyTableError"). Only then is anything applied. ``--dry-run`` stops there.
  YANG validation is fabricgen's own validator (fabricgen.validate.sonic_yang, the function ``fabricgen validate``
  uses) over the models in ``../shared/sonic-yang/models``; without them this target refuses every patch and says
  why (``yang_unavailable``).
* ``config checkpoint NAME`` — "Take a checkpoint of the whole current config" (``<checkpoints>/NAME.cp.json``);
  ``config rollback NAME`` — "Rollback the whole config to the specified checkpoint" (``config replace`` with its
  content: the same validation); ``config list-checkpoints``; ``config delete-checkpoint NAME``.
* ``config save -y`` — the running config written to the startup file (``/etc/sonic/config_db.json`` on a switch).
* ``show runningconfiguration all`` — CONFIG_DB as JSON plus ``bgpraw`` (FRR's running config, split mode).
* ``show interfaces status`` — ``scripts/intfutil``'s table. No ASIC here: a port's Oper state is its admin state.
* ``sonic-db-cli STATE_DB HGET PORT_TABLE|<port> supported_fecs|supported_speeds`` — what the platform reports
  (``state_db.json``; an SN4700's 400G ports: FEC rs or none). GCU's PORT validator
  (``port_config_update_validator``) refuses a fec or speed not listed there.

Emulated rather than real: CONFIG_DB is ``running.json`` in the state directory (``$SONIC_TARGET_STATE``) and the
startup file ``config_db.json`` beside it; a patch is applied at once, where GCU applies it change by change in an
order it sorts (so a refused patch leaves the file as it was, as GCU's validation before applying does); GCU's
checks that need the ASIC's identity (the RDMA validators' platform and release table) are not modelled.
Error replies follow sonic-utilities' click commands: ``Failed to apply patch due to: <reason>`` then click's usage
error ``Error: <reason>``, exit status 2.
"""

from __future__ import annotations

import copy
import fcntl
import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import jsonpatch

TOOLS = ("show", "config", "sonic-db-cli")
STATE_VAR = "SONIC_TARGET_STATE"
LOG_VAR = "SONIC_TARGET_LOG"
ROOT = Path(__file__).resolve().parents[2]
STARTING_CONFIG = Path(__file__).resolve().parent / "data" / "sonic" / "config_db.json"
MODELS = ROOT.parent / "shared" / "sonic-yang" / "models"
RUNNING = "running.json"
STARTUP = "config_db.json"
STATE_DB = "state_db.json"  # what the platform reports (STATE_DB PORT_TABLE), read by GCU's PORT validator
# STATE_DB PORT_TABLE|<port> of the SN4700's 400G ports: what its xcvrd/syncd report as supported.
SUPPORTED = {"supported_fecs": "rs,none", "supported_speeds": "1000,10000,25000,40000,50000,100000,200000,400000"}
# field_operation_validators.py DEFAULT_SUPPORTED_FECS_LIST: a port whose STATE_DB names no supported FECs.
DEFAULT_SUPPORTED_FECS = ("rs", "fc", "none", "auto")
CHECKPOINTS = "checkpoints"
CHECKPOINT_EXT = ".cp.json"  # generic_updater.py CHECKPOINT_EXT
# FRR's running config (docker_routing_config_mode split: bgpd's own config, not CONFIG_DB's BGP tables).
BGPRAW = """Building configuration...

Current configuration:
!
frr version 8.5.4
frr defaults traditional
hostname leaf1
!
router bgp 65101
 bgp router-id 10.1.0.1
 neighbor 10.0.0.1 remote-as 65200
 neighbor 10.0.0.3 remote-as 65200
 !
 address-family ipv4 unicast
  network 10.1.0.1/32
 exit-address-family
exit
!
end
"""
# gu_common.py validate_field_operation: illegal_operations_to_fields_map["remove"].
ILLEGAL_REMOVALS = ("/PFC_WD/GLOBAL/POLL_INTERVAL", "/PFC_WD/GLOBAL", "/LOOPBACK_INTERFACE/Loopback0")
VALIDATORS = "generic_config_updater.field_operation_validators"
# gcu_field_operation_validators.conf.json BUFFER_PROFILE: the in-place edits (field, operation) it lists; whole
# profiles (field_operation_validators.py buffer_profile_config_update_validator) from 202511 (#4087).
BUFFER_PROFILE_EDITS = frozenset({("dynamic_th", "replace"), ("xoff", "replace"), ("packet_discard_action", "add"),
                                  ("packet_discard_action", "replace")})
WHOLE_PROFILE_FROM = "202511"


class GcuError(Exception):
    """A refusal, worded as sonic-utilities words it."""


# --- state ------------------------------------------------------------------------------------------------

def state_dir() -> Path:
    return Path(os.environ[STATE_VAR])


def lab_connection(lab: Any, host: str) -> dict[str, Any]:
    """The inventory fields that let fabricgen reach this target in the lab (tests/fabric_lab.py): SSH as root
    with the lab key, the host key checked against the lab's known_hosts."""
    options = {"key_file": str(lab.key_file), "known_hosts": str(lab.known_hosts)}
    return {"username": "root",
            "connection_options": {"napalm": {"platform": "fabricgen_sonic", "extras": {"optional_args": options}}}}


def lab_init(directory: Path) -> None:
    """The switch as delivered: SONiC's sample shape for an SN4700 leaf (lanes, aliases, BGP, ACL, SONiC's own
    QoS and buffer templates), running and saved alike; no checkpoint yet."""
    text = STARTING_CONFIG.read_text()
    (directory / RUNNING).write_text(text)
    (directory / STARTUP).write_text(text)
    ports = json.loads(text)["PORT"]
    write_json(directory / STATE_DB, {"PORT_TABLE": {port: dict(SUPPORTED) for port in ports}})


def yang_unavailable() -> str | None:
    """Why this target cannot validate against SONiC's YANG models (then it refuses every patch), or None."""
    if not any(MODELS.glob("*.yang")):
        return f"SONiC YANG models not found in {MODELS} (the SONiC target validates every patch against them)"
    try:
        import libyang  # noqa: F401
    except ImportError as exc:
        return f"libyang is not importable ({exc}): the SONiC target cannot validate patches against YANG models"
    return None


def read_running(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / RUNNING).read_text())
    return data


def write_json(path: Path, data: Any) -> None:
    """Atomically (a reader never sees half a file), as sonic-cfggen's output is a whole file."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(data, indent=4, sort_keys=True) + "\n")
    temporary.replace(path)


@contextmanager
def config_lock(directory: Path) -> Iterator[None]:
    """One writer at a time (GCU's ConfigLock)."""
    with (directory / "gcu.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def log_call(argv: list[str], status: int) -> None:
    log = os.environ.get(LOG_VAR)
    if log:
        with Path(log).open("a") as stream:
            stream.write(json.dumps({"argv": argv, "status": status}) + "\n")


# --- GCU --------------------------------------------------------------------------------------------------

def validate_patch_format(patch: Any) -> bool:
    return isinstance(patch, list) and all(isinstance(op, dict) and "op" in op and "path" in op for op in patch)


def yang_issues(config: dict[str, Any]) -> list[str]:
    reason = yang_unavailable()
    if reason:
        return [reason]
    from fabricgen.validate.sonic_yang import SonicYangValidator

    return [f"{issue.path}: {issue.message}" for issue in SonicYangValidator(MODELS).validate(config)]


def release(config: dict[str, Any]) -> str:
    version = str(config.get("VERSIONS", {}).get("DATABASE", {}).get("VERSION", ""))
    match = re.fullmatch(r"version_(\d{6})_\d+", version)
    return match.group(1) if match else "202411"


def validate_field_operation(old: dict[str, Any], target: dict[str, Any]) -> None:
    """gu_common.py ConfigWrapper.validate_field_operation, on the diff old → target (as GCU computes it)."""
    diff = jsonpatch.JsonPatch.from_diff(old, target)
    for element in diff:
        if element["op"] == "remove" and element["path"] in ILLEGAL_REMOVALS:
            raise GcuError("Given patch operation is invalid. Operation: remove is illegal on field: "
                           f"{element['path']}")
    for element in diff:
        table = element["path"].split("/")[1]
        function = _refusing_validator(table, element, release(old))
        if function:
            raise GcuError(f"Modification of {table} table is illegal- validating function {VALIDATORS}.{function} "
                           "returned False")


def _refusing_validator(table: str, element: dict[str, Any], version: str) -> str | None:
    """The field_operation_validators.py function that refuses ``element``, or None."""
    if table == "BUFFER_POOL":  # its scenario lists no field, operation or platform
        return "rdma_config_update_validator"
    if table == "PORT":
        return None if port_update_allowed(element) else "port_config_update_validator"
    if table != "BUFFER_PROFILE":
        return None
    parts = element["path"].split("/")
    in_place = len(parts) == 4 and (parts[3], element["op"]) in BUFFER_PROFILE_EDITS
    whole = len(parts) <= 3 and version >= WHOLE_PROFILE_FROM
    return None if in_place or whole else "buffer_profile_config_update_validator"


def port_update_allowed(element: dict[str, Any]) -> bool:
    """field_operation_validators.py port_config_update_validator: a PORT speed or fec must be one the port's
    STATE_DB entry lists as supported (a FEC: any of DEFAULT_SUPPORTED_FECS when it lists none)."""
    if element["op"] == "remove":
        return True
    parts = element["path"].split("/")
    value = element.get("value")
    if len(parts) == 4:
        fields = {parts[3]: value}
    elif len(parts) == 3 and isinstance(value, dict):
        fields = value
    else:
        return True  # a whole table: GCU walks it too; the lab's patches never add PORT whole
    port = parts[2]
    return all(_supported(port, name, str(fields[name])) for name in ("fec", "speed") if name in fields)


def _supported(port: str, field: str, value: str) -> bool:
    listed = state_db_port(port).get(f"supported_{field}s", "")
    if field == "fec":
        if not listed:
            return value.strip() in DEFAULT_SUPPORTED_FECS
        return listed != "N/A" and value.strip() in [v.strip() for v in listed.split(",")]
    speeds = [int(v) for v in listed.split(",") if v]
    return not speeds or (value.isdigit() and int(value) in speeds)


def state_db_port(port: str) -> dict[str, str]:
    path = state_dir() / STATE_DB
    entry: dict[str, str] = json.loads(path.read_text()).get("PORT_TABLE", {}).get(port, {}) if path.exists() else {}
    return entry


def empty_tables(config: dict[str, Any]) -> list[str]:
    return [table for table, rows in config.items() if not rows]


def check_target(old: dict[str, Any], target: dict[str, Any], failure: str) -> None:
    """Everything GCU checks before it changes anything (the module docstring's order)."""
    # sonic-yang's translation has no use for an empty table (it becomes no YANG data); GCU refuses it below.
    issues = yang_issues({table: rows for table, rows in target.items() if rows})
    if issues:
        for issue in issues:  # sonic-yang's reasons (syslog on a switch), before the command's own error line
            click.echo(f"sonic_yang: {issue}", err=True)
        raise GcuError(failure)
    validate_field_operation(old, target)
    empty = empty_tables(target)
    if empty:
        raise GcuError(f"localhost: given patch is not valid because it will result in empty tables which is not "
                       f"allowed in ConfigDb. Table{'s' if len(empty) != 1 else ''}: {', '.join(empty)}")


def simulate(running: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    try:
        target: dict[str, Any] = jsonpatch.JsonPatch(patch).apply(copy.deepcopy(running))
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        raise GcuError(f"Failed validating patch: {patch} ({exc})") from None
    return target


# --- the commands -----------------------------------------------------------------------------------------

CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=CONTEXT)
def config() -> None:
    """SONiC command line - 'config' command"""
    if os.geteuid() != 0:  # config/main.py, the group's callback
        sys.exit("Root privileges are required for this operation")


def _fail(ctx: click.Context, headline: str | None, error: Exception) -> None:
    if headline:
        click.echo(headline, err=True)
    ctx.fail(str(error))


@config.command("apply-patch")
@click.argument("patch-file-path", type=str, required=True)
@click.option("-f", "--format", "config_format", type=click.Choice(["CONFIGDB", "SONICYANG"]), default="CONFIGDB")
@click.option("-d", "--dry-run", is_flag=True, default=False)
@click.option("-p", "--parallel", is_flag=True, default=False)
@click.option("-n", "--ignore-non-yang-tables", is_flag=True, default=False, hidden=True)
@click.option("-i", "--ignore-path", multiple=True, hidden=True)
@click.option("-v", "--verbose", is_flag=True, default=False)
@click.pass_context
def apply_patch(ctx: click.Context, patch_file_path: str, config_format: str, dry_run: bool, parallel: bool,
                ignore_non_yang_tables: bool, ignore_path: tuple[str, ...], verbose: bool) -> None:
    """Apply given patch of updates to Config. A patch is a JsonPatch which follows rfc6902."""
    if dry_run:
        click.echo("** DRY RUN EXECUTION **")
    directory = state_dir()
    try:
        if config_format != "CONFIGDB":
            raise GcuError("this lab target takes CONFIGDB patches only")
        patch = json.loads(Path(patch_file_path).read_text())
        if not validate_patch_format(patch):
            raise GcuError(f"Invalid patch format in file: {patch_file_path}")
        with config_lock(directory):
            running = read_running(directory)
            target = simulate(running, patch)
            check_target(running, target, f"Failed validating patch: {patch}")
            if not dry_run:
                write_json(directory / RUNNING, target)
    except (GcuError, OSError, ValueError) as exc:
        _fail(ctx, f"Failed to apply patch due to: {exc}", exc)
    click.echo("Patch applied successfully.")


@config.command()
@click.argument("checkpoint-name", type=str, required=True)
@click.option("-v", "--verbose", is_flag=True, default=False)
@click.pass_context
def checkpoint(ctx: click.Context, checkpoint_name: str, verbose: bool) -> None:
    """Take a checkpoint of the whole current config with the specified checkpoint name."""
    directory = state_dir()
    try:
        with config_lock(directory):
            (directory / CHECKPOINTS).mkdir(exist_ok=True)
            write_json(directory / CHECKPOINTS / f"{checkpoint_name}{CHECKPOINT_EXT}", read_running(directory))
    except OSError as exc:
        _fail(ctx, "Failed to create a config checkpoint", exc)
    click.echo("Checkpoint created successfully.")


@config.command()
@click.argument("checkpoint-name", type=str, required=True)
@click.option("-d", "--dry-run", is_flag=True, default=False)
@click.option("-n", "--ignore-non-yang-tables", is_flag=True, default=False, hidden=True)
@click.option("-i", "--ignore-path", multiple=True, hidden=True)
@click.option("-v", "--verbose", is_flag=True, default=False)
@click.pass_context
def rollback(ctx: click.Context, checkpoint_name: str, dry_run: bool, ignore_non_yang_tables: bool,
             ignore_path: tuple[str, ...], verbose: bool) -> None:
    """Rollback the whole config to the specified checkpoint."""
    if dry_run:
        click.echo("** DRY RUN EXECUTION **")
    directory = state_dir()
    path = directory / CHECKPOINTS / f"{checkpoint_name}{CHECKPOINT_EXT}"
    try:
        if not path.is_file():
            raise GcuError(f"Checkpoint '{checkpoint_name}' does not exist")
        with config_lock(directory):
            running, target = read_running(directory), json.loads(path.read_text())
            check_target(running, target, f"Failed validating patch: {jsonpatch.make_patch(running, target)}")
            if not dry_run:
                write_json(directory / RUNNING, target)
    except (GcuError, OSError, ValueError) as exc:
        _fail(ctx, "Failed to rollback config", exc)
    click.echo("Config rolled back successfully.")


@config.command("list-checkpoints")
@click.option("-t", "--time", "with_time", is_flag=True, default=False)
@click.option("-v", "--verbose", is_flag=True, default=False)
def list_checkpoints(with_time: bool, verbose: bool) -> None:
    """List the config checkpoints available."""
    folder = state_dir() / CHECKPOINTS
    names = sorted(p.name[: -len(CHECKPOINT_EXT)] for p in folder.glob(f"*{CHECKPOINT_EXT}")) if folder.is_dir() else []
    click.echo(json.dumps(names, indent=4))


@config.command("delete-checkpoint")
@click.argument("checkpoint-name", type=str, required=True)
@click.option("-v", "--verbose", is_flag=True, default=False)
@click.pass_context
def delete_checkpoint(ctx: click.Context, checkpoint_name: str, verbose: bool) -> None:
    """Delete a checkpoint with the specified checkpoint name."""
    path = state_dir() / CHECKPOINTS / f"{checkpoint_name}{CHECKPOINT_EXT}"
    if not path.is_file():
        _fail(ctx, "Failed to delete config checkpoint", GcuError(f"Checkpoint '{checkpoint_name}' does not exist"))
    path.unlink()
    click.echo("Checkpoint deleted successfully.")


def _abort_if_false(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value:
        ctx.abort()


@config.command()
@click.option("-y", "--yes", is_flag=True, callback=_abort_if_false, expose_value=False,
              prompt="Existing files will be overwritten, continue?")
@click.argument("filename", required=False)
def save(filename: str | None) -> None:
    """Export current config DB to a file on disk."""
    directory = state_dir()
    startup = filename or "/etc/sonic/config_db.json"
    click.echo(f"Running command: /usr/local/bin/sonic-cfggen -d --print-data > {startup}")
    with config_lock(directory):
        write_json(Path(filename) if filename else directory / STARTUP, read_running(directory))


@click.group(context_settings=CONTEXT)
def show() -> None:
    """SONiC command line - 'show' command"""


@show.group()
def runningconfiguration() -> None:
    """Show current running configuration information"""


@runningconfiguration.command("all")
def running_all() -> None:
    """Show full running configuration"""
    click.echo(json.dumps({**read_running(state_dir()), "bgpraw": BGPRAW}, indent=4, sort_keys=True))


@show.group()
def interfaces() -> None:
    """Show details of the network interfaces"""


@interfaces.command()
def status() -> None:
    """Show Interface status information (scripts/intfutil -c status)"""
    ports = read_running(state_dir()).get("PORT", {})
    header = ["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin", "Type", "Asym PFC"]
    rows = [[name, port.get("lanes", "N/A"), _speed(port.get("speed")), port.get("mtu", "N/A"),
             port.get("fec", "N/A"), port.get("alias", "N/A"), "routed", port.get("admin_status", "down"),
             port.get("admin_status", "down"), "QSFP56-DD", "N/A"] for name, port in sorted(
                 ports.items(), key=lambda item: int(re.sub(r"\D", "", item[0]) or 0))]
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(cell).rjust(width) for cell, width in zip(row, widths, strict=True))
             for row in [header, ["-" * width for width in widths], *rows]]
    click.echo("\n".join(lines))


def _speed(mbps: str | None) -> str:
    return f"{int(mbps) // 1000}G" if mbps and mbps.isdigit() else "N/A"


def sonic_db_cli(argv: list[str]) -> int:
    """sonic-swss-common's sonic-db-cli, ``STATE_DB HGET <key> <field>`` only: the value, or an empty line."""
    if len(argv) != 4 or argv[0] != "STATE_DB" or argv[1].upper() != "HGET":
        print("sonic-db-cli: the SONiC lab target answers STATE_DB HGET <key> <field> only", file=sys.stderr)
        return 1
    table, _, key = argv[2].partition("|")
    print(state_db_port(key).get(argv[3], "") if table == "PORT_TABLE" else "")
    return 0


def main() -> int:
    tool = Path(sys.argv[0]).name
    if tool == "sonic-db-cli":
        status = sonic_db_cli(sys.argv[1:])
        log_call(sys.argv, status)
        return status
    command = {"config": config, "show": show}.get(tool)
    if command is None:
        print(f"{tool}: not a tool of the SONiC lab target ({', '.join(TOOLS)})", file=sys.stderr)
        return 127
    try:
        command.main(args=sys.argv[1:], prog_name=tool, standalone_mode=True)
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
        log_call(sys.argv, status)
        return status
    log_call(sys.argv, 0)
    return 0
