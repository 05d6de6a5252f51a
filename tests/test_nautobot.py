"""Nautobot as the inventory, against a real Nautobot (PyPI `nautobot` 3.x on Debian's PostgreSQL and Redis).

One Nautobot per test session of this file (tests/nautobot_lab.py: started on loopback from the repository's
migrated schema of the pinned nautobot, tests/nautobot_schema/; `migrate` must find nothing to apply), seeded
through its REST API by `fabricgen inventory export --to nautobot` with the bundled examples, each in its own
Location; every render from it must be byte-identical to the render from the files. Skipped, with the reason,
where PostgreSQL, Redis or nautobot are absent; FABRICGEN_REQUIRE_NAUTOBOT=1 (.ci/run) makes that a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from nautobot_lab import NautobotLab, missing

from conftest import ROOT

EXAMPLES = {"fabric": "inventory", "mixed": "inventory/mixed"}


def _unavailable() -> str | None:
    why = missing()
    if why is None:
        try:
            import nornir_nautobot  # noqa: F401
        except ImportError:
            why = "nornir-nautobot is not installed (pip install -e '.[nautobot]')"
    return why


@pytest.fixture(scope="module")
def nautobot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NautobotLab]:
    why = _unavailable()
    if why is not None:
        if os.environ.get("FABRICGEN_REQUIRE_NAUTOBOT") == "1":
            pytest.fail(f"FABRICGEN_REQUIRE_NAUTOBOT=1 but {why}")
        pytest.skip(reason=why)
    lab = NautobotLab.start(tmp_path_factory.mktemp("nautobot"))
    patch = pytest.MonkeyPatch()  # this file's own cache folder (the cache of Nautobot's answers is tested here)
    patch.setenv("FABRICGEN_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    try:
        for location, inventory in EXAMPLES.items():
            done = fabricgen("inventory", "export", "--to", "nautobot", "-i", str(ROOT / inventory), "--url", lab.url,
                             "--location", location, token=lab.token)
            assert done.returncode == 0, done.stderr
        yield lab
    finally:
        patch.undo()
        lab.stop()


def test_the_repository_schema_is_the_pinned_nautobot_s(nautobot: NautobotLab) -> None:
    """The session restored tests/nautobot_schema/nautobot-<version>.sql.gz and ran `nautobot-server migrate`:
    nothing was left to apply, so the fixture is the installed (pinned) nautobot's whole schema."""
    assert "No migrations to apply." in nautobot.migrate_output, nautobot.migrate_output
    assert "Applying " not in nautobot.migrate_output, nautobot.migrate_output


def fabricgen(*args: str, token: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "NAUTOBOT_TOKEN"}
    if token is not None:
        env["NAUTOBOT_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "fabricgen", *args], capture_output=True, text=True, check=False,
                          timeout=600, env=env, cwd=cwd)


def tree(out: Path) -> dict[str, bytes]:
    return {str(path.relative_to(out)): path.read_bytes() for path in sorted(out.rglob("*")) if path.is_file()}


def same_render(from_files: Path, from_nautobot: Path) -> None:
    files, nautobot = tree(from_files), tree(from_nautobot)
    assert files.keys() == nautobot.keys()
    assert [name for name in files if files[name] != nautobot[name]] == ["manifest.json"]
    before, after = json.loads(files["manifest.json"]), json.loads(nautobot["manifest.json"])
    assert {k: v for k, v in before.items() if k != "inputs"} == {k: v for k, v in after.items() if k != "inputs"}
    assert "inventory/nautobot" in after["inputs"]


def test_a_render_from_nautobot_is_the_render_from_files(nautobot: NautobotLab, tmp_path: Path) -> None:
    intent = ROOT / "intent" / "fabric.yaml"
    assert fabricgen("render", str(intent), "-i", str(ROOT / "inventory"), "-o", str(tmp_path / "files")
                     ).returncode == 0
    done = fabricgen("render", str(intent), "-i", f"nautobot://{nautobot.url.removeprefix('http://')}"
                     "?location=fabric", "-o", str(tmp_path / "nautobot"), token=nautobot.token)
    assert done.returncode == 0, done.stderr
    same_render(tmp_path / "files", tmp_path / "nautobot")
    assert nautobot.token not in done.stdout + done.stderr
    assert all(nautobot.token.encode() not in text for text in tree(tmp_path / "nautobot").values())


def test_a_nornir_config_naming_the_plugin_is_an_inventory(nautobot: NautobotLab, tmp_path: Path) -> None:
    """The mixed example through a Nornir config file: the plugin's options say where and which devices."""
    config = tmp_path / "nornir.yaml"
    config.write_text("inventory:\n  plugin: NautobotInventory\n  options:\n"
                      f"    nautobot_url: {nautobot.url}\n    filter_parameters: {{location: mixed}}\n")
    intent = ROOT / "intent" / "mixed.yaml"
    assert fabricgen("render", str(intent), "-i", str(ROOT / "inventory" / "mixed"), "-o", str(tmp_path / "files")
                     ).returncode == 0
    done = fabricgen("render", str(intent), "-i", str(config), "-o", str(tmp_path / "nautobot"), token=nautobot.token)
    assert done.returncode == 0, done.stderr
    same_render(tmp_path / "files", tmp_path / "nautobot")
    lint = fabricgen("lint", str(intent), "-i", str(config), token=nautobot.token)
    assert lint.returncode == 0, lint.stderr


def test_without_a_token_nothing_is_read(nautobot: NautobotLab, tmp_path: Path) -> None:
    done = fabricgen("render", str(ROOT / "intent" / "fabric.yaml"), "-i", f"{nautobot.url.replace('http', 'nautobot')}"
                     "?location=fabric", "-o", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "NAUTOBOT_TOKEN is not set" in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_wrong_token_is_a_clear_error(nautobot: NautobotLab, tmp_path: Path) -> None:
    wrong = "0123456789abcdef0123456789abcdef01234567"
    done = fabricgen("render", str(ROOT / "intent" / "fabric.yaml"), "-i", f"{nautobot.url.replace('http', 'nautobot')}"
                     "?location=fabric", "-o", str(tmp_path / "out"), token=wrong)
    assert done.returncode == 2, done.stderr
    assert f"{nautobot.url} refused the token (HTTP 403) (check NAUTOBOT_TOKEN" in done.stderr
    assert "Traceback" not in done.stderr and wrong not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_filter_nautobot_refuses_is_said_as_such(nautobot: NautobotLab, tmp_path: Path) -> None:
    done = fabricgen("render", str(ROOT / "intent" / "fabric.yaml"), "-i", f"{nautobot.url.replace('http', 'nautobot')}"
                     "?location=nowhere", "-o", str(tmp_path / "out"), token=nautobot.token)
    assert done.returncode == 2
    assert "Select a valid choice. nowhere is not one of the available choices" in done.stderr
    assert "check the filter" in done.stderr and "Traceback" not in done.stderr


def test_a_cable_nautobot_cannot_take_is_reported_at_the_cable(nautobot: NautobotLab,
                                                                tmp_path: Path) -> None:
    """A cable length fabricgen refuses (0 m is below the schema's 1) names the Nautobot cable it came from."""
    from fabricgen.load.sources.nautobot_export import Api

    api = Api(nautobot.url, nautobot.token)
    location = api.all("dcim/locations", name="fabric")[0]["id"]
    node4 = api.all("dcim/devices", name="node4", location=location)[0]["id"]
    port = api.all("dcim/interfaces", device_id=node4, name="ens2f0np0")[0]
    cable_id = port["cable"]["id"] if isinstance(port["cable"], dict) else port["cable"]
    reply = api.session.patch(f"{nautobot.url}/api/dcim/cables/{cable_id}/", json={"length": 0, "length_unit": "m"},
                              timeout=60)
    assert reply.status_code == 200, reply.text
    try:
        done = fabricgen("render", str(ROOT / "intent" / "fabric.yaml"), "-i",
                         f"{nautobot.url.replace('http', 'nautobot')}?location=fabric", "-o", str(tmp_path / "out"),
                         token=nautobot.token)
        assert done.returncode == 2
        assert f"{nautobot.url}/dcim/cables/{cable_id}:1:1: node4.data.ports.ens2f0np0.cable_m: Input should be " \
               "greater than or equal to 1" in done.stderr
    finally:
        api.session.patch(f"{nautobot.url}/api/dcim/cables/{cable_id}/", json={"length": 3, "length_unit": "m"},
                          timeout=60)


def test_an_unchanged_nautobot_is_read_from_the_cache_in_two_requests(nautobot: NautobotLab, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer is kept with the change log's mark: unchanged, the next read is the access check and the mark;
    after a change made through the API, everything is read again and the change is in it."""
    from fabricgen.load.sources.nautobot import fetch
    from fabricgen.load.sources.nautobot_export import Api

    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(tmp_path / "cache"))
    filters = {"location": "mixed"}
    first = fetch(nautobot.url, nautobot.token, filter_parameters=filters)
    again = fetch(nautobot.url, nautobot.token, filter_parameters=filters)
    assert (first.cached, again.cached) == (False, True)
    assert first.requests > 2 and again.requests == 2
    assert again.digest() == first.digest()
    [kept] = (tmp_path / "cache").glob("nautobot-*.json")
    assert kept.stat().st_mode & 0o777 == 0o600 and nautobot.token.encode() not in kept.read_bytes()
    other = fetch(nautobot.url, nautobot.token, filter_parameters={"location": "fabric"})
    assert not other.cached  # another filter is another answer

    cable = first.cables[0]
    api = Api(nautobot.url, nautobot.token)
    reply = api.session.patch(f"{nautobot.url}/api/dcim/cables/{cable['id']}/", json={"length": 77}, timeout=60)
    assert reply.status_code == 200, reply.text
    try:
        changed = fetch(nautobot.url, nautobot.token, filter_parameters=filters)
        assert not changed.cached and changed.digest() != first.digest()
        assert next(c for c in changed.cables if c["id"] == cable["id"])["length"] == 77
        assert fetch(nautobot.url, nautobot.token, filter_parameters=filters).cached
    finally:
        api.session.patch(f"{nautobot.url}/api/dcim/cables/{cable['id']}/", json={"length": cable["length"]},
                          timeout=60)


def test_plan_compares_the_base_intent_against_the_same_nautobot(nautobot: NautobotLab, tmp_path: Path) -> None:
    """git holds no Nautobot: the base is the base revision's intent over the Nautobot as it is now."""
    repo = tmp_path / "repo"
    (repo / "intent").mkdir(parents=True)
    intent = repo / "intent" / "fabric.yaml"
    intent.write_bytes((ROOT / "intent" / "fabric.yaml").read_bytes())
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for command in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "intent"]):
        subprocess.run(["git", "-C", str(repo), *command], check=True, capture_output=True, env={**os.environ, **env})
    text = intent.read_text()
    assert "max: 40KB" in text
    intent.write_text(text.replace("max: 40KB", "max: 60KB"))
    source = f"{nautobot.url.replace('http', 'nautobot')}?location=fabric"
    done = fabricgen("plan", "intent/fabric.yaml", "-i", source, token=nautobot.token, cwd=repo)
    assert done.returncode == 2, done.stderr
    assert "its intent against the same Nautobot as the head" in done.stdout.splitlines()[0]
    assert [line.strip() for line in done.stdout.splitlines() if "ECN kmax" in line] == [
        f"{switch}: queue 3 (rdma) ECN kmax 40 KB → 60 KB" for switch in ("leaf1", "leaf2", "spine1", "spine2")]
    assert done.stdout.endswith("4 of 9 devices change: 4 changed, 0 added, 0 removed\n")
