"""Every error of the command line is one line on stderr, with its documented exit
code and, where one is known, the fix: no traceback for a user's mistake.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import click
import pytest
from click.types import FloatParamType, IntParamType
from support.cli import run
from support.store_kinds import Fresh

from sitemap_middleware import Entry, open_store
from sitemap_middleware.cli import Exit, main
from sitemap_middleware.cli.site import Number, fail
from sitemap_middleware.stores.contract import Present

BASE = "https://www.example.com"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def uri(uri: str) -> str:
    """A SQLite store of one page."""
    store = open_store(uri)
    store.upsert([Entry("/", datetime(2024, 5, 1, tzinfo=timezone.utc))])
    store.close()
    return uri


def _one_line(err: str) -> str:
    assert err.startswith("Error: ")
    assert err.count("\n") == 1, err
    return err


def test_export_into_a_folder_that_cannot_be_made(uri: str, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    target = tmp_path / "file" / "sitemaps"
    code, _, err = run("export", "--store", uri, "--base-url", BASE, str(target))
    assert code == Exit.USAGE
    assert _one_line(err) == f"Error: {target}: Not a directory\n"


def test_a_sqlite_uri_with_two_slashes_names_the_fix() -> None:
    """The hint the config check gives, not 'no store at ...'."""
    for args in (("stats",), ("list", "--base-url", BASE)):
        code, _, err = run(*args, "--store", "sqlite://x.db")
        assert code == Exit.USAGE
        assert _one_line(err).endswith(
            "; did you mean 'sqlite:///x.db' (three slashes before a relative path)?\n"
        )


def test_a_usage_error_is_one_line_naming_the_help() -> None:
    code, _, err = run("list", "--store", "memory://")
    assert code == Exit.USAGE
    assert _one_line(err) == (
        "Error: Missing option '--base-url'. (see 'main list --help')\n"
    )
    code, _, err = run("nothing")
    assert code == Exit.USAGE
    assert "No such command 'nothing'" in _one_line(err)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("stats", "--store", "bogus://x"), Exit.USAGE),
        (("list", "--store", "memory://", "--base-url", "nope"), Exit.USAGE),
        (("stats", "--store", "sqlite:///does/not/exist.db"), Exit.STORE),
        (
            ("import", "--store", "memory://", "--base-url", BASE, "/nope.xml"),
            Exit.SOURCE,
        ),
        (("import", "--store", "memory://", "--base-url", BASE, "."), Exit.SOURCE),
        (("verify", "--app", "no_such_module:app"), Exit.APP),
        (("prune", "--store", "memory://"), Exit.USAGE),
    ],
)
def test_a_bad_input_is_one_line_as_a_real_process(
    args: tuple[str, ...], code: int, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", *args],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == code, done.stderr
    _one_line(done.stderr)


# Every numeric option of every command, found by its type: one added later
# (a FloatRange, an int) is held to the same rule.
NUMERIC = [
    (name, option.opts[0])
    for name, command in sorted(main.commands.items())
    for option in command.params
    if isinstance(option, click.Option)
    and isinstance(option.type, Number | FloatParamType | IntParamType)
]


def test_every_numeric_option_is_found() -> None:
    assert ("report", "--stale-after") in NUMERIC


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400", "-1", "0"])
@pytest.mark.parametrize(("name", "option"), NUMERIC)
def test_a_number_that_means_nothing_is_a_usage_error(
    name: str, option: str, value: str, uri: str
) -> None:
    """nan passes click's FloatRange (it compares false to any bound), and
    inf too: a traceback deep in the command, exit 1."""
    code, out, err = run(name, "--store", uri, "--base-url", BASE, f"{option}={value}")
    assert code == Exit.USAGE
    assert out == ""
    assert _one_line(err).startswith(f"Error: Invalid value for '{option}': ")


def test_fail_prints_one_line_whatever_the_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """libpq's connection errors, an exception's repr: lines folded."""
    with pytest.raises(SystemExit) as stopped:
        fail(
            "connection failed: refused\n\tIs the server running?\r\n  (x)  ",
            Exit.STORE,
        )
    assert stopped.value.code == Exit.STORE
    err = capsys.readouterr().err
    assert err == "Error: connection failed: refused Is the server running? (x)\n"


@pytest.mark.parametrize(
    "command",
    [
        ("stats",),
        ("list",),
        ("export", "out"),
        ("remove", f"{BASE}/"),
        ("verify", "--dry-run"),
        ("prune", "--dry-run"),
        ("report",),
        ("explain", f"{BASE}/"),
    ],
    ids=" ".join,
)
def test_a_missing_store_of_the_app_is_refused_not_made(
    command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As without --app: exit 3, and no file made by looking."""
    path = tmp_path / "never.sqlite3"
    name = _flask_app(tmp_path, monkeypatch, f"sqlite:///{path}")
    code, _, err = run(*command, "--app", name)
    assert (code, path.exists()) == (Exit.STORE, False)
    assert f"no store at sqlite:///{path}" in _one_line(err)


def _flask_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str) -> str:
    """The --app value of a Flask app recording into ``store``, written in
    ``tmp_path`` (the working folder)."""
    name = f"missing_{abs(hash(str(tmp_path))):x}"
    (tmp_path / f"{name}.py").write_text(
        "from flask import Flask\n"
        "from sitemap_middleware import SitemapMiddleware\n"
        "app = Flask(__name__)\n"
        "app.wsgi_app = SitemapMiddleware(app.wsgi_app, {"
        f"'base_url': {BASE!r}, 'store': {store!r}}})\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return name


def _foreign(path: Path) -> Path:
    """Another app's SQLite database: a table of its own, no sitemap."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    return path


def _tables(path: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [name for (name,) in conn.execute("SELECT name FROM sqlite_master")]
    finally:
        conn.close()


# The commands that read the store (and remove, which needs one): each refuses
# a store that holds no sitemap.
READING = [
    ("stats",),
    ("list",),
    ("export", "out"),
    ("remove", f"{BASE}/"),
    ("prune", "--dry-run"),
    ("prune", "--check"),
    ("report",),
    ("explain", f"{BASE}/"),
]


@pytest.mark.parametrize("command", READING, ids=" ".join)
def test_a_database_that_holds_no_sitemap_is_refused_not_given_one(
    command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another app's SQLite file named by mistake: exit 3 naming it, and none
    of the store's tables made in it by looking."""
    monkeypatch.chdir(tmp_path)
    path = _foreign(tmp_path / "app.db")
    code, out, err = run(*command, "--store", f"sqlite:///{path}", "--base-url", BASE)
    assert (code, out, _tables(path)) == (Exit.STORE, "", ["users"])
    assert f"no store at sqlite:///{path} (it holds no sitemap store" in _one_line(err)


@pytest.mark.parametrize(
    "command", [("stats",), ("verify", "--dry-run"), ("explain", f"{BASE}/")]
)
def test_with_the_app_a_database_that_holds_no_sitemap_is_refused(
    command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = tmp_path / "sitemap.sqlite3"
    name = _flask_app(tmp_path, monkeypatch, f"sqlite:///{own}")
    path = _foreign(tmp_path / "app.db")
    code, _, err = run(*command, "--app", name, "--store", f"sqlite:///{path}")
    assert (code, _tables(path), own.exists()) == (Exit.STORE, ["users"], False)
    assert "holds no sitemap store" in _one_line(err)


def test_a_command_that_writes_makes_the_store_in_any_database(
    tmp_path: Path,
) -> None:
    """import is a writer, as the middleware is: it makes the store's tables
    beside another app's, which then hold a sitemap store."""
    path = _foreign(tmp_path / "app.db")
    source = tmp_path / "urls.txt"
    source.write_text(f"{BASE}/\n")
    store = f"sqlite:///{path}"
    code, _, err = run("import", str(source), "--store", store, "--base-url", BASE)
    assert code == Exit.OK, err
    assert {"users", "sitemap_meta", "sitemap_url"} <= set(_tables(path))
    code, out, _ = run("stats", "--store", store)
    assert (code, out.split()[0]) == (Exit.OK, "1")


@pytest.mark.parametrize("kind", ["postgres", "redis"])
def test_a_prefix_nothing_was_recorded_under_is_refused_not_made(
    kind: str, fresh: Fresh
) -> None:
    """A server's store under a mistyped table or key prefix: exit 3, and no
    table or key made for it by looking."""
    uri = fresh.uri(kind)
    for command in (("stats",), ("list", "--base-url", BASE)):
        code, _, err = run(*command, "--store", uri)
        assert code == Exit.STORE
        assert "holds no sitemap store" in _one_line(err)
    store = open_store(uri)
    try:
        assert isinstance(store, Present) and not store.present()
    finally:
        store.close()
