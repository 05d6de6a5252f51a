#!/usr/bin/env python3
"""Deploy benchmark: `fabricgen diff` and `fabricgen push` against the SSH lab (tests/lab.py), as root.

    .venv/bin/python bench/push.py [--hosts 8 64 200] [--workers 8] [--push-up-to N] [--json FILE]

Per size: a fresh lab of N GPU hosts (real sshd per host, the NIC tool models of tests/), then
  diff        `fabricgen diff` of every host (the host script's --check on each, over SSH)
  push        `fabricgen push --yes --canary 0 --batch 100% --confirm-timeout 120`: one wave (commit with the
              on-host revert timer, health checks over fresh logins, confirm)
and for each of them:
  wall, per host    elapsed time, and that divided by the number of hosts
  controller CPU    CPU seconds of the fabricgen process itself (rusage of the child, all its threads)
  lab CPU           CPU seconds of every process of the lab hosts (sshd and its sessions, bash, the rendered
                    script, each NIC tool model call): the lab's processes are moved into a cgroup of their own
                    and its cpu.stat is read before and after
  tool calls        NIC tool model calls per host (from the models' own call logs)
  other CPU         CPU seconds the rest of the machine spent meanwhile (/proc/stat busy time minus the two
                    above): on a shared machine, the wall time is only comparable between runs where this is ~0
  controller-bound  controller CPU / cores: the wall time this controller could not beat even if every host had
                    CPUs of its own -- fabricgen's share of the wall, from measured CPU seconds
  host chain        (controller CPU + lab CPU) / N: one host's whole sequence of steps, run on nobody else's CPU
  fleet estimate    max(controller-bound, ceil(N / workers) x host chain): what a fleet of real hosts, each
                    running its own script on its own CPU, would see with this controller and worker count -- the
                    same measured CPU seconds, no longer queueing for this machine's cores (an estimate: network
                    round trips, sub-millisecond on the lab's bridge, are left out)
Everything, the controller and every lab host, shares this machine's cores: on it, wall ~ (controller CPU + lab
CPU) / cores, and the lab's share is the models' Python start-up, a process per tool call.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from lab import Lab, netns_names, pids_in_netns  # noqa: E402 - the lab lives with the tests

CGROUP_V2_MOUNTS = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


class LabCpu:
    """CPU time of a lab's processes: a cgroup (v2) holding every process of its hosts' namespaces. Processes
    they start later (sshd sessions, scripts, tool calls, timers) are born in it."""

    def __init__(self, lab: Lab) -> None:
        root = next((mount for mount in CGROUP_V2_MOUNTS if (mount / "cgroup.procs").is_file()
                     and (mount / "cgroup.subtree_control").is_file()), None)
        if root is None:
            raise SystemExit("bench/push.py needs a cgroup v2 hierarchy (/sys/fs/cgroup or /sys/fs/cgroup/unified)")
        self.group = root / f"fabricgen-bench-{lab.prefix}"
        self.group.mkdir(exist_ok=True)
        for pid in pids_in_netns(netns_names(lab.prefix)):
            try:
                (self.group / "cgroup.procs").write_text(f"{pid}\n")
            except ProcessLookupError:
                continue  # ended meanwhile

    def seconds(self) -> float:
        for line in (self.group / "cpu.stat").read_text().splitlines():
            key, value = line.split()
            if key == "usage_usec":
                return int(value) / 1e6
        raise SystemExit(f"{self.group}/cpu.stat has no usage_usec")

    def remove(self) -> None:
        """Once the lab is down: an empty cgroup is removed with rmdir."""
        for _ in range(50):
            try:
                self.group.rmdir()
                return
            except OSError:
                time.sleep(0.1)  # its last processes are still being reaped


@contextmanager
def lab_with_cpu(n: int) -> Iterator[tuple[Lab, LabCpu]]:
    lab = Lab.up(n, prefix=f"b{os.getpid() % 100000}")
    cpu = None
    try:
        cpu = LabCpu(lab)
        yield lab, cpu
    finally:
        lab.down()
        if cpu is not None:
            cpu.remove()


def tool_calls(lab: Lab) -> int:
    return sum(len(lab.tool_calls(host)) for host in lab.hosts)


def machine_busy_seconds() -> float:
    """CPU seconds every core of this machine has been busy since boot (/proc/stat: all but idle and iowait)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    busy = sum(fields[:8]) - fields[3] - fields[4]  # user nice system idle iowait irq softirq steal
    return busy / os.sysconf("SC_CLK_TCK")


def timed(argv: list[str], cwd: Path, lab: Lab, cpu: LabCpu) -> dict[str, Any]:
    """Run one fabricgen command; what it cost, split between the controller, the lab and everything else."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    lab_before, calls_before, machine_before = cpu.seconds(), tool_calls(lab), machine_busy_seconds()
    start = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    machine = machine_busy_seconds() - machine_before
    if done.returncode not in (0, 2):
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])
    controller = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lab_cpu = cpu.seconds() - lab_before
    return {"wall": wall, "exit": done.returncode, "controller_cpu": controller, "lab_cpu": lab_cpu,
            "other_cpu": max(0.0, machine - controller - lab_cpu), "tool_calls": tool_calls(lab) - calls_before}


def summary(name: str, run: dict[str, Any], n: int, workers: int) -> dict[str, Any]:
    cores = os.cpu_count() or 1
    controller_bound = run["controller_cpu"] / cores
    host_chain = (run["controller_cpu"] + run["lab_cpu"]) / n
    fleet = max(controller_bound, math.ceil(n / workers) * host_chain)
    return {f"{name}_s": round(run["wall"], 2), f"{name}_exit": run["exit"],
            f"{name}_per_host_s": round(run["wall"] / n, 3),
            f"{name}_controller_cpu_s": round(run["controller_cpu"], 2), f"{name}_lab_cpu_s": round(run["lab_cpu"], 2),
            f"{name}_other_cpu_s": round(run["other_cpu"], 2),
            f"{name}_tool_calls_per_host": round(run["tool_calls"] / n, 1),
            f"{name}_controller_bound_s": round(controller_bound, 2), f"{name}_host_chain_s": round(host_chain, 3),
            f"{name}_fleet_estimate_s": round(fleet, 2)}


def lab_selection(lab: Lab) -> list[str]:
    """Only the lab's own hosts, by name: the lab's inventory also names inventory/mixed's switches (at reserved
    addresses of the lab's block that nothing answers), and a benchmark never sends a packet to an address it
    did not create."""
    return ["--hosts", ",".join(sorted(lab.hosts))]


def measure(n: int, workers: int, push: bool, confirm_timeout: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="fabricgen-push-bench-") as scratch, lab_with_cpu(n) as (lab, cpu):
        work = Path(scratch)
        intent, inventory = lab.write_inputs(work / "inputs")
        base = [sys.executable, "-m", "fabricgen"]
        selection = [str(intent), "-i", str(inventory), *lab_selection(lab), "--workers", str(workers),
                     "--format", "json"]
        result: dict[str, Any] = {"hosts": n, "workers": workers, "cores": os.cpu_count()}
        result.update(summary("diff", timed([*base, "diff", *selection], work, lab, cpu), n, workers))
        if push:
            pushed = timed([*base, "push", *selection, "--yes", "--canary", "0", "--batch", "100%",
                            "--confirm-timeout", str(confirm_timeout), "--journal", str(work / "runs")],
                           work, lab, cpu)
            result.update(summary("push", pushed, n, workers))
            host = next(iter(lab.hosts))
            start = time.monotonic()
            lab.run(host, f"bash /usr/local/sbin/{lab.hosts[host].kind.script} --check")
            result["script_check_s"] = round(time.monotonic() - start, 2)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[8, 64, 200])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--confirm-timeout", type=int, default=120, metavar="S",
                        help="push's --confirm-timeout: each host's own commit, health check and confirm fit in it")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--push-up-to", type=int, default=10**6, metavar="N",
                        help="measure push only on labs of at most N hosts (diff on every size)")
    args = parser.parse_args()
    results = []
    for n in args.hosts:
        result = measure(n, args.workers, n <= args.push_up_to, args.confirm_timeout)
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
