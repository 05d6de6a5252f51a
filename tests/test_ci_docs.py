"""The CI pipelines of docs/ci/ run: every shell step of docs/ci/github-actions.yml (`run:`) and of
docs/ci/gitlab-ci.yml (`before_script:` + `script:`), in a git repository holding a copy of the bundled example
(intent/, inventory/, the rendered tree out/) where a pull request changes the RDMA class's ECN kmax.

Only the install step is replaced (fabricgen is the one under test, on PATH from this venv). What the CI
service provides is stood in for: its environment variables, `gh` (a script that keeps what it was asked to
post) and GitLab's notes API (an HTTP server on localhost that keeps what curl posts)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs

import pytest
import yaml

import fabricgen

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "ci"
INSTALL = 'python -m pip install "$FABRICGEN"'
GITLAB_KEYWORDS = {"default", "include", "stages", "variables", "workflow"}  # top-level keys that are no job
KMAX_LINE = "| leaf1 | changed | config_db.json | queue 3 (rdma) ECN kmax 40 KB → 60 KB |"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
# The GitHub expressions the workflow's step env uses, as a pull_request event sets them.
GITHUB_EXPRESSIONS = {"${{ github.token }}": "test-token", "${{ github.event.pull_request.number }}": "7"}
FAKE_GH = """#!/bin/sh
# gh, as far as the workflow uses it: keep the arguments, the token and the body file.
printf '%s\\n' "$@" > "$FAKE_GH_LOG.args"
printf '%s' "$GH_TOKEN" > "$FAKE_GH_LOG.token"
while [ $# -gt 0 ]; do
  if [ "$1" = --body-file ]; then cp "$2" "$FAKE_GH_LOG.body"; fi
  shift
done
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, **GIT_ENV}).stdout.strip()


def render(repo: Path) -> None:
    subprocess.run([sys.executable, "-m", "fabricgen", "render", "intent/fabric.yaml", "-i", "inventory", "-o",
                    "out"], cwd=repo, capture_output=True, check=True)


def raise_kmax(repo: Path) -> None:
    intent = repo / "intent" / "fabric.yaml"
    old = "ecn: {min: 5KB, max: 40KB, probability: 10}"
    assert old in intent.read_text()
    intent.write_text(intent.read_text().replace(old, "ecn: {min: 5KB, max: 60KB, probability: 10}"))


@pytest.fixture(scope="module")
def pull_request_made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A repository whose branch `change` (checked out) raises kmax to 60 KB, intent and rendered tree
    committed, over `main` (also as origin/main, as a CI checkout has it). Returns it and main's commit.
    Made once (two renders); each test gets a copy of its own (`pull_request`)."""
    repo = tmp_path_factory.mktemp("pull-request") / "fabric"
    (repo / "intent").mkdir(parents=True)
    shutil.copy(ROOT / "intent" / "fabric.yaml", repo / "intent")
    (repo / "inventory").mkdir()
    for name in ("hosts.yaml", "groups.yaml", "defaults.yaml"):
        shutil.copy(ROOT / "inventory" / name, repo / "inventory")
    render(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the bundled example, rendered")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/remotes/origin/main", base)
    git(repo, "checkout", "-q", "-b", "change")
    raise_kmax(repo)
    render(repo)
    git(repo, "commit", "-q", "-am", "kmax 60 KB")
    return repo, base


@pytest.fixture
def pull_request(pull_request_made: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    made, base = pull_request_made
    repo = tmp_path / "fabric"
    shutil.copytree(made, repo, symlinks=True)
    return repo, base


def run_shell(script: str, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # GitHub runs a step as `bash -e {0}`; GitLab's bash runs a job's lines under `set -eo pipefail`.
    return subprocess.run(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", script], cwd=repo,
                          env=env, capture_output=True, text=True, check=False)


def path_with(*folders: Path) -> str:
    """PATH with these first, then this venv's bin (the `fabricgen` under test), then the system's."""
    return os.pathsep.join([*(str(f) for f in folders), str(Path(sys.executable).parent), os.environ["PATH"]])


# --- GitHub Actions -----------------------------------------------------------------------------------------------

def github_steps(workflow: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(job, script, env) of every `run:` step but the install, which each job must have exactly once."""
    for job_name, job in workflow["jobs"].items():
        runs = [step for step in job["steps"] if "run" in step]
        assert [step["run"] for step in runs if "pip install" in step["run"]] == [INSTALL], job_name
        for step in runs:
            if step["run"] != INSTALL:
                env = {**workflow.get("env", {}), **job.get("env", {}), **step.get("env", {})}
                yield job_name, step["run"], {k: GITHUB_EXPRESSIONS.get(v, v) for k, v in env.items()}


def github_env(repo: Path, tmp_path: Path) -> dict[str, str]:
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir(exist_ok=True)
    (fake_bin / "gh").write_text(FAKE_GH)
    (fake_bin / "gh").chmod(0o755)
    return {**os.environ, **GIT_ENV, "PATH": path_with(fake_bin), "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_BASE_REF": "main", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "FAKE_GH_LOG": str(tmp_path / "gh")}


def test_github_actions_steps_lint_plan_comment_and_check_the_tree(pull_request: tuple[Path, str],
                                                                    tmp_path: Path) -> None:
    repo, _ = pull_request
    workflow = yaml.safe_load((DOCS / "github-actions.yml").read_text())
    steps = list(github_steps(workflow))
    assert [job for job, _, _ in steps] == ["lint", "plan", "render-check"]
    for job, script, step_env in steps:
        done = run_shell(script, repo, {**github_env(repo, tmp_path), **step_env})
        assert done.returncode == 0, f"{job}: {script}\n{done.stdout}\n{done.stderr}"
    sarif = json.loads((repo / "fabricgen.sarif").read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["tool"]["driver"]["name"] == "fabricgen"
    plan = (repo / "plan.md").read_text()
    assert plan.startswith("### fabricgen plan: 4 of 9 devices change: 4 changed, 0 added, 0 removed\n")
    assert KMAX_LINE in plan
    assert (tmp_path / "summary.md").read_text() == plan
    assert (tmp_path / "gh.args").read_text().splitlines() == ["pr", "comment", "7", "--body-file", "plan.md",
                                                               "--edit-last", "--create-if-none"]
    assert ((tmp_path / "gh.body").read_text(), (tmp_path / "gh.token").read_text()) == (plan, "test-token")


def test_github_render_check_fails_on_a_tree_not_rendered_again(pull_request: tuple[Path, str],
                                                                 tmp_path: Path) -> None:
    repo, _ = pull_request
    intent = repo / "intent" / "fabric.yaml"
    intent.write_text(intent.read_text().replace("max: 60KB", "max: 80KB"))
    git(repo, "commit", "-q", "-am", "kmax 80 KB, out/ not rendered again")
    [(_, script, step_env)] = [step for step in github_steps(yaml.safe_load((DOCS / "github-actions.yml")
                                                                            .read_text()))
                               if step[0] == "render-check"]
    done = run_shell(script, repo, {**github_env(repo, tmp_path), **step_env})
    assert done.returncode == 1
    assert "::error::out/ is not what fabricgen renders" in done.stdout
    assert '+            "green_max_threshold": "80000",' in done.stdout


# --- GitLab CI ----------------------------------------------------------------------------------------------------

class _NotesApi(BaseHTTPRequestHandler):
    """GitLab's POST /projects/:id/merge_requests/:iid/notes, keeping each request."""

    received: ClassVar[list[tuple[str, str, dict[str, list[str]]]]]

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        form = parse_qs(self.rfile.read(length).decode())
        type(self).received.append((self.path, self.headers["PRIVATE-TOKEN"], form))
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"id": 1}')

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the test reads what was received


@pytest.fixture
def notes_api() -> Iterator[tuple[str, list[tuple[str, str, dict[str, list[str]]]]]]:
    received: list[tuple[str, str, dict[str, list[str]]]] = []
    handler = type("NotesApi", (_NotesApi,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/v4", received
    finally:
        server.shutdown()
        server.server_close()


def gitlab_jobs(pipeline: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(job, shell script) of every job: its variables exported, then before_script (less the install, which
    each job must have exactly once) and script."""
    for name, job in pipeline.items():
        if name.startswith(".") or name in GITLAB_KEYWORDS:
            continue
        merged = {**pipeline.get(job.get("extends", ""), {}), **job}
        before = merged.get("before_script", [])
        assert [line for line in before if "pip install" in line] == [INSTALL], name
        variables = {**pipeline.get("variables", {}), **merged.get("variables", {})}
        exports = [f'export {key}="{value}"' for key, value in variables.items()]
        yield name, "\n".join([*exports, *(line for line in before if line != INSTALL), *merged["script"]])


def test_gitlab_ci_jobs_lint_plan_note_and_check_the_tree(pull_request: tuple[Path, str], notes_api: tuple[
        str, list[tuple[str, str, dict[str, list[str]]]]]) -> None:
    repo, base = pull_request
    api, received = notes_api
    env = {**os.environ, **GIT_ENV, "PATH": path_with(), "CI_PROJECT_DIR": str(repo),
           "CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_DIFF_BASE_SHA": base,
           "CI_API_V4_URL": api, "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "7",
           "FABRICGEN_NOTE_TOKEN": "note-token"}
    jobs = list(gitlab_jobs(yaml.safe_load((DOCS / "gitlab-ci.yml").read_text())))
    assert [name for name, _ in jobs] == ["lint", "plan", "render-check"]
    for name, script in jobs:
        done = run_shell(script, repo, env)
        assert done.returncode == 0, f"{name}: {script}\n{done.stdout}\n{done.stderr}"
    plan = (repo / "plan.md").read_text()
    assert plan.startswith("### fabricgen plan: 4 of 9 devices change") and KMAX_LINE in plan
    assert received == [("/api/v4/projects/42/merge_requests/7/notes", "note-token", {"body": [plan]})]
    assert json.loads((repo / "fabricgen.sarif").read_text())["version"] == "2.1.0"
    assert any((repo / ".cache" / "fabricgen").iterdir())  # the parse cache went where the job caches it


def test_the_install_step_takes_fabricgen_from_a_checkout_at_this_release(tmp_path: Path) -> None:
    """No package index carries fabricgen: both pipelines install its checkout (a submodule at a release tag,
    whose tag the comment names), and pip takes that path as it stands. Checked with pip's --dry-run on this
    checkout as ./fabricgen (the dependencies are not fetched: --no-deps)."""
    version = fabricgen.__version__
    sources = set()
    for name, variables in (("github-actions.yml", "env"), ("gitlab-ci.yml", "variables")):
        text = (DOCS / name).read_text()
        sources.add(yaml.safe_load(text)[variables]["FABRICGEN"])
        assert "fabricgen==" not in text, name
        assert f"checkout\n  # v{version};" in text and f"/fabricgen.git@v{version}\n" in text, name
    assert sources == {"./fabricgen"}
    (tmp_path / "fabricgen").symlink_to(ROOT)
    done = run_shell(f"{INSTALL} --dry-run --no-deps --no-build-isolation", tmp_path,
                     {**os.environ, "FABRICGEN": "./fabricgen", "PATH": path_with()})
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Would install fabricgen-{version}" in done.stdout


def test_docs_ci_md_shows_each_pipeline_file_as_it_is() -> None:
    page = (ROOT / "docs" / "ci.md").read_text()
    for name in ("github-actions.yml", "gitlab-ci.yml"):
        assert f"[ci/{name}](ci/{name})" in page
        assert f"```yaml\n{(DOCS / name).read_text()}```\n" in page, f"docs/ci.md: copy docs/ci/{name} again"
