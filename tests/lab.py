"""The GPU-host SSH lab: real OpenSSH servers, one per fake GPU host, each in its own network namespace.

fabricgen's deploy tests (and developers: ``python tests/lab.py up 8`` / ``status`` / ``down``) push to these
hosts over real SSH, so nothing of SSH, the shell or the rendered scripts is mocked. A lab host is:

* a network namespace ``<prefix>-h<i>`` whose ``eth0`` sits on the lab bridge ``<prefix>br`` with an address
  from 198.18.0.0/15 (RFC 2544 benchmarking space: it exists only on this bridge, nothing leaves the machine);
  each lab takes a free /22 of it, so labs with different prefixes run side by side;
* two NIC ports named as ConnectX/Broadcom NICs are (``ens1f0np0``, ``ens2f0np0``): veths at MTU 1500 whose far
  ends (``<prefix>n<i>p<k>`` in the root namespace) stand for the leaf ports, so "the link is up" is real;
* its own UTS namespace (hostname ``<prefix>-h<i>``) and mount namespace: copy-on-write overlays on /etc,
  /usr/local, /var/lib and /root (upper directories in the lab's state directory, a tmpfs at
  /var/tmp/fabricgen-lab/<prefix>, readable from outside), private tmpfs /tmp and /run. fabricgen keeps its
  state in /var/lib/fabricgen, so that is per host too;
* an "anchor" process (``sleep infinity``) that holds the namespaces, so killing sshd (a fault the tests
  inject) does not take the host's /tmp, /run or a pending revert timer with it;
* its own sshd (key auth only, one lab client key; its own host key, recorded in the lab's ``known_hosts``):
  every session gets the environment the rendered scripts need through sshd's ``SetEnv``;
* the NIC tool behaviour models of tests/nic_stubs (ConnectX) or tests/dcb_stubs (generic Linux dcb) in its
  /usr/local/bin, keeping the NIC state under /run/fabricgen-lab (a per-host directory of the lab's state,
  bind-mounted, so tests read it from outside). The real kernel answers where it can:
  ``ip`` is the real iproute2 (veths take any MTU), and the fake sysfs's ``class/net/<nic>/mtu`` is a bind
  mount of the host's own /sys file, so the script reads back the veth's real MTU.

No systemd runs in the lab (fabricgen then uses a detached ``setsid`` timer for commit-confirm).

A lab host may instead be a **switch target** (``Lab.up(1, kinds=["sonic"])``): the same namespace, sshd and
overlays, but in place of the NIC models the program ``tests/targets/<platform>.py``, which implements the
vendor's documented transactional behaviour on a config kept in the host (no vendor image runs here). Such a
module provides ``TOOLS`` (command names installed on the host's PATH, each running its ``main()``, which
dispatches on ``argv[0]``), ``STATE_VAR`` / ``LOG_VAR`` (the environment names under which it finds its state
directory and call log), ``lab_init(state_dir)`` (the device's starting config), and optionally ``DAEMON`` (one
of its tools, started in the background when the host starts, e.g. an HTTPS API server). Targets run with the
project's own interpreter and import the checkout (``fabricgen`` for YANG validation, shared target code), so the
checkout and the interpreter's prefix are bind-mounted read-only into such hosts.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"  # on sys.path for the targets package (tests/targets/__init__.py says why)
STATE_ROOT = Path("/var/tmp/fabricgen-lab")  # not /tmp or /run: a host mounts its own over those
LAB_NET = ipaddress.IPv4Network("198.18.0.0/15")
BLOCK_PREFIX = 22  # one lab's share of LAB_NET: 128 labs of up to MAX_HOSTS hosts
FIRST_HOST_OFFSET = 10  # host i gets block + FIRST_HOST_OFFSET + i; the bridge gets block + 1
MAX_HOSTS = 2 ** (32 - BLOCK_PREFIX) - FIRST_HOST_OFFSET - 2
IFNAMSIZ = 15  # a Linux interface name is at most 15 characters
PREFIX_RE = re.compile(r"[a-z][a-z0-9]{1,8}")
CLI_PREFIX = "fgdev"  # `python tests/lab.py` without --prefix: one developer lab at a time
SSHD = Path("/usr/sbin/sshd")
NICS = ("ens1f0np0", "ens2f0np0")
# Inside a host: where the NIC models keep their state, and the fake /sys and configfs trees.
HOST_LAB_DIR = "/run/fabricgen-lab"
# The user's fabricgen cache folder, which tests/conftest.py sets before it points FABRICGEN_CACHE_DIR at a throw-away
# one: a switch target reads SONiC's GCU and models fetched there (tests/targets/sonic_gcu.py), so its sessions get
# it and a private /tmp does not hide it.
LAB_CACHE_VAR = "FABRICGEN_LAB_CACHE_DIR"
OVERLAYS = {"etc": "/etc", "usr_local": "/usr/local", "var_lib": "/var/lib", "root": "/root"}
DISK_FILLER = ".lab-disk-filler"
WAIT_S = 10.0
STATE_SIZE = "2g"  # a bound, not an allocation: the lab's keys, configs and every host's overlay layers


@dataclass(frozen=True)
class HostKind:
    """One kind of GPU host NIC: the models it gets and the fabricgen platform that renders its script."""

    platform: str  # fabricgen platform name
    group: str  # the inventory/mixed group of such hosts
    script: str  # the rendered script's file name
    stubs: str  # tests/<stubs>/
    module: str  # the models' multi-call program
    setup_tool: str  # its set-up command
    state_var: str  # where the models keep the NIC state
    log_var: str  # where they log each call
    rdma_devices: tuple[str, str]
    tools: tuple[str, ...]  # what goes on the host's PATH (never `ip`: the real one changes the veth)
    target: bool = False  # a switch target (tests/targets/<module>.py), not NIC models
    daemon: str = ""  # a tool started in the background when the host starts (switch targets)


CONNECTX = HostKind("connectx", "cx_nodes", "fabricgen-nic.sh", "nic_stubs", "nic_tool_models", "nic-model",
                    "NIC_STUB_STATE", "NIC_STUB_LOG", ("mlx5_0", "mlx5_1"),
                    ("mlnx_qos", "dcb", "cma_roce_tos", "cma_roce_mode", "nic-model"))
LINUX_DCB = HostKind("linux-dcb", "dcb_nodes", "fabricgen-dcb.sh", "dcb_stubs", "dcb_tool_models", "dcb-model",
                     "DCB_STUB_STATE", "DCB_STUB_LOG", ("bnxt_re0", "bnxt_re1"), ("dcb", "dcb-model"))
KINDS = {kind.platform: kind for kind in (CONNECTX, LINUX_DCB)}
# Switch targets: fabricgen platform -> inventory/mixed group of its leaf.
TARGET_GROUPS = {"sonic": "sonic_leaf", "eos": "eos_leaf", "nvue": "nvue_leaf", "nxos": "nxos_leaf"}


def kind_for(platform: str) -> HostKind:
    """A GPU-host kind, or the switch target of ``platform`` described by its module (see the docstring)."""
    if platform in KINDS:
        return KINDS[platform]
    if platform not in TARGET_GROUPS:
        raise LabError(f"no lab kind for platform {platform!r}: {sorted([*KINDS, *TARGET_GROUPS])}")
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    module = importlib.import_module(f"targets.{platform}")
    return HostKind(platform, TARGET_GROUPS[platform], "", "targets", platform, "", module.STATE_VAR,
                    module.LOG_VAR, ("", ""), tuple(module.TOOLS), target=True, daemon=getattr(module, "DAEMON", ""))


def kind_of(index: int) -> HostKind:
    """Hosts 1, 2 ConnectX, 3, 4 linux-dcb, and so on: lab hosts 1-4 match inventory/mixed's node1-4."""
    return CONNECTX if (index - 1) // 2 % 2 == 0 else LINUX_DCB


@dataclass(frozen=True)
class LabHost:
    name: str  # also its netns and its hostname
    index: int
    platform: str
    address: str

    @property
    def kind(self) -> HostKind:
        return kind_for(self.platform)

    def session_env(self) -> dict[str, str]:
        """What every SSH session (and :meth:`Lab.run`) of this host gets besides sshd's own."""
        env = {"FABRICGEN_SYSFS": f"{HOST_LAB_DIR}/sys", "LC_ALL": "C",
               self.kind.state_var: f"{HOST_LAB_DIR}/nic-state", self.kind.log_var: f"{HOST_LAB_DIR}/tool-calls.jsonl"}
        if self.kind is LINUX_DCB:
            env["FABRICGEN_CONFIGFS"] = f"{HOST_LAB_DIR}/configfs"
        for var in (LAB_CACHE_VAR, "FABRICGEN_VENDOR_DATA"):  # where the SONiC target reads GCU and models
            if self.kind.target and os.environ.get(var):
                env[var] = os.environ[var]
        return env


def plan_hosts(prefix: str, block: ipaddress.IPv4Network, n: int,
               kinds: Sequence[str] | None = None) -> dict[str, LabHost]:
    """The hosts of a lab: names, kinds (``kinds[i - 1]``, else GPU hosts by :func:`kind_of`) and addresses
    (nothing is built)."""
    if kinds is not None and len(kinds) != n:
        raise LabError(f"{n} hosts need {n} kinds, got {len(kinds)}")
    first = block.network_address + FIRST_HOST_OFFSET
    names = [f"{prefix}-h{index}" for index in range(1, n + 1)]
    return {name: LabHost(name, index, kind_for(kinds[index - 1]).platform if kinds else kind_of(index).platform,
                          str(first + index))
            for index, name in enumerate(names, start=1)}


class LabError(RuntimeError):
    """The lab could not be built or driven; the message says which host and what the tool printed."""


def sh(*argv: str, stdin: str | None = None, timeout: float = 60) -> str:
    """Run a set-up command in the root namespaces; its stdout, or LabError with its stderr."""
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode:
        raise LabError(f"{' '.join(argv[:4])}: exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def wait_until(condition: Callable[[], object], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise LabError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)


# ---------------------------------------------------------------------------------------------------------
# Processes and namespaces, found from the root namespace by name and inode (they outlive a killed run)


def netns_names(prefix: str) -> list[str]:
    pattern = re.compile(rf"{re.escape(prefix)}-h\d+")
    listed = Path("/run/netns")
    return sorted(p.name for p in listed.iterdir() if pattern.fullmatch(p.name)) if listed.is_dir() else []


def pids_in_netns(names: Sequence[str]) -> list[int]:
    """Every process whose network namespace is one of ``names`` (what `ip netns pids` does, in one /proc scan)."""
    inodes = set()
    for name in names:
        try:
            inodes.add(Path("/run/netns", name).stat().st_ino)
        except OSError:
            continue
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _netns_inode(entry) in inodes:
            pids.append(int(entry.name))
    return sorted(pids)


def _netns_inode(proc: Path) -> int | None:
    try:
        link = str((proc / "ns" / "net").readlink())  # "net:[4026532281]"
    except OSError:
        return None
    return int(link[5:-1])


def alive(pid: int) -> bool:
    """Still running: a zombie (exited, not yet reaped by its parent) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def stop_processes(pids: Sequence[int]) -> None:
    """SIGTERM, up to 5 s to exit, then SIGKILL: by PID only, never by name."""
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        for pid in pids:
            with suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not any(alive(pid) for pid in pids):
            return
    raise LabError(f"processes {[pid for pid in pids if alive(pid)]} survived SIGKILL")


def stop_everything_in(names: Sequence[str]) -> None:
    """Stop every process of these namespaces, looking again until none is left: one may have forked between
    the scan and the signal (an sshd accepting a login, a timer starting its revert)."""
    for _ in range(5):
        pids = [pid for pid in pids_in_netns(names) if alive(pid)]
        if not pids:
            return
        stop_processes(pids)
    raise LabError(f"processes keep appearing in {', '.join(names)}")


def root_links(prefix: str) -> list[str]:
    """The lab's interfaces left in the root namespace: the bridge, management veths, leaf-side NIC veths."""
    pattern = re.compile(rf"{re.escape(prefix)}(br|m\d+|n\d+p\d+)")
    return sorted(link["ifname"] for link in json.loads(sh("ip", "-j", "link", "show"))
                  if pattern.fullmatch(link["ifname"]))


def teardown(prefix: str) -> None:
    """Remove every trace of the lab ``prefix``, whether it is running, half built or left by a killed run:
    processes first (namespaces are deleted only once nothing runs in them), then namespaces, links, files."""
    names = netns_names(prefix)
    stop_everything_in(names)
    if names:
        sh("ip", "-batch", "-", stdin="".join(f"netns del {name}\n" for name in names))
    # The kernel removes a deleted namespace's veths (and so their root ends) in one batch, much faster than
    # deleting them one by one. A namespace that something still holds (a killed session's TCP socket that
    # cannot send its FIN) keeps its veths: after a while, delete their root ends, which takes both ends.
    bridge = f"{prefix}br"
    deadline = time.monotonic() + 2.0
    while set(root_links(prefix)) - {bridge} and time.monotonic() < deadline:
        time.sleep(0.02)
    delete = "".join(f"link del {link}\n" for link in root_links(prefix))
    if delete:
        subprocess.run(["ip", "-force", "-batch", "-"], input=delete, text=True, capture_output=True, check=False)
    wait_until(lambda: not root_links(prefix), f"the links of lab {prefix} to disappear")
    state = STATE_ROOT / prefix
    # Not busy once the hosts' processes (and so their mount namespaces) are gone; lazily otherwise.
    if state.is_mount() and subprocess.run(["umount", str(state)], capture_output=True, check=False).returncode:
        sh("umount", "--lazy", str(state))
    shutil.rmtree(state, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------------
# Building one host


def allocate_block() -> ipaddress.IPv4Network:
    """The first /22 of LAB_NET that no interface of the root namespace uses (another lab, or anything else)."""
    used = [ipaddress.IPv4Interface(f"{addr['local']}/{addr['prefixlen']}").network
            for link in json.loads(sh("ip", "-j", "-4", "addr", "show")) for addr in link.get("addr_info", [])]
    for block in LAB_NET.subnets(new_prefix=BLOCK_PREFIX):
        if not any(block.overlaps(net) for net in used):
            return block
    raise LabError(f"every /{BLOCK_PREFIX} of {LAB_NET} is in use")


def keygen(keys: dict[Path, str]) -> dict[Path, str]:
    """New ed25519 key pairs (private key path: comment), made in parallel by one shell (a process started from
    Python costs 10-20 ms on a busy machine, from sh far less); each one's public key line."""
    loop = 'while [ $# -gt 0 ]; do ssh-keygen -q -t ed25519 -N "" -C "$2" -f "$1" & shift 2; done; wait'
    pairs = [str(item) for path, comment in keys.items() for item in (path, comment)]
    sh("sh", "-c", loop, "keygen", *pairs, timeout=300)
    return {path: path.with_name(path.name + ".pub").read_text().strip() for path in keys}


SSHD_CONFIG = """\
# fabricgen lab host: key authentication only, for root, with the lab client key.
HostKey /etc/ssh/ssh_host_ed25519_key
AuthorizedKeysFile /etc/ssh/lab_authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
PrintMotd no
PidFile /run/sshd.pid
MaxStartups 200:30:400
Subsystem sftp /usr/lib/openssh/sftp-server
SetEnv {env}
"""


def host_key_file(host_dir: Path) -> Path:
    return host_dir / "etc.upper" / "ssh" / "ssh_host_ed25519_key"


def write_host_files(host: LabHost, host_dir: Path, client_public_key: str) -> None:
    """The host's files before its overlays are mounted, written into the upper directories (its host key is
    made apart, all hosts' at once)."""
    for name in OVERLAYS:
        (host_dir / f"{name}.upper").mkdir(parents=True)
        (host_dir / f"{name}.work").mkdir()
    etc = host_dir / "etc.upper"
    (etc / "ssh").mkdir()
    env = " ".join(f"{key}={value}" for key, value in sorted(host.session_env().items()))
    (etc / "ssh" / "sshd_config").write_text(SSHD_CONFIG.format(env=env))
    (etc / "ssh" / "lab_authorized_keys").write_text(client_public_key + "\n")
    (etc / "ssh" / "lab_authorized_keys").chmod(0o600)
    (etc / "hostname").write_text(host.name + "\n")
    if host.kind.target:
        install_target(host.kind, host_dir / "usr_local.upper")
    else:
        install_models(host.kind, host_dir / "usr_local.upper")
    write_nic_tree(host.kind, host_dir / "nic")
    (host_dir / "fstab").write_text(host_fstab(host_dir, host.kind.target))
    (host_dir / "ip.batch").write_text(host_links(host))


def install_models(kind: HostKind, usr_local: Path) -> None:
    """The NIC tool models as /usr/local/bin/<tool>, ahead of /usr/bin on sshd's PATH."""
    lib = usr_local / "lib" / "fabricgen-lab"
    lib.mkdir(parents=True)
    launcher = lib / kind.module
    # The models' code is copied in and run by the base interpreter: a host's own /tmp and /run hide a checkout
    # (and its venv) that lives there, as a CI runner's often does.
    shutil.copyfile(ROOT / "tests" / kind.stubs / f"{kind.module}.py", lib / f"{kind.module}.py")
    # Compiled at set-up rather than by the host's first call (a --check makes dozens, each a process start);
    # an unchecked-hash .pyc stays valid whatever the copy's mtime.
    import py_compile

    py_compile.compile(str(lib / f"{kind.module}.py"), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    interpreter = Path(sys.executable).resolve()
    # -S: no site (no .pth files to read), -E: no PYTHON* variables a session might carry (one shebang argument).
    launcher.write_text(f"#!{interpreter} -SE\nimport sys\nsys.path.insert(0, '/usr/local/lib/fabricgen-lab')\n"
                        f"import {kind.module}\nsys.exit({kind.module}.main())\n")
    launcher.chmod(0o755)
    (usr_local / "bin").mkdir()
    for tool in kind.tools:
        (usr_local / "bin" / tool).symlink_to(f"../lib/fabricgen-lab/{kind.module}")
    if kind is LINUX_DCB:
        # The model of configfs mkdir answers only for rdma_cm groups; any other mkdir is the real one.
        (lib / "mkdir").symlink_to(kind.module)
        wrapper = usr_local / "bin" / "mkdir"
        wrapper.write_text('#!/bin/sh\ncase "$#:$1" in "1:$FABRICGEN_CONFIGFS"/rdma_cm/*)\n'
                           '  exec /usr/local/lib/fabricgen-lab/mkdir "$@";;\nesac\nexec /bin/mkdir "$@"\n')
        wrapper.chmod(0o755)
        # configfs rmdir of an rdma_cm group drops the whole group, its ports/ included (the kernel keeps the
        # device's RoCE defaults: they live in the model's state); any other rmdir is the real one.
        remover = usr_local / "bin" / "rmdir"
        remover.write_text('#!/bin/sh\ncase "$#:$1" in "1:$FABRICGEN_CONFIGFS"/rdma_cm/*)\n'
                           '  [ -d "$1" ] || { echo "rmdir: $1: No such file or directory" >&2; exit 1; }\n'
                           '  exec /bin/rm -r -- "$1";;\nesac\nexec /bin/rmdir "$@"\n')
        remover.chmod(0o755)


def install_target(kind: HostKind, usr_local: Path) -> None:
    """A switch target's tools as /usr/local/bin/<tool>: the project's interpreter running the target module
    from the checkout (bind-mounted into the host, see host_fstab)."""
    (usr_local / "bin").mkdir()
    launcher = usr_local / "bin" / f"lab-target-{kind.module}"
    launcher.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(TESTS)!r})\n"
                        f"from targets.{kind.module} import main\nsys.exit(main())\n")
    launcher.chmod(0o755)
    for tool in kind.tools:
        (usr_local / "bin" / tool).symlink_to(launcher.name)


# Runs as the anchor, inside the host's fresh network, UTS and mount namespaces; ends as `sleep infinity`. One
# `mount -a` and one `ip -batch` instead of a process per mount and per link: a 200-host lab is 4x faster up.
HOST_SETUP = r"""
set -eu
hostname "$LAB_HOSTNAME"
mount -a -T "$LAB_HOST_DIR/fstab"
ip -batch "$LAB_HOST_DIR/ip.batch"
/usr/sbin/sshd -E /run/sshd.log || { tail -n 3 /run/sshd.log >&2; exit 1; }
if [ -n "${LAB_DAEMON:-}" ]; then
  env PATH=/usr/local/bin:/usr/bin:/bin $LAB_DAEMON_ENV setsid "/usr/local/bin/$LAB_DAEMON" \
    </dev/null >/run/lab-daemon.log 2>&1 &
fi
echo ready
exec sleep infinity
"""


def host_fstab(host_dir: Path, target: bool = False) -> str:
    """The host's mounts: overlays, private /tmp and /run, its NIC tree (from the lab's state directory, so the
    models' state is readable from outside) and, in that tree, each port's MTU as the kernel's own sysfs file.
    A switch target also sees the checkout, the interpreter and the shared references read-only where the
    private /tmp and /run would hide them (a CI runner's checkout often lives under /tmp): each is first bound
    to a staging point in the lab's state directory, while the original is still visible in the new mount
    namespace, and bound back to its own path once /tmp and /run are the host's."""
    hidden = hidden_by_private_mounts() if target else []
    staging = [host_dir / "hidden" / str(index) for index in range(len(hidden))]
    lines = [f"{real} {stage} none bind,ro,X-mount.mkdir 0 0"
             for (_, real), stage in zip(hidden, staging, strict=True)]
    lines += [f"lab-{name} {target} overlay lowerdir={target},upperdir={host_dir}/{name}.upper,"
              f"workdir={host_dir}/{name}.work 0 0" for name, target in OVERLAYS.items()]
    lines += ["lab-tmp /tmp tmpfs mode=1777,size=256m 0 0", "lab-run /run tmpfs mode=755,size=64m 0 0",
              "lab-sshd /run/sshd tmpfs mode=755,size=1m,X-mount.mkdir 0 0",  # sshd's privilege separation
              f"{host_dir}/nic {HOST_LAB_DIR} none bind,X-mount.mkdir 0 0"]
    lines += [f"/sys/class/net/{nic}/mtu {HOST_LAB_DIR}/sys/class/net/{nic}/mtu none bind 0 0" for nic in NICS]
    lines += [f"{stage} {path} none bind,ro,X-mount.mkdir 0 0"
              for (path, _), stage in zip(hidden, staging, strict=True)]
    return "".join(line + "\n" for line in lines)


def hidden_by_private_mounts() -> list[tuple[Path, Path]]:
    """(path, what it really is) of the checkout, the interpreter's trees and the vendor-data folder that a host's
    private /tmp and /run would hide (the overlays show the rest of the machine as it is), outermost only."""
    private = (Path("/tmp"), Path("/run"))
    vendor_data = importlib.import_module("targets.sonic_gcu").SHARED
    trees = {ROOT, Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent, vendor_data}
    if os.environ.get(LAB_CACHE_VAR):  # where `fabricgen validate --fetch-gcu` put SONiC's GCU, without vendor data
        trees.add(Path(os.environ[LAB_CACHE_VAR]))
    hidden = {tree for tree in trees if tree.exists() and any(mount in tree.parents for mount in private)}
    outermost = sorted(tree for tree in hidden if not any(other in tree.parents for other in hidden))
    return [(tree, tree.resolve()) for tree in outermost]


def host_links(host: LabHost) -> str:
    lines = ["link set lo up", f"addr add {host.address}/{BLOCK_PREFIX} dev eth0", "link set eth0 up"]
    lines += [f"link set {nic} mtu 1500 up" for nic in NICS]
    return "".join(line + "\n" for line in lines)


def write_nic_tree(kind: HostKind, nic_dir: Path) -> None:
    """The fake /sys and configfs the scripts read (FABRICGEN_SYSFS, FABRICGEN_CONFIGFS) and the models' state
    directory. The ``mtu`` files are mount points for the real ones."""
    (nic_dir / "nic-state").mkdir(parents=True)
    for nic in NICS:
        net = nic_dir / "sys" / "class" / "net" / nic
        net.mkdir(parents=True)
        (net / "mtu").touch()
        if kind is CONNECTX:  # MLNX_OFED's DCQCN files, all 0 (DCQCN off, CNP DSCP and priority 0)
            for role in ("roce_np", "roce_rp"):
                (net / "ecn" / role / "enable").mkdir(parents=True)
                for prio in range(8):
                    (net / "ecn" / role / "enable" / str(prio)).write_text("0\n")
            (net / "ecn" / "roce_np" / "cnp_dscp").write_text("0\n")
            (net / "ecn" / "roce_np" / "cnp_802p_prio").write_text("0\n")
    if kind is LINUX_DCB:
        (nic_dir / "configfs" / "rdma_cm").mkdir(parents=True)


# The NICs' fresh state, set by the models' own set-up commands (as tests/test_connectx_script.py and
# tests/test_linux_dcb.py do) for many hosts in one process: every knob away from the intent, so a first
# --apply has something to do.
MODEL_INIT = r"""
import json, os, sys
sys.path.insert(0, os.environ["LAB_STUBS"])
models = __import__(os.environ["LAB_MODULE"])
tool, state_var = os.environ["LAB_SETUP_TOOL"], os.environ["LAB_STATE_VAR"]
nics, rdma = os.environ["LAB_NICS"].split(), os.environ["LAB_RDMA"].split()
# Upstream rdma_cm already defaults to RoCE v2: start at v1 so the mode setting has something to do.
calls = [["netdev", nic] for nic in nics] + [["rdma", dev, "--mode", "IB/RoCE v1"] for dev in rdma]
for state in json.loads(os.environ["LAB_STATES"]):
    os.environ[state_var] = state
    for argv in calls:
        if models.run(tool, argv):
            sys.exit(f"{tool} {' '.join(argv)} failed for {state}")
"""


def init_models(kind: HostKind, state_dirs: Sequence[Path]) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LAB_STUBS": str(ROOT / "tests" / kind.stubs),
           "LAB_MODULE": kind.module, "LAB_SETUP_TOOL": kind.setup_tool, "LAB_STATE_VAR": kind.state_var,
           "LAB_NICS": " ".join(NICS), "LAB_RDMA": " ".join(kind.rdma_devices),
           "LAB_STATES": json.dumps([str(path) for path in state_dirs])}
    done = subprocess.run([sys.executable, "-S", "-c", MODEL_INIT], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    if done.returncode:
        raise LabError(f"{kind.setup_tool}: {done.stderr.strip()}")


def init_targets(kind: HostKind, state_dirs: Sequence[Path]) -> None:
    """A switch target's starting config in each state directory (its module's ``lab_init``)."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    module = importlib.import_module(f"targets.{kind.module}")
    for state_dir in state_dirs:
        module.lab_init(state_dir)


def start_anchor(host: LabHost, host_dir: Path) -> subprocess.Popen[str]:
    """`ip netns exec` and `unshare` exec in place, so the Popen's PID is the anchor's once set-up is done."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LAB_HOSTNAME": host.name, "LAB_HOST_DIR": str(host_dir)}
    if host.kind.daemon:
        env["LAB_DAEMON"] = host.kind.daemon
        env["LAB_DAEMON_ENV"] = " ".join(f"{key}={value}" for key, value in sorted(host.session_env().items()))
    return subprocess.Popen(
        ["ip", "netns", "exec", host.name, "unshare", "--uts", "--mount", "--propagation", "private",
         "sh", "-c", HOST_SETUP], env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def await_anchor(host: LabHost, anchor: subprocess.Popen[str]) -> None:
    assert anchor.stdout is not None and anchor.stderr is not None
    if anchor.stdout.readline().strip() != "ready":
        anchor.wait(WAIT_S)
        raise LabError(f"{host.name}: set-up failed: {anchor.stderr.read().strip()}")
    anchor.stdout.close()  # nothing else is written; stderr stays open for `sleep` (it prints nothing)


def link_batch(prefix: str, bridge: str, hosts: Sequence[LabHost]) -> str:
    """`ip -batch` lines that make every namespace and cable in one process (one `ip` per host is 10x slower)."""
    lines = []
    for host in hosts:
        mgmt = f"{prefix}m{host.index}"
        lines += [f"netns add {host.name}", f"link add {mgmt} type veth peer name eth0 netns {host.name}",
                  f"link set {mgmt} master {bridge} up"]
        for port, nic in enumerate(NICS, start=1):
            leaf_side = f"{prefix}n{host.index}p{port}"
            lines += [f"link add {leaf_side} type veth peer name {nic} netns {host.name}", f"link set {leaf_side} up"]
    return "".join(line + "\n" for line in lines)


# ---------------------------------------------------------------------------------------------------------
# The lab


@dataclass
class Lab:
    """N GPU hosts; see the module docstring. ``with Lab.up(8) as lab: ...`` tears it down however it ends."""

    prefix: str
    block: ipaddress.IPv4Network
    hosts: dict[str, LabHost]
    anchors: dict[str, int]
    # Popen handles of the anchors this process started, so they are reaped (no zombies, no ResourceWarning).
    children: dict[str, subprocess.Popen[str]]
    # The process whose lab this is: once it is gone without bringing the lab down, remove_stale_labs() may.
    # None for a lab that stays until `down` (python tests/lab.py up).
    owner: int | None = None

    # --- where things are -----------------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        return STATE_ROOT / self.prefix

    @property
    def key_file(self) -> Path:
        """The lab client's private key (authorised for root on every host)."""
        return self.directory / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        """Every host's key under every address it has had."""
        return self.directory / "known_hosts"

    @property
    def bridge(self) -> str:
        return f"{self.prefix}br"

    def host_dir(self, host: str) -> Path:
        return self.directory / "hosts" / host

    def state_dir(self, host: str) -> Path:
        """The host's model or target state (its /run/fabricgen-lab/nic-state), readable from outside."""
        return self.host_dir(host) / "nic" / "nic-state"

    def upper(self, host: str, mount: str) -> Path:
        """The copy-on-write layer of ``mount`` (a key of OVERLAYS) on ``host``: what the host changed there."""
        return self.host_dir(host) / f"{mount}.upper"

    def inside(self, host: str, path: str) -> Path:
        """``path`` as ``host`` sees it (its mounts included), readable from this process: /proc/<anchor>/root."""
        return Path(f"/proc/{self.anchors[host]}/root") / path.lstrip("/")

    def address(self, host: str) -> str:
        return self.hosts[host].address

    # --- bring-up and teardown -----------------------------------------------------------------------

    @classmethod
    def up(cls, n: int, prefix: str | None = None, *, owned: bool = True,
           kinds: Sequence[str] | None = None) -> Lab:
        """Build ``n`` hosts under ``prefix`` (default ``fg<pid>``): a leftover lab of that prefix is removed
        first, and so is every lab whose owning process died without bringing it down. ``owned``: the lab
        belongs to this process (a test run); if it dies, the next :meth:`up` removes the lab. ``kinds``: the
        platform of each host (GPU-host kinds or switch targets), default alternating ConnectX / linux-dcb pairs.
        On any failure, whatever was built is torn down before the error propagates."""
        prefix = prefix or f"fg{os.getpid()}"
        check_names(prefix, n)
        STATE_ROOT.mkdir(parents=True, exist_ok=True)
        with lab_lock():
            remove_stale_labs()
            teardown(prefix)
            block = allocate_block()
            lab = cls(prefix, block, {}, {}, {}, os.getpid() if owned else None)
            try:
                lab._build(n, kinds)
            except BaseException:
                lab.down()
                raise
        return lab

    @classmethod
    def attach(cls, prefix: str) -> Lab:
        """The running lab ``prefix`` (started by another process, e.g. ``python tests/lab.py up``)."""
        recorded = json.loads((STATE_ROOT / prefix / "lab.json").read_text())
        hosts = {h["name"]: LabHost(**h) for h in recorded["hosts"]}
        return cls(prefix, ipaddress.IPv4Network(recorded["block"]), hosts, recorded["anchors"], {},
                   recorded.get("owner"))

    def _build(self, n: int, kinds: Sequence[str] | None = None) -> None:
        # A tmpfs of its own: the thousands of small files and directories of the hosts' overlay layers cost
        # seconds to make and remove on a journalled disk, and unmounting removes them all at once.
        self.directory.mkdir(parents=True)
        sh("mount", "-t", "tmpfs", "-o", f"mode=700,size={STATE_SIZE}", f"fabricgen-lab-{self.prefix}",
           str(self.directory))
        self._save()  # the owner, from the start: a run killed while building leaves a stale lab, not a mystery
        client_key = keygen({self.key_file: f"fabricgen-lab-{self.prefix}"})[self.key_file]
        self.hosts.update(plan_hosts(self.prefix, self.block, n, kinds))
        for name, host in self.hosts.items():
            write_host_files(host, self.host_dir(name), client_key)
        host_keys = keygen({host_key_file(self.host_dir(name)): f"root@{name}" for name in self.hosts})
        known = [f"{host.address} {host_keys[host_key_file(self.host_dir(host.name))]}" for host in self.hosts.values()]
        self.known_hosts.write_text("".join(line + "\n" for line in known))
        bridge_address = f"{self.block.network_address + 1}/{BLOCK_PREFIX}"
        bridge = f"link add {self.bridge} type bridge\naddr add {bridge_address} dev {self.bridge}\n" \
                 f"link set {self.bridge} up\n"
        sh("ip", "-batch", "-", stdin=bridge + link_batch(self.prefix, self.bridge, list(self.hosts.values())))
        self._start_anchors(list(self.hosts))
        self._save()
        for name in self.hosts:  # each anchor started its sshd
            self._await_sshd(name)

    def _start_anchors(self, names: Sequence[str]) -> None:
        for platform in sorted({self.hosts[name].platform for name in names}):
            kind = kind_for(platform)
            state_dirs = [self.state_dir(name) for name in names if self.hosts[name].platform == platform]
            (init_targets if kind.target else init_models)(kind, state_dirs)
        started = {name: start_anchor(self.hosts[name], self.host_dir(name)) for name in names}
        self.children.update(started)
        for name, anchor in started.items():
            self.anchors[name] = anchor.pid
            await_anchor(self.hosts[name], anchor)

    def _save(self) -> None:
        recorded = {"prefix": self.prefix, "block": str(self.block), "anchors": self.anchors, "owner": self.owner,
                    "hosts": [asdict(host) for host in self.hosts.values()]}
        (self.directory / "lab.json").write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")

    def down(self) -> None:
        """Stop everything and remove every trace; safe to call twice, and on a lab that never came up."""
        teardown(self.prefix)
        for child in self.children.values():
            child.wait(WAIT_S)  # already dead (teardown waited for it); this reaps it
            for stream in (child.stdout, child.stderr):
                if stream is not None:
                    stream.close()
        self.children.clear()

    def __enter__(self) -> Lab:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.down()

    # --- looking inside a host, without SSH --------------------------------------------------------------

    def run(self, host: str, command: str | Sequence[str], *, timeout: float = 120,
            check: bool = False) -> subprocess.CompletedProcess[str]:
        """Run ``command`` (a shell line, or an argv) inside ``host``'s namespaces, with the environment its SSH
        sessions get -- for set-up and assertions, never in place of the SSH path under test."""
        argv = ["bash", "-c", command] if isinstance(command, str) else list(command)
        env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
               **self.hosts[host].session_env()}
        done = subprocess.run(["nsenter", "-t", str(self.anchors[host]), "-n", "-m", "-u", "--wd=/root", *argv],
                              env=env, capture_output=True, text=True, timeout=timeout, check=False)
        if check and done.returncode:
            raise LabError(f"{host}: {argv}: exit {done.returncode}: {done.stderr.strip()}")
        return done

    def nic_state(self, host: str) -> dict[str, Any]:
        """Everything the host's NICs hold: the real MTU of each port, the models' state files (netdevs and RDMA
        devices), and the fake sysfs/configfs files a script writes (DCQCN, CNP, rdma_cm defaults)."""
        lab_dir = self.host_dir(host) / "nic"  # the host's /run/fabricgen-lab
        trees = [lab_dir / "sys", lab_dir / "configfs"]
        return {
            "mtu": {nic: int(self.inside(host, f"/sys/class/net/{nic}/mtu").read_text()) for nic in NICS},
            "models": {p.stem: json.loads(p.read_text()) for p in sorted((lab_dir / "nic-state").glob("*.json"))},
            "files": {str(p.relative_to(lab_dir)): p.read_text().strip() for tree in trees
                      for p in sorted(tree.rglob("*")) if p.is_file() and p.name != "mtu"},
        }

    def tool_calls(self, host: str) -> list[dict[str, Any]]:
        """Every NIC tool model call on ``host`` since it was (re)built, in order."""
        log = self.host_dir(host) / "nic" / "tool-calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def sshd_pid(self, host: str) -> int | None:
        try:
            pid = int(self.inside(host, "/run/sshd.pid").read_text())
        except (OSError, ValueError):
            return None
        return pid if alive(pid) else None

    # --- faults and repairs -------------------------------------------------------------------------------

    def kill_sshd(self, host: str, *, sessions: bool = True) -> None:
        """SIGKILL the host's sshd; with ``sessions``, its session processes too (the connections drop).
        Commands the sessions started keep running, as on a real host; the anchor keeps the host up."""
        listener = self.sshd_pid(host)
        victims = [pid for pid in pids_in_netns([host]) if alive(pid) and _is_sshd(pid)]
        targets = victims if sessions else [pid for pid in victims if pid == listener]
        stop_processes_now(targets)
        self.inside(host, "/run/sshd.pid").unlink(missing_ok=True)

    def start_sshd(self, host: str) -> None:
        spawned = subprocess.run(["nsenter", "-t", str(self.anchors[host]), "-n", "-m", "-u", str(SSHD),
                                  "-E", "/run/sshd.log"], capture_output=True, text=True, timeout=WAIT_S, check=False)
        self._await_sshd(host, spawned.returncode)

    def _await_sshd(self, host: str, status: int = 0) -> None:
        """sshd daemonises (the process started exits once it has forked) and writes its PidFile after it
        listens: a PidFile naming a live sshd means "ready". LabError with the tail of its log (sshd -E) if not."""
        try:
            wait_until(lambda: self.sshd_pid(host) is not None, f"sshd of {host}")
        except LabError as error:
            log = self.inside(host, "/run/sshd.log")
            tail = log.read_text().strip().splitlines()[-3:] if log.exists() else []
            raise LabError(f"{host}: sshd exit {status}: {' | '.join(tail)}") from error

    def fill_disk(self, host: str, path: str = "/var/lib/fabricgen") -> None:
        """Make ``path`` a full filesystem: a tmpfs just big enough for what is there, then filled to ENOSPC
        (the filler is ``path``/.lab-disk-filler). Undo with :meth:`free_disk` or :meth:`reset`."""
        script = (f'set -eu; d={path}; mkdir -p "$d"; keep=$(mktemp -d /run/lab-fill.XXXXXX); cp -a "$d/." "$keep/"\n'
                  'size=$(( $(du -sk "$keep" | cut -f1) + 64 ))\n'
                  'mount -t tmpfs -o "size=${size}k" lab-full "$d"; cp -a "$keep/." "$d/"; rm -rf "$keep"\n'
                  f'dd if=/dev/zero of="$d/{DISK_FILLER}" bs=4k 2>/dev/null || true\n'
                  f'if : > "$d/.lab-probe" 2>/dev/null && echo x >> "$d/.lab-probe" 2>/dev/null; then exit 1; fi')
        self.run(host, script, check=True)

    def free_disk(self, host: str, path: str = "/var/lib/fabricgen") -> None:
        self.run(host, f"rm -f {path}/{DISK_FILLER} {path}/.lab-probe", check=True)

    def spare_address(self, k: int = 1) -> str:
        """An address of the lab's block that no host has: for :meth:`change_address`."""
        taken = {host.address for host in self.hosts.values()}
        free = (str(a) for a in self.block.hosts() if int(a) > int(self.block.network_address) + FIRST_HOST_OFFSET
                and str(a) not in taken)
        for _ in range(k - 1):
            next(free)
        return next(free)

    def change_address(self, host: str, new: str) -> None:
        """Move ``host``'s management address to ``new`` (in the lab's block): open sessions to the old one
        hang as on a real renumbering; sshd (listening on any address) answers on the new one, whose host key
        line is added to known_hosts."""
        if ipaddress.IPv4Address(new) not in self.block:
            raise LabError(f"{new} is not in the lab's {self.block}")
        self.run(host, f"ip addr flush dev eth0 && ip addr add {new}/{BLOCK_PREFIX} dev eth0", check=True)
        old = self.hosts[host].address
        self.forget_neighbour(new)
        self.hosts[host] = LabHost(host, self.hosts[host].index, self.hosts[host].platform, new)
        key = next(line.split(" ", 1)[1] for line in self.known_hosts.read_text().splitlines()
                   if line.split(" ", 1)[0] == old)
        with self.known_hosts.open("a") as stream:
            stream.write(f"{new} {key}\n")
        self._save()

    def forget_neighbour(self, address: str) -> None:
        """Drop this machine's ARP entry for ``address``: a rebuilt host has a new MAC, and the stale entry would
        black-hole the first seconds of traffic to it (no gratuitous ARP is sent when a lab host comes up)."""
        subprocess.run(["ip", "neigh", "del", address, "dev", self.bridge], capture_output=True, check=False)

    def reset(self, host: str) -> None:
        """``host`` as :meth:`up` made it: its processes stopped, its namespace, cables, overlays, NIC state and
        address rebuilt. Its host key (and so known_hosts) stays."""
        item = self.hosts[host]
        fresh = LabHost(item.name, item.index, item.platform,
                        str(self.block.network_address + FIRST_HOST_OFFSET + item.index))
        stop_everything_in([host])
        if child := self.children.pop(host, None):
            child.wait(WAIT_S)
            for stream in (child.stdout, child.stderr):
                if stream is not None:
                    stream.close()
        sh("ip", "netns", "del", host)
        # Deleting the root end of a veth deletes both ends at once. Without it they would live as long as the
        # namespace does, and a kernel TCP socket of a killed session (one that cannot send its FIN, say after
        # change_address) keeps the namespace alive for minutes after its name is gone.
        cables = [f"{self.prefix}m{item.index}"] + [f"{self.prefix}n{item.index}p{k}" for k in range(1, len(NICS) + 1)]
        for cable in cables:
            subprocess.run(["ip", "link", "del", cable], capture_output=True, check=False)
        wait_until(lambda: not set(cables) & set(root_links(self.prefix)), f"{host}'s cables")
        host_dir = self.host_dir(host)
        keys = (host_dir / "etc.upper" / "ssh").glob("ssh_host_*")
        saved = {key.name: (key.read_bytes(), key.stat().st_mode) for key in keys}
        shutil.rmtree(host_dir)
        self.hosts[host] = fresh
        write_host_files(fresh, host_dir, (self.key_file.with_suffix(".pub")).read_text().strip())
        for name, (content, mode) in saved.items():  # sshd refuses a private host key others can read
            (host_dir / "etc.upper" / "ssh" / name).write_bytes(content)
            (host_dir / "etc.upper" / "ssh" / name).chmod(mode)
        sh("ip", "-batch", "-", stdin=link_batch(self.prefix, self.bridge, [fresh]))
        self._start_anchors([host])
        self._save()
        self.forget_neighbour(fresh.address)
        self._await_sshd(host)  # the anchor started it

    # --- the fabricgen inputs for this lab ------------------------------------------------------------------

    def write_inputs(self, directory: Path) -> tuple[Path, Path]:
        """intent/mixed.yaml and an inventory like inventory/mixed/ whose GPU hosts are this lab's hosts (the
        NAPALM connection options included); the leaf, spine and OOB switches they cable to are not in the lab."""
        return write_inputs(self, directory)

    def status(self) -> list[str]:
        lines = [f"lab {self.prefix}: {len(self.hosts)} hosts on {self.bridge} {self.block}, state in {self.directory}"]
        for host in self.hosts.values():
            sshd = self.sshd_pid(host.name)
            lines.append(f"  {host.name:<14} {host.address:<15} {host.platform:<9} anchor {self.anchors[host.name]:<7} "
                         f"sshd {sshd or 'down'}")
        return lines


def _is_sshd(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/exe").readlink() == SSHD
    except OSError:
        return False


def stop_processes_now(pids: Sequence[int]) -> None:
    """SIGKILL, no grace: a crash, not a shutdown."""
    for pid in pids:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not any(alive(pid) for pid in pids), f"processes {list(pids)} to die")


def check_names(prefix: str, n: int) -> None:
    if not PREFIX_RE.fullmatch(prefix):
        raise LabError(f"lab prefix {prefix!r}: 2-9 lower-case letters and digits, starting with a letter")
    if not 1 <= n <= MAX_HOSTS:
        raise LabError(f"a lab has 1 to {MAX_HOSTS} hosts, not {n}")
    if len(f"{prefix}n{n}p{len(NICS)}") > IFNAMSIZ:
        raise LabError(f"prefix {prefix!r} with {n} hosts makes interface names over {IFNAMSIZ} characters")


def remove_stale_labs() -> list[str]:
    """Tear down every lab whose owning process is gone (a test run killed before its teardown); their prefixes."""
    stale = []
    for state in sorted(STATE_ROOT.iterdir()) if STATE_ROOT.is_dir() else []:
        try:
            owner = json.loads((state / "lab.json").read_text())["owner"]
        except (OSError, ValueError, KeyError):
            continue  # not a lab, or one whose builder has not written its owner yet
        if owner is not None and not alive(owner):
            teardown(state.name)
            stale.append(state.name)
    return stale


@contextmanager
def lab_lock() -> Iterator[None]:
    """Two labs coming up at once must not pick the same address block."""
    with (STATE_ROOT / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


# ---------------------------------------------------------------------------------------------------------
# fabricgen inputs: inventory/mixed's switches, cabled to the lab's hosts

MIXED_INTENT = ROOT / "intent" / "mixed.yaml"
MIXED_INVENTORY = ROOT / "inventory" / "mixed"
# Odd lab hosts cable to leaf1 + leaf3, even ones to leaf2 + leaf4, as node1-node4 do in inventory/mixed.
RAILS = (("leaf1", "leaf3"), ("leaf2", "leaf4"))
MGMT_PORTS = ("eth0", "Management1", "mgmt0")
# The slot of each leaf's first uplink in inventory/mixed (Ethernet224, Ethernet63/1, swp63, Ethernet1/63).
UPLINK_SLOT = {"sonic_leaf": 28, "eos_leaf": 62, "nvue_leaf": 62, "nxos_leaf": 62}


def leaf_port(leaf: dict[str, Any], slot: int) -> tuple[str, dict[str, Any]]:
    """The ``slot``-th host-facing port of a leaf, named as its platform names ports."""
    platform = leaf["groups"][0]
    if platform == "sonic_leaf":
        lanes = ",".join(str(8 * slot + lane) for lane in range(8))
        return f"Ethernet{8 * slot}", {"speed": "400G", "fec": "rs", "lanes": lanes}
    name = {"eos_leaf": f"Ethernet{slot + 1}/1", "nvue_leaf": f"swp{slot + 1}",
            "nxos_leaf": f"Ethernet1/{slot + 1}"}[platform]
    return name, {"speed": "400G", "fec": "rs"}


def leaf_without_hosts(leaf: dict[str, Any], host_slots: int) -> dict[str, Any]:
    """A leaf's management port and uplinks: where inventory/mixed has them, or after the host ports when the
    lab has more hosts than fit below them (the spines declare no peers, so only the leaf side is renamed)."""
    ports: dict[str, Any] = leaf["data"]["ports"]
    kept = {name: spec for name, spec in ports.items() if name in MGMT_PORTS}
    first = max(UPLINK_SLOT[leaf["groups"][0]], host_slots)
    for offset, spec in enumerate(spec for spec in ports.values() if "peer" in spec):
        name, renamed = leaf_port(leaf, first + offset)
        kept[name] = {**spec, **renamed}
    return kept


def lab_inventory(lab: Lab) -> dict[str, Any]:
    """inventory/mixed's hosts.yaml with its four nodes replaced by the lab's hosts (cabling regenerated)."""
    mixed: dict[str, Any] = yaml.safe_load((MIXED_INVENTORY / "hosts.yaml").read_text())
    switches = {name: device for name, device in mixed.items() if not name.startswith("node")}
    host_slots = (len(lab.hosts) + 1) // len(RAILS)
    for leaf in ("leaf1", "leaf2", "leaf3", "leaf4"):  # host ports are regenerated below
        switches[leaf]["data"]["ports"] = leaf_without_hosts(switches[leaf], host_slots)
    oob_ports = switches["oob1"]["data"]["ports"]
    for name in [name for name, spec in oob_ports.items() if spec["peer"].startswith("node")]:
        del oob_ports[name]
    hosts = {host.name: lab_host_entry(lab, host, switches) for host in lab.hosts.values()}
    # push (helper `push`, issue 23 item 8): a lab's inventory names only addresses of the lab's own block. The
    # switches, which this lab does not run, get the block's reserved addresses (after the bridge's, before the
    # first host's), which nothing answers; their rendered management address stays inventory/mixed's.
    for offset, entry in enumerate(switches.values(), 2):
        entry.setdefault("data", {}).setdefault("mgmt_address", entry["hostname"])
        entry["hostname"] = str(lab.block.network_address + offset)
    for leaf in ("leaf1", "leaf2", "leaf3", "leaf4"):  # management port, host ports by slot, uplinks
        ports = switches[leaf]["data"]["ports"]
        switches[leaf]["data"]["ports"] = {name: ports[name] for name in sorted(ports, key=lambda n: (
            n not in MGMT_PORTS, "peer" in ports[n]))}
    return {**switches, **hosts}


def lab_host_entry(lab: Lab, host: LabHost, switches: dict[str, Any]) -> dict[str, Any]:
    ports: dict[str, Any] = {}
    for nic, leaf, rdma in zip(NICS, RAILS[(host.index - 1) % 2], host.kind.rdma_devices, strict=True):
        port, spec = leaf_port(switches[leaf], (host.index - 1) // 2)
        switches[leaf]["data"]["ports"][port] = spec
        ports[nic] = {"rdma_device": rdma, "speed": "400G", "fec": "rs", "peer": f"{leaf}:{port}", "cable_m": 2,
                      "media": "dac"}
    ports.update({"bmc": {"speed": "1G"}, "eno1": {}})
    napalm = {"platform": "fabricgen_host",
              "extras": {"optional_args": {"key_file": str(lab.key_file), "known_hosts": str(lab.known_hosts)}}}
    return {"hostname": host.address, "username": "root", "groups": [host.kind.group],
            "connection_options": {"napalm": napalm}, "data": {"ports": ports}}


def write_inputs(lab: Lab, directory: Path) -> tuple[Path, Path]:
    intent = directory / "intent.yaml"
    inventory = directory / "inventory"
    inventory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(MIXED_INTENT, intent)
    for name in ("groups.yaml", "defaults.yaml"):
        shutil.copyfile(MIXED_INVENTORY / name, inventory / name)
    header = f"# fabricgen lab {lab.prefix}: inventory/mixed's switches; its GPU hosts are the lab's (tests/lab.py).\n"
    (inventory / "hosts.yaml").write_text(header + yaml.safe_dump(lab_inventory(lab), sort_keys=False))
    return intent, inventory


# ---------------------------------------------------------------------------------------------------------
# python tests/lab.py up N | status | down


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/lab.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--prefix", default=CLI_PREFIX, help=f"the lab's name prefix (default {CLI_PREFIX})")
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="build N hosts (replacing a lab of the same prefix)")
    up.add_argument("n", type=int, nargs="?", default=8)
    up.add_argument("--inputs", type=Path, help="also write a fabricgen intent and inventory for the lab here")
    commands.add_parser("status", help="the hosts, their addresses and sshd PIDs")
    down = commands.add_parser("down", help="stop and remove the lab (also the leftovers of a killed run)")
    down.add_argument("--stale", action="store_true", help="instead: remove every lab whose test run died")
    args = parser.parse_args(argv)
    if args.command == "up":
        started = time.monotonic()
        lab = Lab.up(args.n, args.prefix, owned=False)
        elapsed = time.monotonic() - started
        inputs = lab.write_inputs(args.inputs) if args.inputs else None
        print(f"up in {elapsed:.2f} s")
        print("\n".join(lab.status()))
        first = lab.address(next(iter(lab.hosts)))
        print(f"ssh -i {lab.key_file} -o UserKnownHostsFile={lab.known_hosts} root@{first}")
        if inputs:
            print("fabricgen inputs: {} -i {}".format(*inputs))
    elif args.command == "status":
        if not (STATE_ROOT / args.prefix / "lab.json").is_file():
            print(f"no lab {args.prefix}" + (" (leftover namespaces: run down)" if netns_names(args.prefix) else ""))
            return 1
        print("\n".join(Lab.attach(args.prefix).status()))
    elif args.stale:
        print("removed stale labs: " + (" ".join(remove_stale_labs()) or "none"))
    else:
        started = time.monotonic()
        teardown(args.prefix)
        print(f"lab {args.prefix} down in {time.monotonic() - started:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
