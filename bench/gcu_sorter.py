"""What SONiC's GCU patch sorter costs against patch size: ports × tables (issue 24, docs/platforms.md).

Runs sonic-utilities' own generic_config_updater (../shared/sonic-gcu, the release given) on this machine, over a
redis-server CONFIG_DB started here (the SONiC lab target's programs, tests/targets/sonic.py), and times
``config apply-patch --dry-run`` of fabricgen's first push of a golden SONiC config narrowed to 1, 2, 4, ... of
its data ports. Prints one JSON line per size: ports, patch operations, ports bounced, CPU seconds of the GCU
process and wall seconds. The dry run sorts exactly as an apply does (DryRunChangeApplier only skips the writes).

    python bench/gcu_sorter.py --release 202511 --ports 1 2 4 8 [--golden golden/fabric/leaf1/config_db.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the lab's targets package (tests/targets/__init__.py says why)

from fabricgen.platforms.sonic import gcu  # noqa: E402

from targets import sonic as target  # noqa: E402

NARROWED = ("PORT", "PORT_QOS_MAP", "QUEUE", "BUFFER_PG", "PFC_WD")


def narrowed(config: dict[str, Any], ports: list[str]) -> dict[str, Any]:
    """The config with only ``ports`` of its data ports (the switch-wide tables stay)."""
    keep = {*ports, "global", "GLOBAL"}
    out = {table: ({key: row for key, row in rows.items() if key.split("|")[0] in keep} if table in NARROWED
                   else rows) for table, rows in config.items()}
    out["CABLE_LENGTH"] = {name: {port: row[port] for port in ports if port in row}
                           for name, row in config.get("CABLE_LENGTH", {}).items()}
    return {table: rows for table, rows in out.items() if rows}


def switch_env(directory: Path) -> dict[str, str]:
    (directory / "state").mkdir()
    (directory / "etc").mkdir()
    (directory / "bin").mkdir()
    target.lab_init(directory / "state")
    launcher = directory / "bin" / "lab-target-sonic"
    launcher.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n"
                        "from targets.sonic import main\nsys.exit(main())\n")
    launcher.chmod(0o755)
    for tool in target.TOOLS:
        (directory / "bin" / tool).symlink_to(launcher.name)
    return {**os.environ, target.STATE_VAR: str(directory / "state"), "SONIC_TARGET_ETC": str(directory / "etc"),
            "PATH": f"{directory / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"}


def measure(env: dict[str, str], directory: Path, release: str, candidate: dict[str, Any]) -> dict[str, Any]:
    subprocess.run(["sonic-lab-reimage", release], env=env, check=True, capture_output=True)
    running = json.loads(subprocess.run(["sonic-cfggen", "-d", "--print-data"], env=env, check=True,
                                        capture_output=True, text=True).stdout)
    planned = gcu.plan(running, candidate)
    patch = directory / "patch.json"
    patch.write_text(json.dumps(gcu.as_patch(planned.changes)))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(["config", "apply-patch", "--dry-run", str(patch)], env=env, capture_output=True, text=True,
                          check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    downs = sorted({line.split('"path": "/PORT/')[1].split("/")[0] for line in done.stdout.splitlines()
                    if '/admin_status", "value": "down"' in line})
    return {"release": release, "ports": len(candidate.get("PORT", {})), "operations": len(planned.changes),
            "bounced_predicted": planned.bounced, "bounced_by_sorter": downs, "accepted": done.returncode == 0,
            "cpu_s": round(cpu, 1), "wall_s": round(wall, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--release", default="202511", choices=("202411", "202505", "202511"))
    parser.add_argument("--ports", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--golden", type=Path, default=ROOT / "golden" / "fabric" / "leaf1" / "config_db.json")
    args = parser.parse_args()
    config = json.loads(args.golden.read_text())
    ports = sorted(config["PORT"], key=gcu.natural)
    with tempfile.TemporaryDirectory(prefix="gcu-sorter-") as name:
        directory = Path(name)
        env = switch_env(directory)
        server = subprocess.Popen([str(directory / "bin" / target.DAEMON)], env=env, start_new_session=True,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while not (directory / "state" / target.READY).exists():
                time.sleep(0.05)
            for count in args.ports:
                print(json.dumps(measure(env, directory, args.release, narrowed(config, ports[:count]))), flush=True)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
