"""The commands that remove, verify and prune: a preview (--dry-run), a check that
changes nothing (--check), a brake before a run removes much of the store (asked
on a terminal, refused elsewhere, --yes), nothing removed before the whole run is
decided, each URL named with its reason, and --json for scripts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import demo_content
import pytest
from support.cli import run
from support.helpers import pending_pushes, stored_paths

from sitemap_middleware import Entry, open_store
from sitemap_middleware.cli import BRAKE_URLS, Exit
from sitemap_middleware.reasons import REMOVED

ROOT = Path(__file__).resolve().parents[2]
BASE = "http://127.0.0.1:8000"  # the examples' base_url
OLD = datetime(2020, 1, 1, tzinfo=timezone.utc)


def _stored(uri: str, *paths: str) -> None:
    store = open_store(uri)
    store.upsert([Entry(path, OLD, "print", route="/blog/<slug>") for path in paths])
    store.close()


def _gone(count: int) -> list[str]:
    """Posts that were public and answer 404 now."""
    return [f"/blog/deleted-{n}" for n in range(count)]


# -- verify ------------------------------------------------------------------------


def test_verify_dry_run_names_what_would_go_and_changes_nothing(
    example: str, uri: str
) -> None:
    _stored(uri, *demo_content.PUBLIC_PATHS, *_gone(3))
    before = stored_paths(uri)
    args = ("--app", f"{example}:create_app", "--store", uri)
    code, out, _ = run("verify", "--dry-run", *args)
    assert code == Exit.OK
    assert (
        f"would remove: {BASE}/blog/deleted-0: it answers an anonymous GET with 404"
        in out
    )
    assert out.endswith(
        f"verified {len(before)} URLs: 3 would be removed (nothing changed)\n"
    )
    assert stored_paths(uri) == before


def test_verify_stops_before_removing_much_of_the_store(example: str, uri: str) -> None:
    """Past a tenth of the store (and more than BRAKE_URLS URLs), a run with
    no terminal to ask fails with one line and its own exit code, having
    removed nothing; --yes goes on."""
    gone = _gone(BRAKE_URLS + 1)
    _stored(uri, *demo_content.PUBLIC_PATHS, *gone)
    before = stored_paths(uri)
    args = ("--app", f"{example}:create_app", "--store", uri)
    code, out, err = run("verify", *args)
    assert code == Exit.REFUSED
    assert out == ""
    assert err.count("\n") == 1
    assert f"would remove {len(gone)} of the {len(before)} URLs stored" in err
    assert "--dry-run" in err and "--yes" in err
    assert stored_paths(uri) == before
    assert _removed_count(uri) == 0  # nothing removed, nothing counted
    code, out, _ = run("verify", "--yes", *args)
    assert code == Exit.OK
    assert f"{len(gone)} removed" in out
    assert stored_paths(uri) == demo_content.PUBLIC_PATHS
    assert _removed_count(uri) == len(gone)


def _removed_count(uri: str) -> int:
    """The removals every worker and command counted in the store."""
    store = open_store(uri)
    try:
        return int(store.counts().get(REMOVED, 0))  # type: ignore[attr-defined]
    finally:
        store.close()


def test_verify_removes_a_few_without_asking(uri: str) -> None:
    _stored(uri, *demo_content.PUBLIC_PATHS, *_gone(BRAKE_URLS))
    code, out, _ = run("verify", "--app", "flask_app:create_app", "--store", uri)
    assert code == Exit.OK
    assert f"{BRAKE_URLS} removed" in out
    assert stored_paths(uri) == demo_content.PUBLIC_PATHS


def test_verify_json_gives_each_url_its_action_and_reason(uri: str) -> None:
    _stored(uri, "/about", "/gone", "/draft")
    args = ("--app", "flask_app:create_app", "--store", uri, "--json")
    code, out, _ = run("verify", "--check", *args)
    assert code == Exit.PROBLEMS
    found = json.loads(out)
    assert (found["verified"], found["would_remove"], found["changed"]) == (
        3,
        2,
        False,
    )
    urls = {row["url"]: row for row in found["urls"]}
    assert urls[f"{BASE}/gone"]["action"] == "would_remove"
    assert "410" in urls[f"{BASE}/gone"]["reason"]
    assert "noindex" in urls[f"{BASE}/draft"]["reason"]
    assert stored_paths(uri) == ["/about", "/draft", "/gone"]


@pytest.mark.slow
def test_verify_asks_on_a_terminal(uri: str) -> None:
    """On a terminal the brake is a question: no keeps the store, yes removes."""
    import pty

    gone = _gone(BRAKE_URLS + 1)
    _stored(uri, *demo_content.PUBLIC_PATHS, *gone)
    command = [
        sys.executable,
        "-m",
        "sitemap_middleware",
        "verify",
        "--app",
        "flask_app:create_app",
        "--store",
        uri,
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "examples")]),
    }
    for answer, code, left in (
        (b"n\n", Exit.REFUSED, len(demo_content.PUBLIC_PATHS) + len(gone)),
        (b"y\n", Exit.OK, len(demo_content.PUBLIC_PATHS)),
    ):
        leader, follower = pty.openpty()
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdin=follower,
            stdout=subprocess.DEVNULL,
            stderr=follower,
        )
        os.close(follower)
        seen = b""
        while b"Remove them?" not in seen:
            chunk = os.read(leader, 4096)
            assert chunk, seen
            seen += chunk
        os.write(leader, answer)
        assert process.wait(timeout=60) == code
        try:
            while os.read(leader, 4096):
                pass
        except OSError:  # the terminal closed with the process
            pass
        os.close(leader)
        assert len(stored_paths(uri)) == left


# -- prune -------------------------------------------------------------------------


def test_prune_previews_checks_and_brakes(uri: str) -> None:
    admin = [f"/admin/page-{n}" for n in range(BRAKE_URLS + 5)]
    _stored(uri, "/about", *admin)
    before = stored_paths(uri)
    args = ("--store", uri, "--base-url", BASE)
    code, out, _ = run("prune", "--dry-run", *args)
    assert code == Exit.OK
    assert (
        f"would remove: {BASE}/admin/page-0: excluded by exclude pattern "
        "'*/admin/*' (from default_exclude)" in out
    )
    assert f"{len(admin)} would be removed" in out and "(nothing changed)" in out
    assert stored_paths(uri) == before
    code, _, _ = run("prune", "--check", *args)
    assert code == Exit.PROBLEMS
    assert stored_paths(uri) == before
    code, out, err = run("prune", *args)
    assert (code, out, err.count("\n")) == (Exit.REFUSED, "", 1)
    assert stored_paths(uri) == before
    code, out, _ = run("prune", "--yes", "--json", *args)
    assert code == Exit.OK
    found = json.loads(out)
    assert (found["checked"], found["removed"]) == (len(before), len(admin))
    assert {row["action"] for row in found["urls"]} == {"removed"}
    assert stored_paths(uri) == ["/about"]
    # The config's digest is stored once the removals are made.
    code, out, _ = run("prune", "--check", *args)
    assert code == Exit.OK


# -- seed --------------------------------------------------------------------------


def test_seed_json(uri: str) -> None:
    code, out, _ = run(
        "seed", "--app", "flask_app:create_app", "--store", uri, "--json"
    )
    assert code == Exit.OK
    found = json.loads(out)
    assert found["recorded"] == len(demo_content.PUBLIC_PATHS)
    actions = {row["url"]: (row["action"], row["reason"]) for row in found["urls"]}
    assert actions[f"{BASE}/about"] == ("recorded", None)
    action, reason = actions[f"{BASE}/admin/"]
    assert action == "not_requested"
    assert "excluded by exclude pattern '*/admin/*'" in reason
    action, reason = actions[f"{BASE}/draft"]
    assert (action, "noindex" in reason) == ("not_recorded", True)


# -- two sites, news ---------------------------------------------------------------

FR = "https://fr.example.com"

# Two sites whose posts name each other as hreflang alternates, and are news
# articles; GONE: the paths that answer 404, RETITLED: those whose title changed.
TWO_SITES = """
from datetime import datetime, timedelta, timezone

from flask import Flask, abort, request
from sitemap_middleware import SitemapMiddleware

GONE = set()
RETITLED = set()
PUBLISHED = datetime.now(timezone.utc) - timedelta(hours=3)


def create_app():
    app = Flask(__name__)

    @app.get("/blog/<slug>")
    def post(slug):
        path = request.path
        if path in GONE:
            abort(404)
        title = f"Post {slug}" + " (updated)" * (path in RETITLED)
        return (
            "<!doctype html><html><head>"
            f"<title>{title}</title>"
            f'<link rel="alternate" hreflang="en" href="https://www.example.com{path}">'
            f'<link rel="alternate" hreflang="fr" href="https://fr.example.com{path}">'
            '<meta property="article:published_time" content="'
            f'{PUBLISHED:%Y-%m-%dT%H:%M:%SZ}">'
            f"</head><body><p>{title}</p></body></html>"
        )

    app.wsgi_app = SitemapMiddleware(app.wsgi_app, {
        "store": STORE,
        "sites": {
            "main": {"base_url": "https://www.example.com"},
            "fr": {"base_url": "https://fr.example.com"},
        },
        "news": {"pages": ["/blog/*"], "name": "Acme", "language": "en"},
    })
    return app
"""


@pytest.fixture
def two_sites(uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The module of :data:`TWO_SITES` on ``uri``, its posts visited on both
    sites."""
    import importlib

    from werkzeug.test import Client

    name = f"two_sites_{abs(hash(str(tmp_path))):x}"
    (tmp_path / f"{name}.py").write_text(f"STORE = {uri!r}\n" + TWO_SITES)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    app = module.create_app()
    client = Client(app)
    for base in (BASE_EN, FR):
        for path in ("/blog/first", "/blog/second"):
            with client.get(path, base_url=base) as response:
                response.get_data()  # recorded once the body is sent
    app.wsgi_app.close()
    return module


BASE_EN = "https://www.example.com"


def _names_alternate(uri: str, path: str, href: str) -> bool:
    """Whether the fr site's listing of ``path`` names ``href`` an alternate."""
    from sitemap_middleware.config import site_store

    store = open_store(site_store(uri, "fr"))
    try:
        body = b"".join(
            chunk for part in store.parts() for chunk in store.fragments(part.number)
        )
    finally:
        store.close()
    (url,) = [u for u in body.split(b"</url>") if f"\x00{path}<".encode() in u]
    return href.encode() in url


@pytest.mark.parametrize("command", ["remove", "verify"])
def test_a_removal_with_the_app_settles_the_other_site_s_cluster(
    two_sites: Any, uri: str, command: str
) -> None:
    """As a removal by the middleware: the fr page no longer names the removed
    page as its alternate."""
    spec = f"{two_sites.__name__}:create_app"
    assert _names_alternate(uri, "/blog/first", f"{BASE_EN}/blog/first")
    if command == "remove":
        code, _, err = run("remove", "--app", spec, f"{BASE_EN}/blog/first")
    else:
        two_sites.GONE.add("/blog/first")
        code, _, err = run("verify", "--yes", "--app", spec)
    assert code == Exit.OK, err
    assert "/blog/first" not in stored_paths(uri)
    assert not _names_alternate(uri, "/blog/first", f"{BASE_EN}/blog/first")
    assert _names_alternate(uri, "/blog/second", f"{BASE_EN}/blog/second")


def test_verify_updates_a_changed_article_s_news_title(
    two_sites: Any, uri: str
) -> None:
    """As a visit does: the page's title and its article's alike; a preview
    writes neither."""
    import time

    def titles() -> tuple[str | None, str]:
        store = open_store(uri)
        try:
            (entry,) = [
                e
                for p in store.parts()
                for e in store.entries(p.number)
                if e.path == "/blog/first"
            ]
            news = {a.path: a.title for a in store.news(int(time.time()) - 86400)}
        finally:
            store.close()
        return entry.title, news["/blog/first"]

    assert titles() == ("Post first", "Post first")
    two_sites.RETITLED.add("/blog/first")
    spec = f"{two_sites.__name__}:create_app"
    assert run("verify", "--dry-run", "--app", spec)[0] == Exit.OK
    assert titles() == ("Post first", "Post first")
    code, _, err = run("verify", "--yes", "--app", spec)
    assert code == Exit.OK, err
    assert titles() == ("Post first (updated)", "Post first (updated)")


def test_prune_withdraws_the_pending_push_of_what_it_removes(tmp_path: Path) -> None:
    """A URL the config refuses is never sent to IndexNow: prune's removal
    withdraws a push queued before the config refused it (as the re-check's
    does), and queues none; another page's stays."""
    uri = f"sqlite:///{tmp_path / 's.sqlite3'}"
    store = open_store(uri)
    store.upsert([Entry("/about", OLD), Entry("/admin/users", OLD)])
    store.queue_pushes(["/about", "/admin/users"])  # type: ignore[attr-defined]
    store.close()
    code, out, _ = run("prune", "--store", uri, "--base-url", BASE)
    assert code == Exit.OK, out
    assert stored_paths(uri) == ["/about"]
    assert pending_pushes(uri) == ["/about"]
