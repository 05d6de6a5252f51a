"""A real Nautobot for the tests: PostgreSQL and Redis from Debian and PyPI's `nautobot`, started on loopback.

    lab = NautobotLab.start(workdir)      # initdb, postgres, redis, schema, runserver; migrate, admin, token
    ...                                   # lab.url, lab.token, lab.migrate_output
    lab.stop()

Nautobot's ~430 migrations take minutes from nothing (about 35 on a loaded 2-core machine), so the tests start
from a migrated, still empty database kept in the repository: ``tests/nautobot_schema/nautobot-<version>.sql.gz``,
a plain pg_dump (no owner, no grants; migrations' own rows only: no user, token or object). Each start restores
it and then runs ``nautobot-server migrate`` anyway, whose output the tests check says "No migrations to apply":
the fixture is the pinned nautobot's schema. After changing the pinned version (pyproject.toml, the
``nautobot-server`` extra), make the new fixture with

    .venv/bin/python tests/nautobot_lab.py schema

which migrates a fresh database from nothing (the half hour above) and writes the file.

Everything lives under ``workdir`` and listens on 127.0.0.1 only, on ports the kernel picked free. PostgreSQL
refuses to run as root, so when the tests run as root its cluster belongs to the `postgres` user and is
started through runuser. ``missing()`` says what is absent on this machine, for the test's skip reason.
"""

from __future__ import annotations

import argparse
import base64
import gzip
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
SCHEMA_DIR = Path(__file__).resolve().with_name("nautobot_schema")


def _nautobot_server() -> Path:
    return Path(sys.executable).with_name("nautobot-server")


def _pg(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    return str(candidates[-1]) if candidates else None


def missing() -> str | None:
    """Why a Nautobot cannot be started here for the tests, or None."""
    why = missing_tools()
    if why is None and not schema_fixture().exists():
        where = schema_fixture().relative_to(SCHEMA_DIR.parent.parent)
        why = f"no migrated schema for the installed nautobot: {where} (make it: python tests/nautobot_lab.py schema)"
    return why


def missing_tools() -> str | None:
    """Why a Nautobot cannot run here at all, or None."""
    for tool in ("initdb", "postgres"):
        if _pg(tool) is None:
            return f"PostgreSQL's {tool} is not installed (Debian: postgresql)"
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (Debian: redis-server)"
    if not _nautobot_server().exists():
        return "nautobot is not installed in this environment (pip install -e '.[nautobot-server]')"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: PostgreSQL cannot be started"
    for tool in ("psql", "pg_dump"):
        if _pg(tool) is None:
            return f"PostgreSQL's {tool} is not installed (Debian: postgresql-client)"
    return None


def schema_fixture() -> Path:
    """The migrated empty database of the installed nautobot version, as kept in the repository."""
    from importlib.metadata import version

    return SCHEMA_DIR / f"nautobot-{version('nautobot')}.sql.gz"


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
# Nautobot's run-time settings (django-constance) fixed at their defaults as plain settings, which Nautobot reads
# first: otherwise each read is a Redis round trip, tens per object saved.
for _name, _item in CONSTANCE_CONFIG.items():  # noqa: F405
    globals().setdefault(_name, _item.default)
"""


PROVISIONED = "--- fabricgen: provisioned:"
PROVISION = """\
from django.core.management import call_command
from django.contrib.auth import get_user_model
from nautobot.users.models import Token
call_command("migrate", interactive=False)
user = get_user_model().objects.create_superuser({admin!r}, "admin@example.invalid", {password!r})
Token.objects.create(user=user, key={token!r}, description="fabricgen tests")
print({marker!r}, "ok")
""".replace("{marker!r}", repr(PROVISIONED))


@dataclass
class NautobotLab:
    workdir: Path
    url: str = ""
    token: str = ""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    pg_dir: Path | None = None
    pg_port: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    migrate_output: str = ""

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
        redis_port, web_port = free_port(), free_port()
        env = self._database(redis_port)
        self._timed("restore", self._restore)
        # The web server loads while migrate checks the restored schema and the admin and its token are made
        # (one nautobot-server process for the three: each start of Django costs seconds).
        self.url = f"http://127.0.0.1:{web_port}"
        self._spawn([str(_nautobot_server()), "--config", str(self.workdir / "nautobot_config.py"), "runserver",
                     "--noreload", "--insecure", f"127.0.0.1:{web_port}"], "nautobot.log", env)
        self._timed("migrate", lambda: self._provision(env))
        self._timed("runserver", self._wait_for_api)

    def _provision(self, env: dict[str, str]) -> None:
        """`migrate` (its output kept for the tests), then the admin and an API token for it."""
        self.token = os.urandom(20).hex()
        script = PROVISION.format(admin=ADMIN, password=ADMIN_PASSWORD, token=self.token)
        output = self._manage(["shell", "--no-startup", "--command", script], env, 600)
        self.migrate_output, _, tail = output.rpartition(PROVISIONED)
        if tail.strip() != "ok":
            raise RuntimeError(f"provisioning Nautobot failed:\n{output[-3000:]}")

    def _database(self, redis_port: int) -> dict[str, str]:
        """PostgreSQL with an empty `nautobot` database, Redis, and Nautobot's configuration: what both the tests
        and `schema` need before the database has a schema. Returns Nautobot's environment."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.pg_port = free_port()
        self._timed("postgres", lambda: self._postgres(self.pg_port))
        self._spawn(["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "",
                     "--appendonly", "no"], "redis.log")
        config = self.workdir / "nautobot_config.py"
        for name in ("media", "static", "git", "jobs"):
            (self.workdir / name).mkdir(exist_ok=True)
        config.write_text(CONFIG.format(secret=base64.b64encode(os.urandom(48)).decode(), pg_port=self.pg_port,
                                        redis_port=redis_port, **{name: str(self.workdir / name) for name in
                                                                 ("media", "static", "git", "jobs")}))
        return self.env()

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

    def _client(self) -> list[str]:
        return ["-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "nautobot", "-d", "nautobot"]

    def _restore(self) -> None:
        """The repository's migrated schema of this nautobot version, into the empty database."""
        done = subprocess.run([str(_pg("psql")), "-X", "-q", "-v", "ON_ERROR_STOP=1", *self._client()],
                              input=gzip.decompress(schema_fixture().read_bytes()), capture_output=True, timeout=600)
        if done.returncode:
            raise RuntimeError(f"restoring {schema_fixture()} failed: {done.stderr.decode(errors='replace')[-2000:]}")

    def _migrate(self, env: dict[str, str], timeout: int = 600) -> None:
        self.migrate_output = self._manage(["migrate", "--no-input"], env, timeout)

    def dump_schema(self, to: Path) -> None:
        """The database as it is now, as a plain SQL dump without owners or grants, gzip'd reproducibly."""
        done = subprocess.run([str(_pg("pg_dump")), *self._client(), "--no-owner", "--no-privileges"],
                              capture_output=True, check=True, timeout=600)
        to.parent.mkdir(parents=True, exist_ok=True)
        with to.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as out:
            out.write(done.stdout)

    def _spawn(self, command: list[str], log: str, env: dict[str, str] | None = None) -> None:
        handle = (self.workdir / log).open("ab")  # the process's log, open as long as it runs
        self.processes.append(subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env,
                                               start_new_session=True))

    def _manage(self, args: list[str], env: dict[str, str], timeout: int) -> str:
        done = subprocess.run([str(_nautobot_server()), "--config", str(self.workdir / "nautobot_config.py"),
                               *args], capture_output=True, text=True, env=env, timeout=timeout)
        if done.returncode:
            raise RuntimeError(f"nautobot-server {args[0]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done.stdout

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


def make_schema() -> Path:
    """Migrate a fresh, empty database with the installed nautobot and keep it as this version's fixture."""
    with tempfile.TemporaryDirectory(prefix="fabricgen-nautobot-schema-") as workdir:
        lab = NautobotLab(Path(workdir))
        try:
            env = lab._database(free_port())
            lab._timed("migrate", lambda: lab._migrate(env, timeout=4 * 3600))
            lab.dump_schema(schema_fixture())
        finally:
            lab.stop()
    print(f"{schema_fixture()}: {schema_fixture().stat().st_size:,} bytes; migrate took {lab.timings['migrate']:.0f} s")
    return schema_fixture()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["schema"], help="schema: write tests/nautobot_schema/nautobot-<version>"
                        ".sql.gz from a fresh migration of the installed nautobot")
    parser.parse_args()
    why = missing_tools()
    if why is not None:
        sys.exit(why)
    make_schema()


if __name__ == "__main__":
    main()
