"""A SONiC switch for the test lab, built on SONiC's own code: CONFIG_DB and STATE_DB in a real Redis, and
``config apply-patch``/``replace``/``checkpoint``/``rollback`` answered by sonic-utilities' own
``generic_config_updater`` (GCU) of the switch's release (tests/targets/sonic_gcu.py loads it from
``<vendor data>/sonic-gcu``, with the release's YANG models; its docstring lists every adapter and why).

Adapters (tests/targets/sonic_gcu.py, each the thinnest stand-in for a SONiC-only piece GCU calls, and why):
swsscommon's ``ConfigDBConnector``/``DBConnector``/``Table`` over redis-py (its C++ connector has no wheel);
``sonic-cfggen -d --print-data``/``-v`` as this module's tool (sonic-config-engine is not packaged here);
``sonic_py_common.device_info``/``multi_asic``/``logger`` (SONiC image files, a single ASIC, syslog to a file);
``sonic_yang`` = sonic-yang-mgmt master on libyang-python 2.7.1 (the releases' libyang-1 SWIG bindings exist in no
registry here) with the libyang-1 node calls and YIN-shaped table models the releases' GCU reads, libyang 3's
``json_string_datatypes``, ``find_backlinks_paths`` and ``find_leafref_path_target_paths`` done over libyang 2;
GCU's ``YANG_DIR`` pointed at the release's models (202505 uses 202411's: the vendor data has no 202505 set).

GCU's refusals are the refusals: this module has no rule of its own about what a patch may change. What it adds
is the thin command layer around GCU that sonic-utilities' ``config/main.py`` is on a switch (parse the patch file,
call ``GenericUpdater``, print ``Patch applied successfully.`` or ``Failed to apply patch due to: <reason>`` and
click's ``Error: <reason>`` with exit status 2), and the few other commands fabricgen runs:

* ``config apply-patch [-d/--dry-run] [-v] PATCH``, ``config replace [-d] FILE``, ``config checkpoint NAME``,
  ``config rollback [-d] NAME``, ``config list-checkpoints``, ``config delete-checkpoint NAME``: GCU's
  ``GenericUpdater`` (checkpoints in ``/etc/sonic/checkpoints``, GCU's own ``CHECKPOINTS_DIR``). sonic-utilities'
  ``config/main.py`` also pre-validates a patch with sonic-config-engine's ``SonicYangCfgDbGenerator`` before
  calling GCU; that package is not here, and GCU's own YANG check then gives the refusal (``Given patch will
  produce invalid config``).
* ``config save -y``: CONFIG_DB written to ``/etc/sonic/config_db.json`` (``sonic-cfggen -d --print-data``).
* ``show runningconfiguration all``: CONFIG_DB as JSON plus ``bgpraw``; ``show version``: the release.
* ``show interfaces status``: ``scripts/intfutil``'s table (no ASIC: a port's Oper state is its admin state).
* ``sonic-cfggen -d --print-data`` / ``-d -v TABLE.key.field``; ``sonic-db-cli <DB> HGET <key> <field>``.
* ``pfcwd start [--action A] [--restoration-time R] PORTS... DETECTION`` and ``pfcwd interval MS``: sonic-utilities
  ``pfcwd/main.py``, which writes CONFIG_DB ``PFC_WD`` directly (not through GCU) and skips a port without
  ``PORT_QOS_MAP|<port> pfc_enable`` ("SKIPPED: PFC is not enabled on port").

The lab's part (``DAEMON``): ``sonic-lab-redis`` starts Debian's ``redis-server`` in the switch's namespace on a
unix socket in the target's state directory (no TCP port), loads ``/etc/sonic/config_db.json`` into CONFIG_DB as a
booting switch does, and the platform's STATE_DB ``PORT_TABLE`` (an SN4700's 400G ports: FEC rs or none).
``sonic-lab-reimage RELEASE [--without-pfcwd]`` makes the switch a fresh one of another release (VERSIONS|DATABASE,
``/etc/sonic/sonic_version.yml``), optionally one whose PFC watchdog was never started (no PFC_WD table).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click

from targets import sonic_gcu

TOOLS = ("show", "config", "sonic-db-cli", "sonic-cfggen", "pfcwd", "sonic-lab-redis", "sonic-lab-reimage",
         "sonic-lab-verdict", "sonic-db-dump")
DAEMON = "sonic-lab-redis"
STATE_VAR = "SONIC_TARGET_STATE"
LOG_VAR = "SONIC_TARGET_LOG"
STARTING_CONFIG = Path(__file__).resolve().parent / "data" / "sonic" / "config_db.json"
ETC = Path(os.environ.get("SONIC_TARGET_ETC", "/etc/sonic"))  # another directory only outside the lab (tests)
STARTUP = ETC / "config_db.json"
VERSION_FILE = ETC / "sonic_version.yml"
CHECKPOINTS = Path("/etc/sonic/checkpoints")  # generic_updater.py CHECKPOINTS_DIR
SOCKET = "redis.sock"
READY = "redis.ready"
STATE_DB_SEED = "state_db.json"
DEFAULT_RELEASE = "202411"
# STATE_DB PORT_TABLE|<port> of the SN4700's 400G ports: what its xcvrd/syncd report as supported.
SUPPORTED = {"supported_fecs": "rs,none", "supported_speeds": "1000,10000,25000,40000,50000,100000,200000,400000"}
# FRR's running config (docker_routing_config_mode split: bgpd's own config, not CONFIG_DB's BGP tables).
BGPRAW = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.5.4\nhostname leaf1\n!\nend\n"


# --- the lab's side: state directory, Redis, release ---------------------------------------------------------

def state_dir() -> Path:
    return Path(os.environ[STATE_VAR])


def environment(directory: Path) -> dict[str, str]:
    """Where the adapters find Redis, the version file and syslog on this switch."""
    return {sonic_gcu.SOCKET_VAR: str(directory / SOCKET), sonic_gcu.VERSION_VAR: str(VERSION_FILE),
            sonic_gcu.SYSLOG_VAR: str(directory / "syslog")}


# The lab shares a 2-core machine with other test runs (load 10-14): a sort's wall time there is many times its CPU
# time, so the lab's switches give the driver 40 times the sorter CPU measured here (its default, 4, is for a switch
# CPU of its own): a hang guard, not a bound on the sort.
LAB_GCU_MARGIN = 40.0


def lab_connection(lab: Any, host: str) -> dict[str, Any]:
    """The inventory fields that let fabricgen reach this target in the lab (tests/fabric_lab.py): SSH as root
    with the lab key, the host key checked against the lab's known_hosts."""
    options = {"key_file": str(lab.key_file), "known_hosts": str(lab.known_hosts), "gcu_margin": LAB_GCU_MARGIN}
    return {"username": "root",
            "connection_options": {"napalm": {"platform": "fabricgen_sonic", "extras": {"optional_args": options}}}}


def lab_ready(lab: Any, host: str) -> bool:
    """The switch has booted: its CONFIG_DB is loaded (tests/fabric_lab.py waits for it)."""
    return bool((lab.state_dir(host) / READY).exists())


def lab_init(directory: Path) -> None:
    """What the platform reports (STATE_DB), before the switch boots; its config is made at first boot."""
    ports = json.loads(STARTING_CONFIG.read_text())["PORT"]
    (directory / STATE_DB_SEED).write_text(json.dumps({"PORT_TABLE": {port: dict(SUPPORTED) for port in ports}}))


def unavailable() -> str | None:
    """Why this target cannot run here (tests skip with it, or fail under FABRICGEN_REQUIRE_SHARED=1)."""
    if not Path("/usr/bin/redis-server").exists():
        return "redis-server is not installed (Debian package redis-server): the SONiC target keeps CONFIG_DB in it"
    return sonic_gcu.unavailable()


def starting_config(release: str, with_pfcwd: bool = True) -> dict[str, Any]:
    config: dict[str, Any] = json.loads(STARTING_CONFIG.read_text())
    config["VERSIONS"] = {"DATABASE": {"VERSION": f"version_{release}_01"}}  # db_migrator's CONFIG_DB version
    if not with_pfcwd:  # default_pfcwd_status disable and `pfcwd start` never run: no PFC_WD table at all
        config.pop("PFC_WD", None)
    return config


def write_image(release: str, with_pfcwd: bool = True) -> None:
    """A switch freshly installed with ``release``: its startup config and version file, no checkpoint."""
    STARTUP.parent.mkdir(parents=True, exist_ok=True)
    STARTUP.write_text(sonic_gcu.dumps(starting_config(release, with_pfcwd)) + "\n")
    # sonic_version.yml as a SONiC image writes it: build_version <branch YYYYMM>10.<build> (GCU's RDMA rules
    # compare the 8-digit branch date), asic_type of an NVIDIA Spectrum switch.
    VERSION_FILE.write_text(f"build_version: '{release}10.01'\nasic_type: 'mellanox'\n"
                            f"release: '{release}'\n")
    if CHECKPOINTS.is_dir():
        for path in CHECKPOINTS.iterdir():
            path.unlink()


def boot(directory: Path) -> None:
    """What a booting switch does to its databases: the startup config into CONFIG_DB, the platform's STATE_DB."""
    sonic_gcu.write_config(sonic_gcu.connect(sonic_gcu.CONFIG_DB), json.loads(STARTUP.read_text()))
    seed = json.loads((directory / STATE_DB_SEED).read_text())
    sonic_gcu.write_config(sonic_gcu.connect(sonic_gcu.STATE_DB), seed)


def redis_daemon() -> int:
    """``sonic-lab-redis``: redis-server on the state directory's unix socket, the switch booted into it."""
    directory = state_dir()
    (directory / READY).unlink(missing_ok=True)
    conf = directory / "redis.conf"
    conf.write_text(f"port 0\nunixsocket {directory / SOCKET}\nunixsocketperm 700\nsave \"\"\nappendonly no\n"
                    f"dir {directory}\ndaemonize no\nlogfile {directory / 'redis.log'}\n")
    server = subprocess.Popen(["/usr/bin/redis-server", str(conf)], stdin=subprocess.DEVNULL)
    sonic_gcu.wait_for_socket(str(directory / SOCKET))
    if not STARTUP.exists():
        write_image(DEFAULT_RELEASE)
    boot(directory)
    seed_counters(json.loads(STARTUP.read_text()).get("PORT", {}))
    (directory / READY).write_text("ready\n")
    return server.wait()


def wait_ready(directory: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not (directory / READY).exists():
        if time.monotonic() > deadline:
            sys.exit("sonic target: CONFIG_DB (redis-server) did not come up")
        time.sleep(0.05)


def reimage(argv: list[str]) -> int:
    """``sonic-lab-reimage RELEASE [--without-pfcwd]``: the switch as freshly installed with that release."""
    if not argv or argv[0] not in sonic_gcu.RELEASES:
        print(f"usage: sonic-lab-reimage {{{','.join(sonic_gcu.RELEASES)}}} [--without-pfcwd]", file=sys.stderr)
        return 2
    write_image(argv[0], with_pfcwd="--without-pfcwd" not in argv[1:])
    boot(state_dir())
    return 0


def running() -> dict[str, Any]:
    return sonic_gcu.read_config(sonic_gcu.connect(sonic_gcu.CONFIG_DB))


def release_of(config: dict[str, Any]) -> str:
    version = str(config.get("VERSIONS", {}).get("DATABASE", {}).get("VERSION", ""))
    match = re.fullmatch(r"version_(\d{6})_\d+", version)
    return match.group(1) if match else DEFAULT_RELEASE


def log_call(argv: list[str], status: int) -> None:
    log = os.environ.get(LOG_VAR)
    if log:
        with Path(log).open("a") as stream:
            stream.write(json.dumps({"argv": argv, "status": status}) + "\n")


# --- config: sonic-utilities' command layer over GCU --------------------------------------------------------

CONTEXT = {"help_option_names": ["-h", "--help"]}


def updater() -> Any:
    """GCU of the switch's release (VERSIONS|DATABASE), adapters in place: its ``generic_updater`` module."""
    return sonic_gcu.install(release_of(running()))


@click.group(context_settings=CONTEXT)
def config() -> None:
    """SONiC command line - 'config' command"""
    if os.geteuid() != 0:  # config/main.py, the group's callback
        sys.exit("Root privileges are required for this operation")


def _fail(ctx: click.Context, headline: str, error: Exception) -> None:
    click.echo(f"{headline}: {error}", err=True)
    ctx.fail(str(error))


@config.command("apply-patch")
@click.argument("patch-file-path", type=str, required=True)
@click.option("-f", "--format", "config_format", type=click.Choice(["CONFIGDB", "SONICYANG"]), default="CONFIGDB")
@click.option("-d", "--dry-run", is_flag=True, default=False)
@click.option("-p", "--parallel", is_flag=True, default=False)
@click.option("-n", "--ignore-non-yang-tables", is_flag=True, default=False)
@click.option("-i", "--ignore-path", multiple=True)
@click.option("-v", "--verbose", is_flag=True, default=False)
@click.pass_context
def apply_patch(ctx: click.Context, patch_file_path: str, config_format: str, dry_run: bool, parallel: bool,
                ignore_non_yang_tables: bool, ignore_path: tuple[str, ...], verbose: bool) -> None:
    """Apply given patch of updates to Config. A patch is a JsonPatch which follows rfc6902."""
    import jsonpatch

    if dry_run:
        click.echo("** DRY RUN EXECUTION **")
    try:
        patch = jsonpatch.JsonPatch(json.loads(Path(patch_file_path).read_text()))
        gu = updater()
        gu.GenericUpdater().apply_patch(patch, gu.ConfigFormat[config_format], verbose, dry_run,
                                        ignore_non_yang_tables, list(ignore_path))
    except Exception as exc:  # config/main.py: any failure is the command's error
        _fail(ctx, "Failed to apply patch due to", exc)
    click.echo("Patch applied successfully.")


@config.command()
@click.argument("target-file-path", type=str, required=True)
@click.option("-f", "--format", "config_format", type=click.Choice(["CONFIGDB", "SONICYANG"]), default="CONFIGDB")
@click.option("-d", "--dry-run", is_flag=True, default=False)
@click.option("-n", "--ignore-non-yang-tables", is_flag=True, default=False)
@click.option("-i", "--ignore-path", multiple=True)
@click.option("-v", "--verbose", is_flag=True, default=False)
@click.pass_context
def replace(ctx: click.Context, target_file_path: str, config_format: str, dry_run: bool,
            ignore_non_yang_tables: bool, ignore_path: tuple[str, ...], verbose: bool) -> None:
    """Replace the whole config with the specified config."""
    if dry_run:
        click.echo("** DRY RUN EXECUTION **")
    try:
        target = json.loads(Path(target_file_path).read_text())
        gu = updater()
        gu.GenericUpdater().replace(target, gu.ConfigFormat[config_format], verbose, dry_run,
                                    ignore_non_yang_tables, list(ignore_path))
    except Exception as exc:
        _fail(ctx, "Failed to replace config due to", exc)
    click.echo("Config replaced successfully.")


@config.command()
@click.argument("checkpoint-name", type=str, required=True)
@click.option("-v", "--verbose", is_flag=True, default=False)
@click.pass_context
def checkpoint(ctx: click.Context, checkpoint_name: str, verbose: bool) -> None:
    """Take a checkpoint of the whole current config with the specified checkpoint name."""
    try:
        updater().GenericUpdater().checkpoint(checkpoint_name, verbose)
    except Exception as exc:
        _fail(ctx, "Failed to create a config checkpoint due to", exc)
    click.echo("Checkpoint created successfully.")


@config.command()
@click.argument("checkpoint-name", type=str, required=True)
@click.option("-d", "--dry-run", is_flag=True, default=False)
@click.option("-n", "--ignore-non-yang-tables", is_flag=True, default=False)
@click.option("-i", "--ignore-path", multiple=True)
@click.option("-v", "--verbose", is_flag=True, default=False)
@click.pass_context
def rollback(ctx: click.Context, checkpoint_name: str, dry_run: bool, ignore_non_yang_tables: bool,
             ignore_path: tuple[str, ...], verbose: bool) -> None:
    """Rollback the whole config to the specified checkpoint."""
    if dry_run:
        click.echo("** DRY RUN EXECUTION **")
    try:
        updater().GenericUpdater().rollback(checkpoint_name, verbose, dry_run, ignore_non_yang_tables,
                                            list(ignore_path))
    except Exception as exc:
        _fail(ctx, "Failed to rollback config due to", exc)
    click.echo("Config rolled back successfully.")


@config.command("list-checkpoints")
@click.option("-v", "--verbose", is_flag=True, default=False)
def list_checkpoints(verbose: bool) -> None:
    """List the config checkpoints available."""
    click.echo(json.dumps(updater().GenericUpdater().list_checkpoints(verbose), indent=4))


@config.command("delete-checkpoint")
@click.argument("checkpoint-name", type=str, required=True)
@click.option("-v", "--verbose", is_flag=True, default=False)
@click.pass_context
def delete_checkpoint(ctx: click.Context, checkpoint_name: str, verbose: bool) -> None:
    """Delete a checkpoint with the specified checkpoint name."""
    try:
        updater().GenericUpdater().delete_checkpoint(checkpoint_name, verbose)
    except Exception as exc:
        _fail(ctx, "Failed to delete config checkpoint due to", exc)
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
    path = Path(filename) if filename else STARTUP
    click.echo(f"Running command: /usr/local/bin/sonic-cfggen -d --print-data > {path}")
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(sonic_gcu.dumps(running()) + "\n")
    temporary.replace(path)


# --- show, sonic-cfggen, sonic-db-cli, pfcwd -------------------------------------------------------------

@click.group(context_settings=CONTEXT)
def show() -> None:
    """SONiC command line - 'show' command"""


@show.group()
def runningconfiguration() -> None:
    """Show current running configuration information"""


@runningconfiguration.command("all")
def running_all() -> None:
    """Show full running configuration"""
    click.echo(sonic_gcu.dumps({**running(), "bgpraw": BGPRAW}))


@show.command()
def version() -> None:
    """Show version information"""
    info = sonic_gcu.sonic_version_info()
    click.echo(f"SONiC Software Version: SONiC.{info.get('build_version', '')}\n"
               f"SONiC OS Version: 12\nDistribution: Debian 12\nASIC: {info.get('asic_type', '')}\n")


@show.group()
def interfaces() -> None:
    """Show details of the network interfaces"""


@interfaces.command()
def status() -> None:
    """Show Interface status information (scripts/intfutil -c status)"""
    ports = running().get("PORT", {})
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


def sonic_cfggen(argv: list[str]) -> int:
    """sonic-config-engine's ``sonic-cfggen -d --print-data`` and ``-d -v A.b.c`` (what GCU runs)."""
    if "-d" not in argv:
        print("sonic-cfggen: the SONiC lab target reads CONFIG_DB only (-d)", file=sys.stderr)
        return 1
    config = running()
    if "-v" in argv:
        value: Any = config
        for part in argv[argv.index("-v") + 1].split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        print(value)
        return 0
    print(sonic_gcu.dumps(config))
    return 0


def sonic_db_cli(argv: list[str]) -> int:
    """sonic-swss-common's sonic-db-cli, ``<DB> HGET <key> <field>`` only: the value, or an empty line."""
    numbers = {"CONFIG_DB": sonic_gcu.CONFIG_DB, "STATE_DB": sonic_gcu.STATE_DB}
    if len(argv) != 4 or argv[0] not in numbers or argv[1].upper() != "HGET":
        print("sonic-db-cli: the SONiC lab target answers <CONFIG_DB|STATE_DB> HGET <key> <field> only",
              file=sys.stderr)
        return 1
    print(sonic_gcu.connect(numbers[argv[0]]).hget(argv[2], argv[3]) or "")
    return 0


@click.group(context_settings=CONTEXT)
def pfcwd() -> None:
    """SONiC PFC Watchdog"""


@pfcwd.command()
@click.option("--action", "-a", type=click.Choice(["drop", "forward", "alert"]))
@click.option("--restoration-time", "-r", type=click.IntRange(100, 60000))
@click.argument("ports", nargs=-1)
@click.argument("detection-time", type=click.IntRange(100, 5000))
def start(action: str | None, restoration_time: int | None, ports: tuple[str, ...], detection_time: int) -> None:
    """Start PFC watchdog on port(s). To config all ports, use all as input."""
    if os.geteuid() != 0:
        sys.exit("Root privileges are required for this operation")
    config = running()
    all_ports = sorted(config.get("PORT", {}))
    invalid = sorted(set(ports) - {"all", *all_ports})
    if invalid:
        click.echo("Failed to run command, invalid options:\n" + "\n".join(invalid))
        sys.exit(1)
    entry = {"detection_time": str(detection_time), **({"action": action} if action else {})}
    if restoration_time is None:
        restoration_time = 2 * detection_time
        click.echo(f"restoration time not defined; default to 2 times detection time: {restoration_time} ms")
    entry["restoration_time"] = str(restoration_time)
    db = sonic_gcu.ConfigDBConnector()
    db.connect()
    for port in all_ports if "all" in ports or not ports else ports:
        if config.get("PORT_QOS_MAP", {}).get(port, {}).get("pfc_enable") is None:
            click.echo(f"SKIPPED: PFC is not enabled on port: {port}")
            continue
        db.set_entry("PFC_WD", port, entry)


@pfcwd.command()
@click.argument("poll_interval", type=click.IntRange(100, 3000))
def interval(poll_interval: int) -> None:
    """Set PFC watchdog counter polling interval"""
    if os.geteuid() != 0:
        sys.exit("Root privileges are required for this operation")
    table = running().get("PFC_WD", {})
    times = [int(entry[name]) for key, entry in table.items() if "Ethernet" in key
             for name in ("detection_time", "restoration_time") if name in entry]
    if times and min(times) < poll_interval:
        click.echo(f"unable to use polling interval = {poll_interval}ms, value is bigger than one of the configured "
                   "detection time values, please choose a smaller polling_interval", err=True)
        sys.exit(1)
    db = sonic_gcu.connect(sonic_gcu.CONFIG_DB)
    db.hdel("PFC_WD|GLOBAL", "NULL")
    db.hset("PFC_WD|GLOBAL", "POLL_INTERVAL", str(poll_interval))


class _Sorted(Exception):
    """Raised where GCU's sorter would start searching an order: every check before it has passed."""


class _StopBeforeSorting:
    def sort(self, patch: Any, algorithm: Any = None) -> list[Any]:
        raise _Sorted


def verdicts(argv: list[str]) -> int:
    """``sonic-lab-verdict`` (tests only): for each JSON Patch of the JSON list on stdin, GCU's verdict on the switch
    as it is, from GCU's own PatchApplier and StrictPatchSorter up to where the sorter starts searching an order
    (field rules, empty tables, YANG models-only tables, YANG validity of the result): null when all pass, else
    GCU's error. Printed as a JSON list. The search itself (minutes a patch) is left to the dry runs."""
    import jsonpatch

    gu = updater()
    gu_common: Any = sys.modules["generic_config_updater.gu_common"]
    sorter_module: Any = sys.modules["generic_config_updater.patch_sorter"]
    answers: list[str | None] = []
    for operations in json.loads(sys.stdin.read()):
        config_wrapper = gu_common.DryRunConfigWrapper()
        patch_wrapper = gu_common.PatchWrapper(config_wrapper)
        sorter = sorter_module.StrictPatchSorter(config_wrapper, patch_wrapper, _StopBeforeSorting())
        applier = gu.PatchApplier(patchsorter=sorter, changeapplier=gu.DryRunChangeApplier(config_wrapper),
                                  config_wrapper=config_wrapper, patch_wrapper=patch_wrapper)
        try:
            applier.apply(jsonpatch.JsonPatch(operations))
            answers.append("the patch was applied without sorting (GCU did not reach its sorter)")
        except _Sorted:
            answers.append(None)
        except Exception as exc:  # GCU's refusal, whatever its class
            answers.append(f"{type(exc).__name__}: {exc}")
    print(json.dumps(answers))
    return 0


# --- counters: COUNTERS_DB and APPL_DB's PORT_TABLE, and sonic-db-dump ----------------------------------------
# What syncd's flex counters and portsyncd keep on a switch, in the same Redis: COUNTERS_PORT_NAME_MAP (port →
# SAI object id), one COUNTERS:<oid> hash per port with SAI's port statistics, eight unicast queues per port
# (COUNTERS_QUEUE_NAME_MAP "<port>:<n>", _INDEX_MAP, _TYPE_MAP) each with its COUNTERS:<oid> hash (SAI queue
# statistics and orchagent's PFC watchdog fields), and APPL_DB PORT_TABLE:<port> flap_count. Field names as in
# sonic-utilities' tests/mock_tables (tests/observe_fixtures/sonic_mock_tables.json); every counter starts at 0, a
# test injects a fault by writing a number into the switch's Redis (set_counters). The ASIC is absent, so
# nothing counts by itself.
COUNTERS_DB, APPL_DB = 2, 0  # sonic-swss-common common/database_config.json
PORT_COUNTERS = ("SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES", "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES",
                 "SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS", "SAI_PORT_STAT_IF_IN_DISCARDS",
                 *(f"SAI_PORT_STAT_PFC_{p}_{s}" for p in range(8) for s in ("RX_PKTS", "TX_PKTS")))
QUEUE_COUNTERS = ("SAI_QUEUE_STAT_PACKETS", "SAI_QUEUE_STAT_DROPPED_PACKETS", "SAI_QUEUE_STAT_WRED_DROPPED_PACKETS",
                  "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES",
                  "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED")
DB_NAMES = {"APPL_DB": APPL_DB, "COUNTERS_DB": COUNTERS_DB, "CONFIG_DB": sonic_gcu.CONFIG_DB,
            "STATE_DB": sonic_gcu.STATE_DB}


def seed_counters(ports: dict[str, Any]) -> None:
    """The counter tables of a switch just booted with ``ports``: every counter 0."""
    counters = sonic_gcu.connect(COUNTERS_DB)
    appl = sonic_gcu.connect(APPL_DB)
    counters.flushdb()
    names: dict[str, str] = {}
    queues: dict[str, str] = {}
    for number, port in enumerate(sorted(ports, key=lambda name: int(re.sub(r"\D", "", name) or 0)), 1):
        names[port] = f"oid:0x1000000{number:06x}"
        counters.hset(f"COUNTERS:{names[port]}", mapping={field: "0" for field in PORT_COUNTERS})
        for queue in range(8):
            oid = f"oid:0x15000000{number:04x}{queue:02x}"
            queues[f"{port}:{queue}"] = oid
            counters.hset("COUNTERS_QUEUE_INDEX_MAP", oid, str(queue))
            counters.hset("COUNTERS_QUEUE_TYPE_MAP", oid, "SAI_QUEUE_TYPE_UNICAST")
            counters.hset(f"COUNTERS:{oid}", mapping={field: "0" for field in QUEUE_COUNTERS})
        appl.hset(f"PORT_TABLE:{port}", mapping={"admin_status": "up", "oper_status": "up", "flap_count": "0"})
    if names:
        counters.hset("COUNTERS_PORT_NAME_MAP", mapping=names)
        counters.hset("COUNTERS_QUEUE_NAME_MAP", mapping=queues)


def set_counters(directory: Path, port: str, fields: dict[str, int], queue: int | None = None) -> None:
    """A test's fault, written on the switch: SAI port (or, with ``queue``, queue) counters of ``port`` set to
    ``fields``; ``flap_count`` goes to APPL_DB's PORT_TABLE. A field the tables do not hold is refused."""
    os.environ.update(environment(directory))
    counters = sonic_gcu.connect(COUNTERS_DB)
    if "flap_count" in fields:
        sonic_gcu.connect(APPL_DB).hset(f"PORT_TABLE:{port}", "flap_count", str(fields.pop("flap_count")))
    oid = (counters.hget("COUNTERS_PORT_NAME_MAP", port) if queue is None
           else counters.hget("COUNTERS_QUEUE_NAME_MAP", f"{port}:{queue}"))
    unknown = sorted(set(fields) - set(PORT_COUNTERS if queue is None else QUEUE_COUNTERS))
    if oid is None or unknown:
        raise ValueError(f"the SONiC lab target has no {port} queue {queue} counters {unknown}")
    if fields:
        counters.hset(f"COUNTERS:{oid}", mapping={name: str(value) for name, value in fields.items()})


def sonic_db_dump(argv: list[str]) -> int:
    """SONiC's ``sonic-db-dump -n DB [-k PATTERN] [-y]``: the database's keys matching PATTERN (default
    every key) as one JSON object, each key's hash wrapped as {"expireat", "ttl", "type": "hash", "value"}; ``-y``
    indents it. Hashes only: the tables above are all hashes."""
    database, pattern, indent = None, "*", None
    words = iter(argv)
    for word in words:
        if word in ("-n", "--db"):
            database = next(words, None)
        elif word in ("-k", "--key"):
            pattern = next(words, "*")
        elif word in ("-y", "--pretty"):
            indent = 4
        else:
            print(f"sonic-db-dump: the SONiC lab target takes -n DB [-k PATTERN] [-y], not {word}", file=sys.stderr)
            return 1
    if database not in DB_NAMES:
        print(f"sonic-db-dump: no database {database} (the lab target has {', '.join(DB_NAMES)})", file=sys.stderr)
        return 1
    db = sonic_gcu.connect(DB_NAMES[database])
    dump = {key: {"expireat": 0, "ttl": -0.001, "type": "hash", "value": db.hgetall(key)}
            for key in sorted(db.scan_iter(match=pattern)) if db.type(key) == "hash"}
    print(json.dumps(dump, indent=indent, sort_keys=True))
    return 0


COMMANDS = {"config": config, "show": show, "pfcwd": pfcwd}
PROGRAMS = {"sonic-cfggen": sonic_cfggen, "sonic-db-cli": sonic_db_cli, "sonic-lab-reimage": reimage,
            "sonic-lab-verdict": verdicts, "sonic-db-dump": sonic_db_dump}


def main() -> int:
    tool = Path(sys.argv[0]).name
    directory = state_dir()
    os.environ.update(environment(directory))
    if tool == DAEMON:
        return redis_daemon()
    wait_ready(directory)
    if tool in PROGRAMS:
        status = PROGRAMS[tool](sys.argv[1:])
        log_call(sys.argv, status)
        return status
    command = COMMANDS.get(tool)
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
