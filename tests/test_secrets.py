"""Credentials planted wherever Nornir users keep them never leave the inventory.

Nornir's SimpleInventory takes ``password`` (and ``username``) on hosts, groups and defaults, and per plugin in
``connection_options.<plugin>.password`` and ``connection_options.<plugin>.extras`` (netmiko's enable
``secret``, an HTTP plugin's ``api_token``); a password may also be a reference to an environment variable that
deploy expands. fabricgen reads them (they are part of the schema) and must never copy one, or the value an
environment reference points at, into a rendered file, a manifest, a resolved.json, the parse cache, what it
prints (stdout, stderr, in every format) or a diagnostic about the host that carries it.

Every command runs as a real subprocess, with its own parse cache, and everything under the test's directory
but the inventory itself is searched, byte for byte, for every planted value.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SECRETS = {
    "defaults password": "Dflt-pw-7fK2q",
    "defaults napalm password": "Dflt-napalm-pw-91xZ",
    "leaves group password": "Grp-leaves-pw-Qm3v",
    "spines netmiko enable secret": "Grp-netmiko-enable-Hh8s",
    "spines api token": "Grp-api-token-0cT5",
    "host password": "Host-leaf1-pw-Ww4e",
    "host scrapli password": "Host-scrapli-pw-Lp2r",
    "host ssh key passphrase": "Host-key-passphrase-Zz6u",
    "environment value": "Env-value-pw-Rr9k",
}
ENV_REFERENCE = "${FABRIC_SWITCH_PASSWORD}"  # node1's password: the reference is planted, the value is exported


def plant(inventory: Path) -> None:
    """The bundled inventory with a credential in every place Nornir users keep one."""
    (inventory / "defaults.yaml").write_text(
        "username: admin\n"
        f"password: {SECRETS['defaults password']}\n"
        f"connection_options:\n  napalm:\n    password: {SECRETS['defaults napalm password']}\n"
        "data: {}\n")
    groups = (inventory / "groups.yaml").read_text()
    groups = groups.replace("leaves:\n", f"leaves:\n  password: {SECRETS['leaves group password']}\n", 1)
    groups = groups.replace("spines:\n", "spines:\n  connection_options:\n    netmiko:\n      extras:\n"
                            f"        secret: {SECRETS['spines netmiko enable secret']}\n"
                            f"        api_token: {SECRETS['spines api token']}\n", 1)
    hosts = (inventory / "hosts.yaml").read_text()
    hosts = hosts.replace("leaf1:\n", f"leaf1:\n  password: {SECRETS['host password']}\n"
                          "  connection_options:\n    scrapli:\n"
                          f"      password: {SECRETS['host scrapli password']}\n"
                          f"      extras: {{auth_private_key_passphrase: {SECRETS['host ssh key passphrase']}}}\n", 1)
    hosts = hosts.replace("node1:\n", f"node1:\n  password: '{ENV_REFERENCE}'\n", 1)
    (inventory / "groups.yaml").write_text(groups)
    (inventory / "hosts.yaml").write_text(hosts)
    for name, value in SECRETS.items():
        if name != "environment value":
            assert value in (inventory / "defaults.yaml").read_text() + groups + hosts, name


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    inventory = tmp_path / "inventory"
    shutil.copytree(ROOT / "inventory", inventory, ignore=shutil.ignore_patterns("mixed"))
    plant(inventory)
    return inventory


def run(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """One fabricgen command, its output kept in the test's directory with the rest of what it left."""
    env = {**os.environ, "FABRICGEN_CACHE_DIR": str(tmp_path / "cache"), "FABRIC_SWITCH_PASSWORD":
           SECRETS["environment value"], "FABRICGEN_DEBUG": "1"}
    env.pop("FABRICGEN_NO_CACHE", None)
    result = subprocess.run([sys.executable, "-m", "fabricgen", *arguments], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    log = tmp_path / "logs" / f"{len(list((tmp_path / 'logs').glob('*'))) if (tmp_path / 'logs').is_dir() else 0}"
    log.parent.mkdir(exist_ok=True)
    log.write_text(f"{arguments}\nexit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def leaks(tmp_path: Path, inventory: Path) -> list[tuple[str, str]]:
    """(file, planted secret) for every planted value found in a file under ``tmp_path`` but the inventory."""
    found = []
    for path in sorted(tmp_path.rglob("*")):
        if path.is_file() and inventory not in path.parents:
            data = path.read_bytes()
            found += [(str(path.relative_to(tmp_path)), name) for name, value in SECRETS.items()
                      if value.encode() in data]
            if ENV_REFERENCE.encode() in data:
                found.append((str(path.relative_to(tmp_path)), "environment reference"))
    return found


def test_the_search_finds_what_is_planted(planted: Path, tmp_path: Path) -> None:
    (tmp_path / "control.txt").write_text(f"x{SECRETS['spines api token']}x {ENV_REFERENCE}\n")
    assert leaks(tmp_path, planted) == [("control.txt", "spines api token"), ("control.txt", "environment reference")]


def test_no_secret_leaves_the_inventory_in_any_command(planted: Path, tmp_path: Path) -> None:
    intent = str(ROOT / "intent" / "fabric.yaml")
    out = str(tmp_path / "out")
    commands = [
        ["render", intent, "-i", str(planted), "-o", out],
        ["render", intent, "-i", str(planted), "-o", out, "--format", "json"],  # up to date, from the cache
        ["render", intent, "-i", str(planted), "-o", str(tmp_path / "forked"), "--jobs", "2"],
        ["resolve", intent, "-i", str(planted), "--format", "yaml"],
        ["resolve", intent, "-i", str(planted), "--format", "json", "--device", "leaf1"],
        ["lint", intent, "-i", str(planted), "--format", "json"],
        ["lint", intent, "-i", str(planted), "--configs", out, "--format", "sarif"],
    ]
    for command in commands:
        result = run(tmp_path, *command)
        assert result.returncode == 0, (command, result.stderr)
    hosts = planted / "hosts.yaml"  # a GitOps commit: one cable longer, rendered by the neighbourhood update
    hosts.write_text(hosts.read_text().replace('peer: "spine1:Ethernet1/1", cable_m: 30',
                                               'peer: "spine1:Ethernet1/1", cable_m: 37', 1))
    update = run(tmp_path, "render", intent, "-i", str(planted), "-o", out, "--format", "json")
    assert update.returncode == 0, update.stderr
    assert '"rewritten": 0' not in update.stdout
    assert (tmp_path / "out" / "leaf1" / "resolved.json").is_file() and any((tmp_path / "cache").iterdir())
    assert leaks(tmp_path, planted) == []


@pytest.mark.parametrize("mistake", ["an unknown key", "a bad hostname", "a connection option of the wrong type"])
def test_a_diagnostic_about_the_host_carrying_the_secret_does_not_show_it(mistake: str, planted: Path,
                                                                        tmp_path: Path) -> None:
    hosts = planted / "hosts.yaml"
    text = hosts.read_text()
    edit = {
        "an unknown key": ("  data:\n    ports:\n",
                           f"  data:\n    api_token: {SECRETS['host password']}\n    ports:\n"),
        "a bad hostname": ("leaf1:\n  password", "leaf1:\n  hostname: not an address\n  password"),
        "a connection option of the wrong type": (
            "leaf1:\n", f"leaf1:\n  port: {SECRETS['host password']}\n"),
    }[mistake]
    if mistake == "a bad hostname":
        text = text.replace("  hostname: 192.0.2.11\n", "", 1)
    hosts.write_text(text.replace(*edit, 1))
    for command in (["render", "-o", str(tmp_path / "out")], ["lint"], ["lint", "--format", "sarif"]):
        result = run(tmp_path, command[0], str(ROOT / "intent" / "fabric.yaml"), "-i", str(planted), *command[1:])
        assert result.returncode == 2, result.stdout + result.stderr
        assert "hosts.yaml:" in result.stdout + result.stderr and "leaf1" in result.stdout + result.stderr
    assert not (tmp_path / "out").exists()
    assert leaks(tmp_path, planted) == []
