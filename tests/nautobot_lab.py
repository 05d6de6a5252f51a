"""A real Nautobot for the tests: PostgreSQL and Redis from Debian and PyPI's `nautobot`, started on loopback.

    lab = NautobotLab.start(workdir)      # initdb, postgres, redis, migrate, superuser, runserver, API token
    ...                                   # lab.url, lab.token
    lab.stop()

Everything lives under ``workdir`` and listens on 127.0.0.1 only, on ports the kernel picked free. PostgreSQL
refuses to run as root, so when the tests run as root its cluster belongs to the `postgres` user and is
started through runuser. ``missing()`` says what is absent on this machine, for the test's skip reason.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")
ADMIN, ADMIN_PASSWORD = "admin", "fabricgen-test-only"


def _nautobot_server() -> Path:
    return Path(sys.executable).with_name("nautobot-server")


def _pg(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    return str(candidates[-1]) if candidates else None


def missing() -> str | None:
    """Why a Nautobot cannot be started here, or None."""
    for tool in ("initdb", "postgres"):
        if _pg(tool) is None:
            return f"PostgreSQL's {tool} is not installed (Debian: postgresql)"
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (Debian: redis-server)"
    if not _nautobot_server().exists():
        return "nautobot is not installed in this environment (pip install -e '.[nautobot-server]')"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: PostgreSQL cannot be started"
    return None


def migrated_dump() -> Path:
    """Where the migrated empty database of this nautobot version is kept (FABRICGEN_NAUTOBOT_CACHE, else
    ~/.cache/fabricgen/nautobot)."""
    from importlib.metadata import version

    root = Path(os.environ.get("FABRICGEN_NAUTOBOT_CACHE") or Path.home() / ".cache" / "fabricgen" / "nautobot")
    return root / f"nautobot-{version('nautobot')}-migrated.pgdump"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


CONFIG = """\
# Written by tests/nautobot_lab.py for one test session; loopback only.
from nautobot.core.settings import *  # noqa: F403
from nautobot.core.settings_funcs import parse_redis_connection

ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
SECRET_KEY = {secret!r}
DATABASES = {{"default": {{"ENGINE": "django.db.backends.postgresql", "NAME": "nautobot", "USER": "nautobot",
                          "PASSWORD": "", "HOST": "127.0.0.1", "PORT": {pg_port}, "CONN_MAX_AGE": 300}}}}
CACHES = {{"default": {{"BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://127.0.0.1:{redis_port}/0",
                       "TIMEOUT": 300, "OPTIONS": {{"CLIENT_CLASS": "django_redis.client.DefaultClient"}}}}}}
CELERY_BROKER_URL = "redis://127.0.0.1:{redis_port}/1"
CELERY_RESULT_BACKEND = "redis://127.0.0.1:{redis_port}/2"
DEBUG = False
MEDIA_ROOT = {media!r}
STATIC_ROOT = {static!r}
GIT_ROOT = {git!r}
JOBS_ROOT = {jobs!r}
INSTALLATION_METRICS_ENABLED = False
METRICS_ENABLED = False
"""


@dataclass
class NautobotLab:
    workdir: Path
    url: str = ""
    token: str = ""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    pg_dir: Path | None = None
    timings: dict[str, float] = field(default_factory=dict)

    @classmethod
    def start(cls, workdir: Path) -> NautobotLab:
        lab = cls(workdir)
        try:
            lab._start()
        except BaseException:
            lab.stop()
            raise
        return lab

    def _start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        pg_port, redis_port, web_port = free_port(), free_port(), free_port()
        self._timed("postgres", lambda: self._postgres(pg_port))
        self._spawn(["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "",
                     "--appendonly", "no"], "redis.log")
        config = self.workdir / "nautobot_config.py"
        for name in ("media", "static", "git", "jobs"):
            (self.workdir / name).mkdir(exist_ok=True)
        config.write_text(CONFIG.format(secret=base64.b64encode(os.urandom(48)).decode(), pg_port=pg_port,
                                        redis_port=redis_port, **{name: str(self.workdir / name) for name in
                                                                 ("media", "static", "git", "jobs")}))
        env = self.env()
        self._timed("migrate", lambda: self._migrate(pg_port, env))
        self._manage(["createsuperuser", "--no-input", "--username", ADMIN, "--email", "admin@example.invalid"],
                     {**env, "DJANGO_SUPERUSER_PASSWORD": ADMIN_PASSWORD}, 300)
        self.url = f"http://127.0.0.1:{web_port}"
        self._spawn([str(_nautobot_server()), "--config", str(config), "runserver", "--noreload", "--insecure",
                     f"127.0.0.1:{web_port}"], "nautobot.log", env)
        self._timed("runserver", self._wait_for_api)
        self.token = self._provision_token()

    def env(self) -> dict[str, str]:
        return {**os.environ, "NAUTOBOT_CONFIG": str(self.workdir / "nautobot_config.py"),
                "NAUTOBOT_ROOT": str(self.workdir)}

    def _timed(self, name: str, step: object) -> None:
        started = time.monotonic()
        step()  # type: ignore[operator]
        self.timings[name] = time.monotonic() - started

    def _as_postgres(self, command: list[str]) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command

    def _postgres(self, port: int) -> None:
        # A directory of its own under the system's temporary directory: the `postgres` user must reach it, and
        # pytest's temporary directories are private to the user running the tests.
        self.pg_dir = Path(tempfile.mkdtemp(prefix="fabricgen-nautobot-pg-"))
        data = self.pg_dir / "data"
        data.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.pg_dir, "postgres")
            shutil.chown(data, "postgres")
        done = subprocess.run(self._as_postgres([str(_pg("initdb")), "-D", str(data), "-U", "nautobot", "-A", "trust",
                                                 "--no-sync"]), capture_output=True, text=True, timeout=300)
        if done.returncode:
            raise RuntimeError(f"initdb failed: {done.stderr[-2000:]}")
        self._spawn(self._as_postgres([str(_pg("postgres")), "-D", str(data), "-h", "127.0.0.1", "-p", str(port),
                                       "-k", str(data), "-F", "-c", "fsync=off", "-c",
                                       "synchronous_commit=off", "-c", "full_page_writes=off"]), "postgres.log")
        deadline = time.monotonic() + 60
        while True:
            ready = subprocess.run(self._as_postgres(["createdb", "-h", "127.0.0.1", "-p", str(port), "-U",
                                                      "nautobot", "nautobot"]), capture_output=True,
                                   timeout=60, env={**os.environ, "PATH": f"{PG_BIN}:{os.environ['PATH']}"})
            if ready.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not start: {ready.stderr.decode(errors='replace')}")
            time.sleep(0.3)

    def _migrate(self, pg_port: int, env: dict[str, str]) -> None:
        """Nautobot's ~430 migrations take minutes (half an hour on a busy 2-core machine), so the migrated,
        still empty database is kept as a pg_dump per nautobot version (migrations only: no user, token or
        object) and restored by later sessions; `migrate` then runs as a check that finds nothing to do."""
        dump = migrated_dump()
        client = ["-h", "127.0.0.1", "-p", str(pg_port), "-U", "nautobot"]
        if dump.exists():
            subprocess.run([str(_pg("pg_restore")), *client, "-d", "nautobot", "--no-owner", str(dump)], check=True,
                           capture_output=True, timeout=600)
            self.timings["restored"] = 1.0
        self._manage(["migrate", "--no-input"], env, 3600)
        if not dump.exists():
            dump.parent.mkdir(parents=True, exist_ok=True)
            partial = dump.with_suffix(".partial")
            subprocess.run([str(_pg("pg_dump")), *client, "-Fc", "-f", str(partial), "nautobot"], check=True,
                           capture_output=True, timeout=600)
            partial.replace(dump)

    def _spawn(self, command: list[str], log: str, env: dict[str, str] | None = None) -> None:
        handle = (self.workdir / log).open("ab")  # the process's log, open as long as it runs
        self.processes.append(subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env,
                                               start_new_session=True))

    def _manage(self, args: list[str], env: dict[str, str], timeout: int) -> None:
        done = subprocess.run([str(_nautobot_server()), "--config", str(self.workdir / "nautobot_config.py"),
                               *args], capture_output=True, text=True, env=env, timeout=timeout)
        if done.returncode:
            raise RuntimeError(f"nautobot-server {args[0]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")

    def _wait_for_api(self) -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/api/status/", timeout=5):
                    return
            except urllib.error.HTTPError:
                return  # it answers (403 without a token): up
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"Nautobot did not answer on {self.url}: see {self.workdir / 'nautobot.log'}")

    def _provision_token(self) -> str:
        """An API token for the admin, made through the API itself (basic authentication, as Nautobot allows
        for /api/users/tokens/)."""
        basic = base64.b64encode(f"{ADMIN}:{ADMIN_PASSWORD}".encode()).decode()
        request = urllib.request.Request(f"{self.url}/api/users/tokens/", method="POST", data=json.dumps(
            {"description": "fabricgen tests"}).encode(), headers={
            "Authorization": f"Basic {basic}", "Content-Type": "application/json", "Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            return str(json.load(reply)["key"])

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.processes.clear()
        if self.pg_dir is not None:
            shutil.rmtree(self.pg_dir, ignore_errors=True)
