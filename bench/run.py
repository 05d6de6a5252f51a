#!/usr/bin/env python3
"""fabricgen's scale benchmark: each phase at 32 → 32,768 GPUs, side by side with pyavd and the I/O floor.

    .venv/bin/python bench/run.py [--gpus 32 1024 8192 32768] [--jobs 2] [--json bench/results.json]

Per size, each in fresh processes with its own parse cache (the two cold renders first, before the bench writes its
other trees: see run_size):
  phases       bench/phases.py: load, resolve, lint, render, write one after the other (--jobs 1): wall and CPU,
               peak RSS; cold parse cache
  cli cold     `fabricgen render --jobs N` end to end (interpreter start-up included), cold parse cache
  cli warm     the same command into a new directory, parse cache warm (a CI runner that keeps its cache)
  incremental  one host's cable length changed in hosts.yaml, `fabricgen render` into the existing tree (the
               neighbourhood update: the `update` column says which update ran)
  floor        shutil.copytree of the rendered tree: the cost of writing those bytes at all
  compact      the same fabric from its compact inventory (devices.yaml + cabling.csv): cli cold, cli warm,
               incremental after one cable line changed (the neighbourhood update: its `update` column), and
               whether its tree has the same files
pyavd (the `parity` extra) renders an equivalent 64-port RoCE leaf; fabricgen resolves that device and renders
it, both in this process, warm. `--pyavd-only` runs that comparison alone (on a generated 1,024-GPU fabric) and
prints it with the 1-minute load average before and after, writing no JSON file: pyavd's time moves with the
machine's load more than fabricgen's, so the ratio is worth measuring several times.

fabricgen's modules are byte-compiled first, as a wheel install leaves them (an editable install under
PYTHONDONTWRITEBYTECODE compiles them again in every process: 0.1 s per command).

`--work DIR` puts the fabrics, trees and caches in a new folder under DIR (default: the system's temporary folder),
and the output names DIR's file system. It decides much of the cold and warm columns: each render creates ~25,000
files and folders at 32,768 GPUs. ext4 without a journal (this project's build machine's root) checks every
inode it hands out against the inode table for one freed in the last minutes (`recently_deleted()` in Linux's
fs/ext4/ialloc.c, only when the file system has no journal), so a tree written soon after another was deleted
costs seconds more; a journaled ext4 (a CI runner's disk) or a tmpfs does not.
"""

from __future__ import annotations

import argparse
import compileall
import gc
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


def run_size(gpus: int, work: Path, jobs: int) -> dict[str, Any]:
    fabric = work / f"fabric-{gpus}"
    subprocess.run([sys.executable, str(BENCH / "make_fabric.py"), "--gpus", str(gpus), "-o", str(fabric)],
                   check=True, capture_output=True)
    env = {**os.environ, "FABRICGEN_CACHE_DIR": str(work / f"cache-cli-{gpus}")}
    compact_env = {**os.environ, "FABRICGEN_CACHE_DIR": str(work / f"cache-compact-{gpus}")}
    # The two cold renders first, one after the other, before the bench writes its other trees: the kernel's cost
    # of creating a tree's ~25,000 files grows with the trees written beside it before (ext4 on this machine:
    # 1.6-1.8 s of system time for the first six trees of a folder, 2.5-3.1 s from the seventh on, with or without
    # a `sync` before each), and a cold render is what a CI runner does first, on its own.
    cold = cli_render(fabric, work / f"cold-{gpus}", jobs, env)
    compact_cold = cli_render(fabric, work / f"compact-cold-{gpus}", jobs, compact_env, "compact")
    phases_env = {**os.environ, "FABRICGEN_CACHE_DIR": str(work / f"cache-phases-{gpus}")}
    done = subprocess.run([sys.executable, str(BENCH / "phases.py"), str(fabric), str(work / f"phases-{gpus}")],
                          check=True, capture_output=True, text=True, env=phases_env)
    result: dict[str, Any] = json.loads(done.stdout)
    result["gpus"] = gpus
    result["cli_cold"] = cold
    out = work / f"out-{gpus}"
    # Three warm runs, each into a new directory: this shared machine's speed moves between runs, so the
    # median and the best are both reported.
    warm_runs = []
    for run in range(WARM_RUNS):
        warm_runs.append(cli_render(fabric, out if run == WARM_RUNS - 1 else work / f"warm-{gpus}-{run}", jobs,
                                    env))
    result["cli_warm"] = sorted(warm_runs, key=lambda r: r["wall_s"])[WARM_RUNS // 2]
    result["cli_warm_best_s"] = min(r["wall_s"] for r in warm_runs)
    change_one_cable(fabric / "inventory" / "hosts.yaml")
    result["incremental"] = cli_render(fabric, out, jobs, env)
    floor_dir = work / f"floor-{gpus}"
    os.sync()
    start = time.perf_counter()
    shutil.copytree(out, floor_dir)
    result["io_floor_s"] = time.perf_counter() - start
    os.sync()  # fabricgen flushes its tree before the atomic swap: the floor of that is the copy and its flush
    result["io_floor_sync_s"] = time.perf_counter() - start
    result["compact"] = compact_form(fabric, work, gpus, jobs, compact_env, compact_cold)
    # The trees stay until the whole run ends (the temporary directory goes then): on ext4, creating files soon
    # after many were deleted is slower (fs/ext4/ialloc.c's find_inode_bit skips each inode freed in the last
    # minutes, recently_deleted(), and checks every one of them), so deleting here would slow the next size's
    # writes. Measured at 32,768 GPUs: copying the tree (floor) 0.95-2.5 s on a settled disk, 7.9-9.4 s within
    # a few minutes of deleting 120,000 files.
    return result


def compact_form(fabric: Path, work: Path, gpus: int, jobs: int, env: dict[str, str],
                 cold: dict[str, Any]) -> dict[str, Any]:
    """The same fabric from its compact inventory (devices.yaml + cabling.csv, written by make_fabric.py): its
    ``cold`` render (made by run_size, beside the SimpleInventory's), a warm `fabricgen render`, whether the cold
    render wrote the same files as the SimpleInventory's, and the incremental render after one cable's length
    changed in cabling.csv."""
    compact_cold, warm = work / f"compact-cold-{gpus}", work / f"compact-warm-{gpus}"
    result = {"cli_cold": cold, "cli_warm": cli_render(fabric, warm, jobs, env, "compact")}
    files = json.loads((work / f"cold-{gpus}" / "manifest.json").read_text())["files"]
    result["same_files"] = json.loads((compact_cold / "manifest.json").read_text())["files"] == files
    change_one_cable_in_table(fabric / "compact" / "cabling.csv")
    result["incremental"] = cli_render(fabric, warm, jobs, env, "compact")
    return result  # the trees stay until the run ends: see run_size


def change_one_cable_in_table(table: Path) -> None:
    """The compact form's one-cable commit: the first host cable's line, one metre longer."""
    lines = table.read_text().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if line.startswith("gpu"))
    fields = lines[index].rstrip("\n").split(",")
    fields[4] = str(int(fields[4]) + 1)
    lines[index] = ",".join(fields) + "\n"
    table.write_text("".join(lines))


WARM_RUNS = 3


def cli_render(fabric: Path, out: Path, jobs: int, env: dict[str, str], inventory: str = "inventory",
               ) -> dict[str, Any]:
    """`fabricgen render` as a user runs it: wall time, CPU time (user + system, its workers included), peak RSS
    of the command, files rewritten, and the machine's 1-minute load average when it started (on a shared
    machine the wall time moves with the load; the CPU time much less)."""
    command = [sys.executable, "-m", "fabricgen", "render", str(fabric / "intent.yaml"), "-i",
               str(fabric / inventory), "-o", str(out), "--jobs", str(jobs), "--format", "json"]
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        load = os.getloadavg()[0]
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # this command's own rusage (peak RSS), not all children's
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        if proc.returncode:
            raise RuntimeError(f"{' '.join(command)} failed: {stderr.read().decode()}")
        summary = json.loads(stdout.read())
    # wait4's usage covers the command and the workers it waited for (Linux adds reaped children's times).
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "load_1m": load,
            "peak_rss_mib": usage.ru_maxrss / 1024, "rewritten": summary["rewritten"], "files": summary["files"],
            "update": summary["update"]}


def change_one_cable(hosts: Path) -> None:
    """A typical GitOps commit: one host's first RDMA cable was re-run one metre longer."""
    text = hosts.read_text()
    match = re.search(r"(rdma_device: [^}]*cable_m: )(\d+)", text)
    assert match, "no host cable in the generated inventory"
    hosts.write_text(text[:match.start(2)] + str(int(match.group(2)) + 1) + text[match.end(2):])


def alternating_ms(funcs: dict[str, Any], rounds: int = 5, per_round: int = 10) -> dict[str, float]:
    """Median ms of each function over ``rounds`` blocks that alternate between the functions, so that a
    slower or faster spell of a shared machine weighs on both sides alike. Each block starts from a collected
    heap, so that neither side pays for the other's garbage."""
    samples: dict[str, list[float]] = {name: [] for name in funcs}
    for func in funcs.values():
        func()  # warm
    for _ in range(rounds):
        for name, func in funcs.items():
            gc.collect()
            for _ in range(per_round):
                start = time.perf_counter()
                func()
                samples[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def import_pyavd() -> tuple[Any, str]:
    """pyavd, or None and why. Not installed is a note (the `parity` extra is optional); installed but failing to
    import is said loudly on stderr, with the error, since the side-by-side is then silently missing."""
    try:
        import pyavd
    except ModuleNotFoundError as exc:
        if exc.name != "pyavd":
            return None, _loud_import_failure(exc)
        return None, "not installed: pip install -e '.[parity]' (pyavd==6.4.0) to render side by side"
    except Exception as exc:  # pyavd's own import failing (a missing or broken dependency)
        return None, _loud_import_failure(exc)
    return pyavd, ""


def _loud_import_failure(exc: BaseException) -> str:
    why = f"pyavd is installed but fails to import: {type(exc).__name__}: {exc}"
    print(f"bench/run.py: WARNING: {why}; the pyavd side-by-side is NOT measured", file=sys.stderr)
    return why


def pyavd_side_by_side(work: Path) -> dict[str, Any]:
    """One 64-port EOS RoCE leaf: fabricgen (resolve that device + render) vs pyavd (validate + render)."""
    from fabricgen.api import render_device
    from fabricgen.load.fabric import load
    from fabricgen.resolve import _resolve_device
    from fabricgen.resolve.context import ResolveContext
    from fabricgen.resolve.qos import resolve_qos
    from fabricgen.runtime.gctune import bulk_allocation

    fabric = work / "fabric-1024"
    if not fabric.exists():
        subprocess.run([sys.executable, str(BENCH / "make_fabric.py"), "--gpus", "1024", "-o", str(fabric)],
                       check=True, capture_output=True)
    loaded = load(fabric / "intent.yaml", fabric / "inventory")
    ctx = ResolveContext(loaded.intent, loaded.inventory)
    qos = resolve_qos(loaded.intent)
    leaf = loaded.inventory.devices["r1-leaf0"]  # rail 1 leaves run EOS: 32 host ports + 32 uplinks
    device = _resolve_device(ctx, leaf, qos)
    result: dict[str, Any] = {"device": leaf.name, "ports": len(device.ports),
                              "eos_lines": render_device(device)["eos.cfg"].count("\n")}

    def fabricgen() -> None:
        render_device(_resolve_device(ctx, leaf, qos))

    pyavd, why_not = import_pyavd()
    if pyavd is None:
        with bulk_allocation():
            result["fabricgen_ms"] = alternating_ms({"fabricgen": fabricgen})["fabricgen"]
        result["pyavd"] = why_not
        return result
    sys.path.insert(0, str(ROOT / "tests"))
    from avd_structured import structured_config  # the EOS parity test's mapping; needs no pytest

    config = structured_config(device)

    def avd() -> None:
        validated = pyavd.validate_structured_config(config)
        pyavd.get_device_config(validated.validated_data)

    with bulk_allocation():  # both under the GC setting `fabricgen render` runs with
        times = alternating_ms({"fabricgen": fabricgen, "pyavd": avd})
    result |= {"fabricgen_ms": times["fabricgen"], "pyavd_version": pyavd.__version__, "pyavd_ms": times["pyavd"],
               "ratio": times["pyavd"] / times["fabricgen"]}
    return result


def side_by_side_alone() -> dict[str, Any]:
    """The pyavd side-by-side on its own fabric, with the 1-minute load average as it began and as it ended."""
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-") as tmp:
        side = pyavd_side_by_side(Path(tmp))
    return side | {"load_1m_before": load_before, "load_1m_after": os.getloadavg()[0]}


def table(results: list[dict[str, Any]]) -> str:
    head = (f"{'GPUs':>7} {'devices':>7} {'links':>6} {'load':>6} {'resolve':>7} {'lint':>6} {'render':>6} "
            f"{'write':>6} {'phases':>6} {'floor':>6} {'+sync':>6} {'ms/dev':>6} {'no-io':>6} {'RSS':>5} | "
            f"{'cli cold':>8} {'cli warm':>8} {'best':>6} {'RSS':>5} {'incr':>6} {'rewrote':>7} {'update':>13} | "
            f"{'compact cold':>12} {'cpu':>5} {'load':>5} {'warm':>5} {'RSS':>5} {'incr':>5} {'update':>13} "
            f"{'same':>4}")
    rows = [head]
    for r in results:
        p = r["phases"]
        warm, incr = r["cli_warm"], r["incremental"]
        rows.append(f"{r['gpus']:>7} {r['devices']:>7} {r['links']:>6} {p['load']['wall_s']:>6.2f} "
                    f"{p['resolve']['wall_s']:>7.2f} {p['lint']['wall_s']:>6.2f} {p['render']['wall_s']:>6.2f} "
                    f"{p['write']['wall_s']:>6.2f} {r['total_wall_s']:>6.2f} {r['io_floor_s']:>6.2f} "
                    f"{r['io_floor_sync_s']:>6.2f} "
                    f"{1000 * r['total_wall_s'] / r['devices']:>6.2f} {1000 * compute_s(r) / r['devices']:>6.2f} "
                    f"{r['peak_rss_mib']:>5.0f} | "
                    f"{r['cli_cold']['wall_s']:>8.2f} {warm['wall_s']:>8.2f} {r['cli_warm_best_s']:>6.2f} "
                    f"{warm['peak_rss_mib']:>5.0f} {incr['wall_s']:>6.2f} {incr['rewritten']:>7} "
                    f"{incr['update']:>13} | {compact_columns(r['compact'])}")
    return "\n".join(rows) + ("\n(seconds wall; RSS in MiB; phases with a cold parse cache; +sync = the floor's "
                              "copy and its flush to disk; no-io = ms/device of load, resolve, lint and render; "
                              "cli warm = median of 3, best = fastest; incr = incremental render after one cable "
                              "change, rewrote = files it rewrote, manifest included, update = which update it was; "
                              "compact = the same fabric from devices.yaml + cabling.csv, cpu = its cold render's "
                              "user + system seconds (workers included), load = the 1-minute load average as it "
                              "began, update = which update its incr was, same = it wrote the same files as the "
                              "SimpleInventory)")


def compact_columns(compact: dict[str, Any]) -> str:
    cold, warm, incr = compact["cli_cold"], compact["cli_warm"], compact["incremental"]
    return (f"{cold['wall_s']:>12.2f} {cold['cpu_s']:>5.2f} {cold['load_1m']:>5.1f} {warm['wall_s']:>5.2f} "
            f"{cold['peak_rss_mib']:>5.0f} {incr['wall_s']:>5.2f} {incr['update']:>13} "
            f"{'yes' if compact['same_files'] else 'NO':>4}")


def compute_s(result: dict[str, Any]) -> float:
    """The phases fabricgen's own code decides; write is mostly the kernel creating files."""
    return float(sum(result["phases"][name]["wall_s"] for name in ("load", "resolve", "lint", "render")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpus", type=int, nargs="+", default=[32, 1024, 8192, 32768])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="render processes (default: cores)")
    parser.add_argument("--json", type=Path, default=BENCH / "results.json")
    parser.add_argument("--work", type=Path, default=None,
                        help="make the bench's folder under this one (default: the system's temporary folder)")
    parser.add_argument("--pyavd-only", action="store_true",
                        help="only the pyavd side-by-side, printed with the load average; no JSON file written")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "fabricgen", quiet=1)
    if args.pyavd_only:
        print(json.dumps({"pyavd_side_by_side": side_by_side_alone()}, indent=2))
        return
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-", dir=args.work) as tmp:
        work = Path(tmp)
        where = file_system(work)
        results = [run_size(gpus, work, args.jobs) for gpus in args.gpus]
        side = pyavd_side_by_side(work)
    print(table(results))
    print(f"trees written to {where}")
    print(json.dumps({"pyavd_side_by_side": side}, indent=2))
    args.json.write_text(json.dumps({"sizes": results, "pyavd_side_by_side": side, "file_system": where},
                                    indent=2) + "\n")


def file_system(path: Path) -> str:
    """The file system ``path`` is on, as /proc/self/mounts names it (the longest mount point holding it); for
    ext4, whether it has a journal: Linux lists a `data=` mode in /proc/fs/ext4/<device>/options only then."""
    resolved, found = str(path.resolve()), ("?", "?", "?")
    try:
        # Fields escape a space as \040 (and a few other characters alike): undone for the comparison.
        mounts = [[field.encode().decode("unicode_escape") for field in line.split()[:3]]
                  for line in Path("/proc/self/mounts").read_text().splitlines()]
    except OSError:
        return "an unknown file system"
    for device, point, kind in mounts:
        if (resolved == point or resolved.startswith(point.rstrip("/") + "/")) and len(point) >= len(found[1]):
            found = (device, point, kind)
    device, point, kind = found
    if kind == "ext4":
        try:  # named by the block device's kernel name (a /dev/mapper/ link resolves to dm-N)
            options = Path("/proc/fs/ext4", Path(device).resolve().name, "options").read_text()
            kind += " with a journal" if "data=" in options else " without a journal"
        except OSError:
            kind += " (journal or not: unknown)"
    return f"{kind} ({device} at {point})"


if __name__ == "__main__":
    main()
