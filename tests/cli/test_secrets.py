"""No command prints a store URI's password: every store command and every command
that loads the app, against Redis and PostgreSQL servers that are not there and
against a URI with a bad option, fails in one ``Error:`` line with the documented
exit code, the password masked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitemap_middleware.cli import Exit, main

ROOT = Path(__file__).resolve().parents[2]
BASE = "http://127.0.0.1:8000"  # the example apps' base_url
APP = "flask_app:create_app"
SECRETS = ("SECRETPW", "SECRETPW2")
# Port 1: nothing listens there, so the store is unreachable at once.
REDIS = "redis://:SECRETPW@127.0.0.1:1/0"
POSTGRES = "postgresql://u:SECRETPW@127.0.0.1:1/db?password=SECRETPW2"

UNREACHABLE = [REDIS, POSTGRES]
BAD_OPTION = [
    f"{REDIS}?bogus=1",
    f"{REDIS}?part_size=many",
    "postgresql://u:SECRETPW@127.0.0.1:1/db?part_size=many&password=SECRETPW2",
    "sqlite:///s.db?bogus=1&password=SECRETPW",
    "nosuch://u:SECRETPW@host/x",
]


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    """Each command's arguments but ``--store``."""
    source = tmp_path / "sitemap.txt"
    source.write_text(f"{BASE}/a\n")
    # There: the commands that read a store refuse a missing SQLite file first.
    (tmp_path / "s.db").touch()
    return {
        "stats": ["stats"],
        "list": ["list", "--base-url", BASE],
        "remove": ["remove", "--base-url", BASE, f"{BASE}/a"],
        "export": ["export", "--base-url", BASE, str(tmp_path / "out")],
        "import": ["import", "--base-url", BASE, str(source)],
        "report": ["report", "--base-url", BASE],
        "report --app": ["report", "--app", APP],
        "explain": ["explain", "--base-url", BASE, f"{BASE}/a"],
        "explain --app": ["explain", "--app", APP, f"{BASE}/a"],
        "prune": ["prune", "--app", APP, "--yes"],
        "seed": ["seed", "--app", APP],
        "verify": ["verify", "--app", APP, "--yes"],
    }


COMMANDS = [
    "stats",
    "list",
    "remove",
    "export",
    "import",
    "report",
    "report --app",
    "explain",
    "explain --app",
    "prune",
    "seed",
    "verify",
]


def _failed(args: list[str]) -> int:
    """The exit code of a command that fails in one line, naming no secret."""
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    for secret in SECRETS:
        assert secret not in result.stdout + result.stderr
    assert result.stderr.startswith("Error: "), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.exit_code


def _process(args: list[str], cwd: Path) -> int:
    """As :func:`_failed`, in a process of its own: what the app's recorder
    logs on its way goes to this stderr too (its outage warning comes before
    the error, a line of its own)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "examples")])}
    done = subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    for secret in SECRETS:
        assert secret not in done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, done.stderr
    assert done.stderr.endswith(f"{errors[0]}\n"), done.stderr
    return done.returncode


@pytest.mark.parametrize("uri", UNREACHABLE, ids=["redis", "postgresql"])
@pytest.mark.parametrize("command", COMMANDS)
def test_an_unreachable_store_is_named_without_its_password(
    command: str, uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = [*_commands(tmp_path)[command], "--store", uri]
    # The app's commands start its recorder, which logs the outage.
    code = _process(args, tmp_path) if "--app" in args else _failed(args)
    assert code == Exit.STORE


@pytest.mark.parametrize("uri", BAD_OPTION)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_store_uri_is_shown_without_its_password(
    command: str, uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _failed([*_commands(tmp_path)[command], "--store", uri]) == Exit.USAGE
