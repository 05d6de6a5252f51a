"""What fabricgen fetches or reads from elsewhere cannot reach past it (issue 27).

`validate --fetch-models` runs real git against a hostile local mirror standing in for sonic-buildimage (as
tests/test_validate_models.py builds it): symbolic links out of the tree, templates that include absolute paths
or never end, files over the size limit, URLs with credentials, transports fabricgen does not use. Every
refusal is asserted by its exact message, and every test snapshots the folders around the cache (the test's
whole tmp_path: mirror, cache, anything a fetch could write through a link) to show that nothing changed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_validate_models import MODELS, PORT_MODULE, TEMPLATES, TYPES_TEMPLATE, commit_files, git

from fabricgen.cli import main
from fabricgen.validate.gitfetch import GitError, Remote, public_url, run_git
from fabricgen.validate.models import cached_models, fetch_models

from conftest import ROOT

RELEASE = "202411"
FETCHING = f"fetching the SONiC {RELEASE} YANG models ...\n"
PLANTED_TOKEN = "glpat-planted-ci-token-0123456789"  # what a CI job's environment would hold


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    """A local mirror of sonic-buildimage (branch 202411: one module, one template), hostile from the next
    commit on."""
    repo = tmp_path / "mirror"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch", RELEASE)
    commit_files(repo, {f"{MODELS}/sonic-port.yang": PORT_MODULE, f"{TEMPLATES}/sonic-types.yang.j2": TYPES_TEMPLATE},
                 "202411 models")
    return repo


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own cache, a CI token in the environment (what a hostile template would go after), and no
    models or mirror from the user's environment."""
    monkeypatch.setenv("FABRICGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CI_JOB_TOKEN", PLANTED_TOKEN)
    for name in ("FABRICGEN_SONIC_YANG", "FABRICGEN_SONIC_BUILDIMAGE", "FABRICGEN_MAX_MODEL_BYTES",
                 "FABRICGEN_TEMPLATE_SECONDS", "GIT_ALLOW_PROTOCOL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "cache" / "sonic-yang"


@pytest.fixture
def fetched(mirror: Path, cache: Path) -> Path:
    """The mirror's good models, fetched before it turned hostile: a refused fetch must leave them as they are."""
    fetch_models(RELEASE, str(mirror))
    return cache / RELEASE


def snapshot(folder: Path) -> dict[str, tuple[object, ...]]:
    """Every entry under ``folder`` (links not followed): kind, mode, owner and content digest or link target."""
    entries: dict[str, tuple[object, ...]] = {}
    for parent, directories, files in os.walk(folder):
        for name in [*directories, *files]:
            path = Path(parent) / name
            status = path.lstat()
            if path.is_symlink():
                content: object = str(path.readlink())
            elif path.is_file():
                content = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                content = None
            entries[str(path.relative_to(folder))] = (status.st_mode, status.st_uid, content)
    return entries


def fetch(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", "--fetch-models", RELEASE, *args])
    return result.exit_code, result.output


def refused_without_a_trace(tmp_path: Path, repository: str, message: str) -> None:
    """The fetch from ``repository`` exits 2 with exactly ``message``; nothing under tmp_path changed (the
    earlier models included), no secret from the environment anywhere, and the cache entry still trusted."""
    before = snapshot(tmp_path)
    code, output = fetch("--repo", repository)
    assert (code, output) == (2, f"{FETCHING}error: {message}\n")
    assert snapshot(tmp_path) == before
    assert PLANTED_TOKEN not in output
    found = cached_models(RELEASE, warn=pytest.fail)
    assert found is not None and found.directory.joinpath("sonic-port.yang").read_text() == PORT_MODULE


# --- symbolic links out of the checkout -------------------------------------------------------------------

def test_a_template_linked_to_proc_self_environ_is_refused_naming_the_link(
        tmp_path: Path, mirror: Path, fetched: Path) -> None:
    (mirror / TEMPLATES / "environ.txt").symlink_to("/proc/self/environ")
    commit_files(mirror, {f"{TEMPLATES}/sonic-types.yang.j2": '{% include "environ.txt" %}\n'}, "include a link")
    refused_without_a_trace(tmp_path, str(mirror), (
        f"{mirror} 202411: {TEMPLATES}/environ.txt is a symbolic link to /proc/self/environ, outside the repository; "
        "refusing to fetch from it (sonic-buildimage has no such link: check the mirror)"))
    assert not any(PLANTED_TOKEN.encode() in path.read_bytes() for path in fetched.rglob("*") if path.is_file())


def test_a_yang_models_folder_that_is_a_link_out_of_the_tree_is_refused(
        tmp_path: Path, mirror: Path, fetched: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "sonic-port.yang").write_text(PORT_MODULE.replace("prefix port", "prefix planted"))
    git(mirror, "rm", "--quiet", "-r", MODELS)
    (mirror / MODELS).symlink_to(elsewhere)
    commit_files(mirror, {}, "yang-models elsewhere")
    refused_without_a_trace(tmp_path, str(mirror), (
        f"{mirror} 202411: {MODELS} is a symbolic link to {elsewhere}, outside the repository; refusing to fetch "
        "from it (sonic-buildimage has no such link: check the mirror)"))


# --- templates: only the fetched tree, bounded in time and size ---------------------------------------------

@pytest.mark.parametrize("included", ["/proc/self/environ", "../yang-models/sonic-port.yang"])
def test_a_template_includes_only_files_of_its_folder(
        tmp_path: Path, mirror: Path, fetched: Path, included: str) -> None:
    commit_files(mirror, {f"{TEMPLATES}/sonic-types.yang.j2": f'{{% include "{included}" %}}\n'}, "include")
    refused_without_a_trace(tmp_path, str(mirror), (
        f"{TEMPLATES}/sonic-types.yang.j2: {included!r} is a path outside {TEMPLATES}; a template may include "
        "only files of that folder, by a relative name"))


def test_an_endless_template_is_stopped_at_the_time_limit(
        tmp_path: Path, mirror: Path, fetched: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 10^10 iterations that write nothing: only a clock can stop it.
    endless = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}\n"
    commit_files(mirror, {f"{TEMPLATES}/sonic-types.yang.j2": endless}, "endless")
    monkeypatch.setenv("FABRICGEN_TEMPLATE_SECONDS", "3")
    refused_without_a_trace(tmp_path, str(mirror), (
        f"{TEMPLATES}: rendering the templates did not finish within 3 s (an endless loop?); refusing them. The "
        "limit is 3 seconds to render the YANG templates; raise it with FABRICGEN_TEMPLATE_SECONDS=N on a very "
        "slow machine"))
    assert _processes_mentioning(str(tmp_path)) == []  # the rendering child went with its process group


def _processes_mentioning(*texts: str) -> list[int]:
    """The processes whose command line holds every one of ``texts``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and all(text.encode() in (entry / "cmdline").read_bytes() for text in texts):
                found.append(int(entry.name))
        except OSError:
            continue  # ended while we looked
    return found


def test_a_template_that_renders_too_much_is_refused(
        tmp_path: Path, mirror: Path, fetched: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit_files(mirror, {f"{TEMPLATES}/sonic-types.yang.j2": "{% for a in range(100000) %}0123456789{% endfor %}"},
                 "a megabyte")
    monkeypatch.setenv("FABRICGEN_MAX_MODEL_BYTES", "100000")
    refused_without_a_trace(tmp_path, str(mirror), (
        f"{TEMPLATES}/sonic-types.yang.j2: renders more than 100,000 bytes; refusing it (the limit is 100,000 bytes "
        "per YANG model (fetched, or rendered from a template); raise it with FABRICGEN_MAX_MODEL_BYTES=N if the "
        "file is meant to be this large)"))


def test_a_huge_model_file_is_refused_before_it_reaches_the_cache(
        tmp_path: Path, mirror: Path, fetched: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit_files(mirror, {f"{MODELS}/sonic-huge.yang": "// padding\n" * 20_000}, "220 KB")
    monkeypatch.setenv("FABRICGEN_MAX_MODEL_BYTES", "100000")
    refused_without_a_trace(tmp_path, str(mirror), (
        f"{mirror} 202411 {MODELS}: 'sonic-huge.yang' is larger than 100,000 bytes; refusing it (the limit is "
        "100,000 bytes per YANG model (fetched, or rendered from a template); raise it with "
        "FABRICGEN_MAX_MODEL_BYTES=N if the file is meant to be this large)"))


# --- what git may speak -------------------------------------------------------------------------------------

def test_an_ext_url_is_refused_before_git_runs(tmp_path: Path, fetched: Path) -> None:
    planted = tmp_path / "ran"
    refused_without_a_trace(tmp_path, f"ext::sh -c touch% {planted}", (
        f"ext::sh -c touch% {planted}: ext:: URLs make git run a remote helper (ext:: runs any command); fetch "
        "from an https://, ssh:// or local repository"))
    assert not planted.exists()


def test_plain_http_and_git_protocol_urls_are_refused(tmp_path: Path, fetched: Path) -> None:
    for scheme in ("http", "git"):
        refused_without_a_trace(tmp_path, f"{scheme}://mirror.example/sonic-buildimage.git", (
            f"{scheme}://mirror.example/sonic-buildimage.git: fabricgen fetches over https or ssh, or from a local "
            f"repository, not over {scheme}:// (anyone on the path could change what it fetches); use the "
            "https:// or ssh:// URL of the repository"))


def test_git_itself_enforces_the_allow_list_whatever_the_environment_allows(
        mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A user's environment that allows every transport does not widen fabricgen's list: without "file" in it,
    # git refuses the local mirror.
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "ext:file:https:ssh")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'protocol.allow'='always'")
    with pytest.raises(GitError, match=r"^git clone failed: fatal: transport 'file' not allowed$"):
        run_git(["clone", "--quiet", "--no-local", str(mirror), str(tmp_path / "clone")],
                Remote(str(mirror), ("https", "ssh")), 60)
    assert not (tmp_path / "clone").exists()


# --- credentials in the URL ---------------------------------------------------------------------------------

def test_a_password_in_the_url_is_never_printed_nor_stored(mirror: Path, cache: Path) -> None:
    url = f"file://fetcher:hunter2@localhost{mirror}"  # git's file transport ignores the user information
    code, output = fetch("--repo", url)
    assert code == 0, output
    assert output == (f"{FETCHING}fetched 2 SONiC 202411 YANG models from file://localhost{mirror} at commit "
                      f"{git(mirror, 'rev-parse', 'HEAD')}\ninto {cache / RELEASE}\n")
    source = json.loads((cache / RELEASE / "source.json").read_text())
    assert source["repository"] == f"file://localhost{mirror}"
    assert not [path for path in cache.rglob("*") if path.is_file() and b"hunter2" in path.read_bytes()]
    code, output = fetch("--repo", url.replace(str(mirror), str(mirror) + "-gone"))  # git's error quotes the URL
    assert code == 2 and "hunter2" not in output and "fetcher" not in output, output



class _SmartHttp(BaseHTTPRequestHandler):
    """git's smart HTTP, served by git's own http-backend (as a web server runs it, by CGI), behind basic
    authentication. ``server`` carries ``root`` (the folder of repositories), ``expected`` (the Authorization
    header it accepts) and ``authorized`` (how many requests carried it)."""

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: pytest shows what the test prints

    def _serve(self) -> None:
        server = self.server
        if self.headers.get("Authorization") != server.expected:  # type: ignore[attr-defined]
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="mirror"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        server.authorized += 1  # type: ignore[attr-defined]
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = {"PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": str(server.root),  # type: ignore[attr-defined]
               "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
               "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
               "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""), "REMOTE_USER": "fetcher",
               "GIT_PROTOCOL": self.headers.get("Git-Protocol", "")}
        done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60,
                              check=False)
        head, _, payload = done.stdout.replace(b"\r\n", b"\n").partition(b"\n\n")
        fields = [line.partition(": ") for line in head.decode().splitlines()]
        status = next((int(value.split()[0]) for name, _, value in fields if name.lower() == "status"), 200)
        self.send_response(status)
        for name, _, value in fields:
            if name.lower() != "status":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def https_mirror(mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Any]]:
    """The mirror served over HTTPS with basic authentication (user fetcher, password hunter2) on loopback, a
    certificate made for it and trusted by git (GIT_SSL_CAINFO); the URL and the server."""
    key, certificate = tmp_path / "tls" / "key.pem", tmp_path / "tls" / "cert.pem"
    key.parent.mkdir()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out",
                    str(certificate)], check=True, capture_output=True, timeout=60)
    git(mirror, "config", "uploadpack.allowFilter", "true")  # the blob-less clone, as GitHub serves it
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SmartHttp)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.root, server.authorized = mirror.parent, 0  # type: ignore[attr-defined]
    server.expected = "Basic " + base64.b64encode(b"fetcher:hunter2").decode()  # type: ignore[attr-defined]
    monkeypatch.setenv("GIT_SSL_CAINFO", str(certificate))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://fetcher:hunter2@127.0.0.1:{server.server_address[1]}/{mirror.name}", server
    finally:
        server.shutdown()
        server.server_close()


def test_https_credentials_reach_the_server_but_no_command_line_log_or_file(
        https_mirror: tuple[str, Any], mirror: Path, cache: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    url, server = https_mirror
    public = url.replace("fetcher:hunter2@", "")
    trace = tmp_path / "git-trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))  # every git command line, as a user debugging a fetch logs them
    code, output = fetch("--repo", url)
    assert code == 0, output
    assert output == (f"{FETCHING}fetched 2 SONiC 202411 YANG models from {public} at commit "
                      f"{git(mirror, 'rev-parse', 'HEAD')}\ninto {cache / RELEASE}\n")
    assert server.authorized > 0  # the password was used: the server refuses every request without it
    assert json.loads((cache / RELEASE / "source.json").read_text())["repository"] == public
    assert "hunter2" not in trace.read_text() and "git clone" in trace.read_text()
    assert not [path for path in tmp_path.rglob("*") if path.is_file() and b"hunter2" in path.read_bytes()]
    before = snapshot(tmp_path)
    code, output = fetch("--repo", url.replace("hunter2", "wrong-hunter3"))
    assert (code, output) == (2, f"{FETCHING}error: git clone failed: fatal: Authentication failed for "
                                 f"'{public}/'\n")
    assert "wrong-hunter3" not in trace.read_text()
    assert {**snapshot(tmp_path), "git-trace": None} == {**before, "git-trace": None}  # the trace has grown


def test_public_url_takes_out_every_credential() -> None:
    assert public_url("https://x-access-token:ghs_abc@github.com/o/r.git") == "https://github.com/o/r.git"
    assert public_url("https://ghp_token@github.com/o/r.git") == "https://github.com/o/r.git"
    assert public_url("https://user:p@ss@host/r") == "https://host/r"  # an unescaped @ in the password
    quoted = "fatal: unable to access 'https://u:pw@host/r/': 403"
    assert public_url(quoted) == "fatal: unable to access 'https://host/r/': 403"
    scp_like = "git@github.com:sonic-net/sonic-buildimage.git"  # a user name alone, no password: kept
    assert public_url(scp_like) == scp_like


# --- interrupts: git's process group killed, the work folder removed ------------------------------------------

@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 1), (signal.SIGTERM, -signal.SIGTERM)])
def test_an_interrupted_fetch_leaves_no_git_and_no_work_folder(
        tmp_path: Path, cache: Path, signum: int, status: int) -> None:
    env = _hanging_git(tmp_path)
    process = subprocess.Popen([sys.executable, "-c", FETCH_WITH_CTRL_C], env=env, cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    helper = tmp_path / "helper.pid"
    deadline = time.monotonic() + 60
    while not (helper.exists() and helper.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [path.name[:13] for path in cache.iterdir()] == [".fetch-202411"]  # the work folder, while git runs
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == status, err
    assert _ended_within(int(helper.read_text()), seconds=10)
    assert list(cache.iterdir()) == []


# Ctrl-C's handler set explicitly: a shell starting a background job would have it ignored.
FETCH_WITH_CTRL_C = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                     "from fabricgen.cli import main; "
                     "main(['validate', '--fetch-models', '202411', '--repo', 'https://example.invalid/x.git'])")


def _hanging_git(tmp_path: Path) -> dict[str, str]:
    """An environment whose git hangs as a stalled network would, with a transport helper of its own whose pid
    it writes to ``tmp_path/helper.pid``."""
    stub = tmp_path / "bin" / "git"
    stub.parent.mkdir()
    stub.write_text(f"#!/bin/sh\nsleep 60 &\necho $! > {tmp_path}/helper.pid\nwait\n", encoding="utf-8")
    stub.chmod(0o755)
    return {**os.environ, "PATH": f"{stub.parent}{os.pathsep}{os.environ['PATH']}"}


def test_a_ctrl_c_as_git_starts_still_takes_its_helper_with_it(tmp_path: Path, cache: Path) -> None:
    """Ctrl-C landing after git has started but before fabricgen waits on it (a moment a loaded machine widens):
    it is held back until the wait is in place, and git's whole group goes as on any other Ctrl-C."""
    late = ("import os, subprocess, sys, time\n"
            "real = subprocess.Popen\n"
            "class CtrlCAsItStarts(real):\n"
            "    def __init__(self, *args, **kwargs):\n"
            "        super().__init__(*args, **kwargs)\n"
            f"        helper = {str(tmp_path / 'helper.pid')!r}\n"
            "        while not (os.path.exists(helper) and open(helper).read().strip()):\n"
            "            time.sleep(0.01)\n"
            "        os.kill(os.getpid(), 2)  # SIGINT, before Popen has even returned\n"
            "        time.sleep(0.3)\n"
            "subprocess.Popen = CtrlCAsItStarts\n")
    process = subprocess.run([sys.executable, "-c", late + FETCH_WITH_CTRL_C.replace("; ", "\n")],
                             env=_hanging_git(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert process.returncode == 1, process.stderr
    assert "Aborted!" in process.stderr  # click's word for Ctrl-C
    assert _ended_within(int((tmp_path / "helper.pid").read_text()), seconds=10)
    assert list(cache.iterdir()) == []


def _ended_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` ends within ``seconds`` (a zombie has ended: it waits only to be reaped)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_a_fetch_killed_outright_takes_git_with_it_and_the_next_fetch_removes_its_work_folder(
        tmp_path: Path, cache: Path, mirror: Path) -> None:
    stub = tmp_path / "bin" / "git"
    stub.parent.mkdir()
    stub.write_text(f"#!/bin/sh\necho $$ > {tmp_path}/git.pid\nexec sleep 60\n", encoding="utf-8")
    stub.chmod(0o755)
    env = {**os.environ, "PATH": f"{stub.parent}{os.pathsep}{os.environ['PATH']}"}
    program = ("from fabricgen.cli import main; "
               "main(['validate', '--fetch-models', '202411', '--repo', 'https://example.invalid/x.git'])")
    process = subprocess.Popen([sys.executable, "-c", program], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    pid_file = tmp_path / "git.pid"
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.kill()  # SIGKILL: no handler runs
    process.wait(timeout=60)
    assert _ended_within(int(pid_file.read_text()), seconds=10)  # the kernel's SIGKILL (PR_SET_PDEATHSIG)
    [left] = cache.iterdir()
    assert left.name.startswith(".fetch-202411-")
    fetch_models(RELEASE, str(mirror))
    assert sorted(path.name for path in cache.iterdir()) == [RELEASE]  # the abandoned work folder is gone


# --- a planted models cache: the parse cache's rules, and source.json's digest ---------------------------------

def validate_golden(monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["validate", "golden/fabric"])
    return result.exit_code, result.output


def ignored_without_a_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warning: str) -> None:
    """validate warns with exactly ``warning``, ignores the cached models (exit 2: none to check against) and
    changes nothing around the cache."""
    before = snapshot(tmp_path)
    code, output = validate_golden(monkeypatch)
    missing = (f"error: no SONiC 202411 YANG models in {tmp_path / 'cache/sonic-yang/202411'}; fetch them with "
               "`fabricgen validate --fetch-models 202411` (or, without access to GitHub, pass --models DIR or set "
               "FABRICGEN_SONIC_YANG: see the README)")
    assert (code, output) == (2, f"{warning}\n{missing}\n")
    assert snapshot(tmp_path) == before


def untrusted_warning(cache: Path, path: Path, reason: str) -> str:
    fix = "`fabricgen validate --fetch-models 202411`"
    return (f"warning: ignoring the SONiC 202411 YANG models in {cache / RELEASE}: {path} is {reason}, so someone "
            f"else could have planted or changed them. Fix: make every folder and file from {cache.parent} down "
            f"yours and writable by you only (chown, chmod go-w), then {fix}; or fetch into a cache of your own "
            "(FABRICGEN_CACHE_DIR=DIR fabricgen validate --fetch-models 202411)")


def plant(fetched: Path) -> None:
    """What the issue's attacker did: a model that accepts MTU 99999 where SONiC's refuses it."""
    (fetched / "models" / "sonic-port.yang").write_text(PORT_MODULE.replace("}\n", "  // mtu range 1..99999\n}\n"))


def test_models_planted_in_a_world_writable_folder_are_ignored(
        tmp_path: Path, fetched: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (fetched / "models").chmod(0o777)
    plant(fetched)
    ignored_without_a_trace(tmp_path, monkeypatch, untrusted_warning(
        cache, fetched / "models", "writable by its group and everyone (mode 0777)"))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a folder owned by another user")
def test_models_planted_in_a_folder_of_another_user_are_ignored(
        tmp_path: Path, fetched: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plant(fetched)
    os.chown(fetched, 65534, 65534)  # nobody
    ignored_without_a_trace(tmp_path, monkeypatch, untrusted_warning(
        cache, fetched, f"owned by uid 65534, not by this user (uid {os.geteuid()})"))


def test_a_model_edited_since_the_fetch_is_ignored(
        tmp_path: Path, fetched: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plant(fetched)  # in a folder of the user's own: only the digest tells
    ignored_without_a_trace(tmp_path, monkeypatch, (
        f"warning: ignoring the SONiC 202411 YANG models in {fetched / 'models'}: they differ from what was fetched "
        "(source.json's models_digest: a model was added, removed or edited since). Fix: fetch them again with "
        "`fabricgen validate --fetch-models 202411`"))


def test_a_model_added_since_the_fetch_is_ignored(
        tmp_path: Path, fetched: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (fetched / "models" / "sonic-planted.yang").write_text(PORT_MODULE.replace("port", "planted"))
    ignored_without_a_trace(tmp_path, monkeypatch, (
        f"warning: ignoring the SONiC 202411 YANG models in {fetched / 'models'}: they differ from what was fetched "
        "(source.json's models_digest: a model was added, removed or edited since). Fix: fetch them again with "
        "`fabricgen validate --fetch-models 202411`"))


def test_models_of_an_older_fabricgen_without_a_digest_are_fetched_again(
        tmp_path: Path, fetched: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = json.loads((fetched / "source.json").read_text())
    del source["models_digest"]
    (fetched / "source.json").write_text(json.dumps(source))
    ignored_without_a_trace(tmp_path, monkeypatch, (
        f"warning: ignoring the SONiC 202411 YANG models in {fetched / 'models'}: source.json records no digest "
        "of them (fetched by an older fabricgen). Fix: fetch them again with "
        "`fabricgen validate --fetch-models 202411`"))
    assert fetch("--repo", str(mirror))[0] == 0  # the fix the warning names
    assert cached_models(RELEASE, warn=pytest.fail) is not None


def test_no_fetch_into_a_cache_folder_others_can_write(tmp_path: Path, mirror: Path, fetched: Path,
                                                        cache: Path) -> None:
    cache.parent.chmod(0o777)
    refused = (f"the models cache {cache.parent} is writable by its group and everyone (mode 0777); refusing to "
               "fetch into it (others could change the models). Fix: make it yours and writable by you only (chown, "
               "chmod go-w), or point FABRICGEN_CACHE_DIR at a folder of your own")
    before = snapshot(tmp_path)
    assert fetch("--repo", str(mirror)) == (2, f"{FETCHING}error: {refused}\n")
    assert snapshot(tmp_path) == before


# --- plan --base: a file of the base revision is sized before it is read -----------------------------------

def test_a_base_revision_file_over_the_input_limit_is_refused_unread(tmp_path: Path) -> None:
    repo = tmp_path / "fabric"
    shutil.copytree(ROOT / "intent", repo / "intent")
    (repo / "inventory").mkdir()
    for name in ("hosts.yaml", "groups.yaml", "defaults.yaml"):
        shutil.copy(ROOT / "inventory" / name, repo / "inventory" / name)
    hosts = (repo / "inventory" / "hosts.yaml").read_text()
    (repo / "inventory" / "hosts.yaml").write_text(hosts + "# padding\n" * 3000)  # ~35 KB in the base only
    git(repo, "init", "--quiet", "--initial-branch", "main")
    base = commit_files(repo, {}, "a base with a large hosts.yaml")
    big = git(repo, "rev-parse", f"{base}:inventory/hosts.yaml")
    size = int(git(repo, "cat-file", "-s", big))
    (repo / "inventory" / "hosts.yaml").write_text(hosts)  # the head: 4.5 KB
    temporary, trace = tmp_path / "tmp", tmp_path / "git-trace"
    temporary.mkdir()
    before = snapshot(repo)
    env = {**os.environ, "FABRICGEN_MAX_INPUT_BYTES": "20000", "TMPDIR": str(temporary), "GIT_TRACE": str(trace)}
    done = subprocess.run([sys.executable, "-m", "fabricgen", "plan", "--base", "HEAD"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert (done.returncode, done.stdout) == (3, "")  # plan: 3 bad input (2 means "devices change")
    assert f"error: --base: {base[:12]}:inventory/hosts.yaml is {size:,} bytes; refusing to read it (the limit is " \
        "20,000 bytes per input file; raise it with FABRICGEN_MAX_INPUT_BYTES=N if the file is meant to be this " \
        "large)" in done.stderr.splitlines()
    commands = trace.read_text()
    assert "cat-file --batch-check" in commands and big not in commands  # sized, never read
    assert snapshot(repo) == before and list(temporary.iterdir()) == []
    env["FABRICGEN_MAX_INPUT_BYTES"] = str(size)  # the fix the message names
    raised = subprocess.run([sys.executable, "-m", "fabricgen", "plan", "--base", "HEAD"], cwd=repo, env=env,
                            capture_output=True, text=True, timeout=300, check=False)
    assert raised.returncode == 0, raised.stderr  # the padding is a comment: no device changes


# --- docs and render never replace each other's tree --------------------------------------------------------

def run(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, list[str]]:
    monkeypatch.chdir(ROOT)  # the bundled example: intent/fabric.yaml, inventory/
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output.splitlines()


def foreign_tree(out: Path, written: str, writing: str) -> str:
    return (f"{out} holds the tree `fabricgen {written}` wrote (manifest.json: kind {written}); refusing to replace "
            f"it with what `fabricgen {writing}` writes. Fix: write to another directory (-o DIR), or delete {out} "
            f"first if that {written} tree is no longer needed")


def test_docs_refuses_to_replace_a_rendered_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    assert run(monkeypatch, "render", "-o", str(out))[0] == 0
    before = snapshot(tmp_path)
    code, lines = run(monkeypatch, "docs", "-o", str(out))
    assert code == 3
    assert f"error: cannot write {out}: {foreign_tree(out, 'render', 'docs')}; the previous documentation (if " \
        "any) is unchanged" in lines
    assert snapshot(tmp_path) == before
    assert run(monkeypatch, "render", "-o", str(out))[0] == 0  # its own tree: rendered again


def test_render_refuses_to_replace_a_documentation_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    assert run(monkeypatch, "docs", "-o", str(docs))[0] == 0
    before = snapshot(tmp_path)
    for extra in ([], ["--full"]):  # an incremental render must not take the docs tree for a previous render
        code, lines = run(monkeypatch, "render", "-o", str(docs), *extra)
        assert code == 3
        assert f"error: cannot write {docs}: {foreign_tree(docs, 'docs', 'render')}; the previous output (if any) " \
            "is unchanged" in lines
        assert snapshot(tmp_path) == before
    code, lines = run(monkeypatch, "plan", "--base", str(docs))  # nor plan for a rendered base
    assert code == 3 and any("not a tree fabricgen rendered" in line for line in lines)  # plan: bad input
    assert run(monkeypatch, "docs", "-o", str(docs))[0] == 0  # its own tree: written again


def test_credentials_go_to_git_only_over_https() -> None:
    https = Remote.of("https://fetcher:p%40ss@mirror.example/sonic-buildimage.git")
    assert (https.url, https.username, https.password) == ("https://mirror.example/sonic-buildimage.git", "fetcher",
                                                           "p@ss")  # percent-decoded, as git would
    assert "p@ss" not in " ".join(https.options())  # the helper reads the environment
    assert https.environment()["FABRICGEN_GIT_PASSWORD"] == "p@ss"
    local = Remote.of("file://fetcher:hunter2@localhost/srv/mirror")
    assert (local.url, local.username, local.password) == ("file://localhost/srv/mirror", "", "")
    assert "FABRICGEN_GIT_PASSWORD" not in local.environment()
    ssh = Remote.of("ssh://git@mirror.example/sonic-buildimage.git")  # the user ssh needs stays
    assert ssh.url == "ssh://git@mirror.example/sonic-buildimage.git" and not ssh.username
    with pytest.raises(GitError, match=r"^ssh://mirror\.example/r\.git: ssh takes no password from a URL; leave it "
                                       r"out and use a key \(or an ssh agent\)$"):
        Remote.of("ssh://git:hunter2@mirror.example/r.git")


def test_sigterm_while_a_template_renders_stops_the_renderer_and_removes_the_work_folder(
        tmp_path: Path, mirror: Path, fetched: Path, cache: Path) -> None:
    endless = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}\n"
    commit_files(mirror, {f"{TEMPLATES}/sonic-types.yang.j2": endless}, "endless")
    before = snapshot(tmp_path)
    program = ("from fabricgen.cli import main; "
               f"main(['validate', '--fetch-models', '202411', '--repo', {str(mirror)!r}])")
    process = subprocess.Popen([sys.executable, "-c", program], cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (renderers := _processes_mentioning("fabricgen.validate.templates", str(cache))) and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    [renderer] = renderers
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == -signal.SIGTERM
    assert _ended_within(renderer, seconds=10)
    assert snapshot(tmp_path) == before  # no work folder, the earlier models as they were
