"""The command line: stats, list, remove, export and import on real stores, through
click's test runner and as a real subprocess, with the exit codes scripts rely on.
"""

from __future__ import annotations

import gzip
import http.server
import json
import os
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from support.cli import run
from support.helpers import NS, gunzip_once, locs, serve_in_thread, validate
from support.store_kinds import Fresh
from werkzeug.test import Client

from sitemap_middleware import (
    Entry,
    SitemapMiddleware,
    open_store,
    register_store,
)
from sitemap_middleware.cli import Exit
from sitemap_middleware.cli import store as store_commands
from sitemap_middleware.stores.memory import MemoryStore

BASE = "https://www.example.com"
ROOT = Path(__file__).resolve().parents[2]
WHEN = datetime(2024, 5, 1, 12, 30, tzinfo=timezone.utc)


@pytest.fixture
def uri(uri: str) -> str:
    """A populated SQLite store: 3 pages, one with an image and a changefreq."""
    store = open_store(uri)
    store.upsert(
        [
            Entry("/", WHEN, route="/"),
            Entry("/blog/a", WHEN, changefreq="weekly", images=("/img/a.png",)),
            Entry("/about", WHEN, title="About", description="Who we are"),
        ]
    )
    store.close()
    return uri


def _served(uri: str, **options: bool) -> dict[str, bytes]:
    """What the middleware serves for this store: the index and every part
    (and with ``text_sitemap``, their text forms)."""

    def app(environ: object, start_response: object) -> list[bytes]:
        raise AssertionError("the app is never asked for a sitemap")

    middleware = SitemapMiddleware(app, {"base_url": BASE, "store": uri, **options})
    try:
        client = Client(middleware)
        index = client.get("/sitemap.xml")
        files = {"sitemap.xml": index.data}
        for loc in locs(validate(index.data)):
            name = loc.rpartition("/")[2]
            files[name] = client.get(f"/{name}").data
            if options.get("text_sitemap"):
                text = name.replace(".xml.gz", ".txt")
                files[text] = client.get(f"/{text}").data
        if options.get("text_sitemap") and len(files) == 3:
            files["sitemap.txt"] = client.get("/sitemap.txt").data
        return files
    finally:
        middleware.close()


def test_stats_reports_totals_parts_and_newest_change(uri: str) -> None:
    code, out, _ = run("stats", "--store", uri)
    assert code == Exit.OK
    assert out.startswith("3 URLs in 1 part\n")
    assert "part 1: 3 URLs" in out

    code, out, _ = run("stats", "--store", uri, "--json")
    report = json.loads(out)
    assert report["urls"] == 3
    assert [p["number"] for p in report["parts"]] == [1]
    assert report["newest_change"] is not None


def test_stats_counts_one_url_in_the_singular(tmp_path: Path) -> None:
    """One URL is "1 URL", in the totals and in its part's line."""
    uri = f"sqlite:///{tmp_path / 'one.sqlite3'}"
    store = open_store(uri)
    store.upsert([Entry("/", WHEN)])
    store.close()
    code, out, _ = run("stats", "--store", uri)
    assert code == Exit.OK
    assert out.startswith("1 URL in 1 part\n")
    assert "  part 1: 1 URL, lastmod " in out


def test_stats_names_each_counter_s_group(uri: str) -> None:
    """The site-wide counters as stats() groups them: "skipped.incomplete",
    not a bare "incomplete" that could be any group's."""
    store = open_store(uri)
    store.add_counts({"recorded": 3, "incomplete": 2, "queue_full": 1})
    store.close()
    code, out, _ = run("stats", "--store", uri)
    assert code == Exit.OK
    counters = out.partition("counters, all workers:\n")[2].splitlines()
    assert counters == [
        "  recorded: 3",
        "  dropped.queue_full: 1",
        "  skipped.incomplete: 2",
    ]


def test_a_store_that_is_not_there_is_an_error_and_is_not_created(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "nothing.sqlite3"
    code, _, err = run("stats", "--store", f"sqlite:///{missing}")
    assert code == Exit.STORE
    assert "no store at" in err
    assert not missing.exists()


def test_a_bad_store_uri_is_a_usage_error() -> None:
    code, _, err = run("stats", "--store", "nosuch://x")
    assert code == Exit.USAGE
    assert "unknown store scheme 'nosuch'" in err


@pytest.mark.services
def test_a_store_that_does_not_answer_exits_with_the_store_code() -> None:
    # Port 9 (discard) has no Redis: the first read fails as an outage.
    code, _, err = run(
        "list", "--store", "redis://127.0.0.1:9/0?timeout=0.5", "--base-url", BASE
    )
    assert code == Exit.STORE
    assert "failed" in err


def test_list_in_every_format(uri: str) -> None:
    code, out, _ = run("list", "--store", uri, "--base-url", BASE)
    assert code == Exit.OK
    assert out.splitlines() == [f"{BASE}/", f"{BASE}/blog/a", f"{BASE}/about"]

    _, out, _ = run("list", "--store", uri, "--base-url", BASE, "--format", "csv")
    lines = out.splitlines()
    assert lines[0] == "url,lastmod,route"
    assert lines[1] == f"{BASE}/,2024-05-01T12:30:00+00:00,/"

    _, out, _ = run("list", "--store", uri, "--base-url", BASE, "--format", "json")
    rows = json.loads(out)
    assert [r["url"] for r in rows] == [f"{BASE}/", f"{BASE}/blog/a", f"{BASE}/about"]
    assert rows[0] == {
        "url": f"{BASE}/",
        "lastmod": "2024-05-01T12:30:00+00:00",
        "route": "/",
        "title": None,
        "description": None,
    }
    assert (rows[2]["title"], rows[2]["description"]) == ("About", "Who we are")


def test_list_needs_the_base_url(uri: str) -> None:
    code, _, err = run("list", "--store", uri)
    assert code == Exit.USAGE
    assert "--base-url" in err


def test_remove_takes_stored_urls_out_and_says_which_were_not_there(uri: str) -> None:
    code, out, err = run(
        "remove", "--store", uri, "--base-url", BASE, f"{BASE}/about", f"{BASE}/nope"
    )
    assert code == Exit.PROBLEMS
    assert out == f"removed: {BASE}/about\n"
    # A refusal goes to stderr, as every error does: stdout lists what was done.
    assert err == f"not listed: {BASE}/nope\n"
    _, out, _ = run("list", "--store", uri, "--base-url", BASE)
    assert out.splitlines() == [f"{BASE}/", f"{BASE}/blog/a"]


def test_remove_refuses_a_url_of_another_site_and_removes_nothing(uri: str) -> None:
    code, _, err = run(
        "remove",
        "--store",
        uri,
        "--base-url",
        BASE,
        f"{BASE}/about",
        "https://evil.example/about",
    )
    assert code == Exit.USAGE
    assert "is not a URL under https://www.example.com" in err
    _, out, _ = run("list", "--store", uri, "--base-url", BASE)
    assert len(out.splitlines()) == 3


def test_export_writes_what_the_middleware_serves(uri: str, tmp_path: Path) -> None:
    out_dir = tmp_path / "public"
    code, out, _ = run("export", "--store", uri, "--base-url", BASE, str(out_dir))
    assert code == Exit.OK
    assert f"Sitemap: {BASE}/sitemap.xml" in out
    written = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    assert written == _served(uri)
    urls = locs(validate(gunzip_once(written["sitemap-1.xml.gz"])))
    assert urls == [f"{BASE}/", f"{BASE}/blog/a", f"{BASE}/about"]


def test_export_with_text_and_schema_location(uri: str, tmp_path: Path) -> None:
    out_dir = tmp_path / "public"
    code, _, err = run(
        "export",
        "--store",
        uri,
        "--base-url",
        BASE,
        "--text",
        "--schema-location",
        str(out_dir),
    )
    assert code == Exit.OK, err
    written = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    assert set(written) == {
        "sitemap.xml",
        "sitemap-1.xml.gz",
        "sitemap-1.txt",
        "sitemap.txt",
    }
    assert written == _served(uri, text_sitemap=True, schema_location=True)
    assert b"xsi:schemaLocation" in written["sitemap.xml"]
    assert written["sitemap.txt"].decode().splitlines() == [
        f"{BASE}/",
        f"{BASE}/blog/a",
        f"{BASE}/about",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "redis", "postgres"])
def test_export_is_one_state_of_the_store_while_a_writer_adds_urls(
    kind: str, fresh: Fresh, tmp_path: Path
) -> None:
    """A writer adds URLs, in batches of 7 with newer lastmods, opening new
    parts, while export runs: the index names exactly the parts written, its
    date of each is no earlier than that part's newest lastmod, full parts
    hold part_size URLs,
    and the URLs are those of one moment: whole batches, each URL once."""
    uri = fresh.uri(kind, tmp_path, part_size=20)
    seeded = open_store(uri)  # 100 parts: an export long enough to write during
    seeded.upsert([Entry(f"/w/{n}", _at(n)) for n in range(SEEDED)])
    stop, wrote = threading.Event(), threading.Event()
    # SQLite and PostgreSQL export from one read transaction: the writer may
    # never pause. Redis is read again where it moved: a pause now and then.
    pause = 0.02 if kind == "redis" else 0.001

    def write() -> None:
        writer, n = open_store(uri), SEEDED
        try:
            while not stop.is_set():
                writer.upsert([Entry(f"/w/{n + i}", _at(n + i)) for i in range(7)])
                n += 7
                wrote.set()
                time.sleep(pause)
        finally:
            writer.close()

    thread = threading.Thread(target=write)
    thread.start()
    try:
        assert wrote.wait(10)
        out_dir = tmp_path / "public"
        started = seeded.count()
        code, _, err = run("export", "--store", uri, "--base-url", BASE, str(out_dir))
        assert code == Exit.OK, err
        assert seeded.count() > started  # the writer wrote meanwhile
    finally:
        stop.set()
        thread.join(10)
        seeded.close()
    index = validate((out_dir / "sitemap.xml").read_bytes())
    named = {loc.rpartition("/")[2]: _lastmod(entry) for loc, entry in _listed(index)}
    files = {p.name for p in out_dir.iterdir()} - {"sitemap.xml"}
    assert set(named) == files and len(files) > SEEDED // 20
    numbers = sorted(int(name.split("-")[1].split(".")[0]) for name in files)
    paths: list[str] = []
    for number in numbers:
        body = gunzip_once((out_dir / f"sitemap-{number}.xml.gz").read_bytes())
        urls = _listed(validate(body))
        # The index dates a part by when it last changed: never before the
        # newest lastmod it holds.
        assert named[f"sitemap-{number}.xml.gz"] >= max(
            map(_lastmod, dict(urls).values())
        )
        if number != numbers[-1]:
            assert len(urls) == 20
        paths += [loc.removeprefix(BASE) for loc, _ in urls]
    assert (len(paths) - SEEDED) % 7 == 0
    assert sorted(paths) == sorted(f"/w/{n}" for n in range(len(paths)))


class _Busy(MemoryStore):
    """A store whose writers never stop: each read of a part adds a URL."""

    def fragments(self, number: int) -> Iterator[bytes]:
        yield from super().fragments(number)
        self.upsert([Entry(f"/more/{secrets.token_hex(4)}", WHEN)])


def test_export_of_a_store_that_never_stays_still_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy = _Busy()
    busy.upsert([Entry("/a", WHEN)])
    register_store("busy+test", lambda uri: busy)
    monkeypatch.setattr(store_commands, "EXPORT_PAUSE", 0)
    out_dir = tmp_path / "public"
    code, _, err = run(
        "export", "--store", "busy+test://", "--base-url", BASE, str(out_dir)
    )
    assert code == Exit.STORE
    assert (
        f"the store changed during each of {store_commands.EXPORT_ROUNDS} reads" in err
    )
    assert "run export again, or while its writers are stopped" in err
    assert not out_dir.exists()  # nothing half-written


SEEDED = 2000


def _at(n: int) -> datetime:
    return WHEN + timedelta(seconds=n)


def _listed(root: Any) -> list[tuple[str, Any]]:
    """(loc, element) of each ``<url>`` or ``<sitemap>`` of a document."""
    return [(element.findtext("sm:loc", namespaces=NS), element) for element in root]


def _lastmod(element: Any) -> datetime:
    return datetime.fromisoformat(element.findtext("sm:lastmod", namespaces=NS))


def test_export_of_an_empty_store_is_refused(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'empty.sqlite3'}"
    empty = open_store(uri)
    assert empty.count() == 0  # the file exists, holding no URL
    empty.close()
    code, _, err = run("export", "--store", uri, "--base-url", BASE, str(tmp_path))
    assert code == Exit.PROBLEMS
    assert "nothing to export" in err


def test_import_of_an_export_gives_the_same_sitemap(uri: str, tmp_path: Path) -> None:
    run("export", "--store", uri, "--base-url", BASE, str(tmp_path / "out"))
    copy = f"sqlite:///{tmp_path / 'copy.sqlite3'}"
    code, out, _ = run(
        "import", "--store", copy, "--base-url", BASE, str(tmp_path / "out/sitemap.xml")
    )
    assert code == Exit.OK, out
    assert "3 new URLs" in out
    original = _served(uri)
    imported = _served(copy)
    part = "sitemap-1.xml.gz"
    # Same URLs, lastmods, changefreq and images, byte for byte.
    assert gunzip_once(imported[part]) == gunzip_once(original[part])


def test_import_of_a_text_sitemap_and_of_gzip(tmp_path: Path) -> None:
    text = tmp_path / "urls.txt"
    text.write_text(f"{BASE}/a\n\n{BASE}/b\n")
    zipped = tmp_path / "more.xml.gz"
    zipped.write_bytes(
        gzip.compress(
            b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/'
            b'sitemap/0.9"><url><loc>' + BASE.encode() + b"/c</loc>"
            b"<lastmod>2023-02-03</lastmod></url></urlset>"
        )
    )
    store = f"sqlite:///{tmp_path / 's.sqlite3'}"
    assert run("import", "--store", store, "--base-url", BASE, str(text))[0] == 0
    assert run("import", "--store", store, "--base-url", BASE, str(zipped))[0] == 0
    _, out, _ = run("list", "--store", store, "--base-url", BASE, "--format", "csv")
    # A text sitemap has no lastmod: the URLs have none (not the import's time).
    assert out.splitlines()[1:] == [
        f"{BASE}/a,,",
        f"{BASE}/b,,",
        f"{BASE}/c,2023-02-03T00:00:00+00:00,",
    ]


BAD = (
    f'<?xml version="1.0"?>'
    f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    f"<url><loc>{BASE}/good</loc><lastmod>2024-01-02T03:04:05Z</lastmod></url>"
    f"<url><loc>https://other.example/x</loc></url>"
    f"<url><loc>{BASE}/bad-date</loc><lastmod>yesterday</lastmod></url>"
    f"<url><loc>{BASE}/bad-freq</loc><changefreq>often</changefreq></url>"
    f"<url><loc>{BASE}/bad-priority</loc><priority>2</priority></url>"
    f"<url><loc>{BASE}/secret?token=abc</loc></url>"
    f"<url><lastmod>2024-01-01</lastmod></url>"
    f"<url><loc>{BASE}/also-good</loc><priority>0.4</priority></url>"
    f"</urlset>"
)


def test_bad_entries_are_reported_and_the_rest_imported(tmp_path: Path) -> None:
    source = tmp_path / "bad.xml"
    source.write_text(BAD)
    store = f"sqlite:///{tmp_path / 's.sqlite3'}"
    open_store(store).upsert([Entry("/kept", WHEN)])
    code, out, err = run("import", "--store", store, "--base-url", BASE, str(source))
    assert code == Exit.PROBLEMS
    assert "6 skipped" in out
    for words in (
        "not a URL under",
        "is no W3C datetime",
        "not one of the protocol's",
        "priority must be 0.0 to 1.0",
        "token would be dropped",
        "without <loc>",
    ):
        assert words in err
    _, out, _ = run("list", "--store", store, "--base-url", BASE, "--format", "csv")
    assert out.splitlines()[1:] == [
        f"{BASE}/kept,2024-05-01T12:30:00+00:00,",
        f"{BASE}/good,2024-01-02T03:04:05+00:00,",
        f"{BASE}/also-good,{out.splitlines()[3].split(',')[1]},",
    ]


def test_a_source_that_cannot_be_read_keeps_the_store(uri: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.xml"
    broken.write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url>'
    )
    html = tmp_path / "page.xml"
    html.write_text("<html><body>not a sitemap</body></html>")
    for source, words in (
        (tmp_path / "missing.xml", "cannot read"),
        (broken, "not well-formed XML"),
        (html, "is not a sitemap"),
    ):
        code, _, err = run("import", "--store", uri, "--base-url", BASE, str(source))
        assert code == Exit.SOURCE, err
        assert words in err
    _, out, _ = run("list", "--store", uri, "--base-url", BASE)
    assert len(out.splitlines()) == 3


@pytest.fixture
def http_site(uri: str, tmp_path: Path) -> Iterator[str]:
    """A real HTTP server holding an exported sitemap index and its part."""
    public = tmp_path / "www"
    run("export", "--store", uri, "--base-url", BASE, str(public))

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(public), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    serve_in_thread(server)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_import_follows_an_index_over_http(http_site: str, tmp_path: Path) -> None:
    # The exported index names its parts on the public site; fetched over
    # HTTP, the index's own directory is where they are.
    index = (Path(tmp_path / "www" / "sitemap.xml")).read_text()
    (tmp_path / "www" / "sitemap.xml").write_text(
        index.replace(f"{BASE}/", f"{http_site}/")
    )
    store = f"sqlite:///{tmp_path / 'copy.sqlite3'}"
    code, out, err = run(
        "import", "--store", store, "--base-url", BASE, f"{http_site}/sitemap.xml"
    )
    assert code == Exit.OK, err
    assert "3 new URLs" in out


def test_import_of_a_url_that_answers_404_is_a_source_error(http_site: str) -> None:
    code, _, err = run(
        "import", "--store", "memory://", "--base-url", BASE, f"{http_site}/nope.xml"
    )
    assert code == Exit.SOURCE
    assert "404" in err


@pytest.mark.slow
def test_the_command_runs_as_a_module_in_a_real_process(uri: str) -> None:
    env = {**os.environ, "SITEMAP_STORE": uri, "SITEMAP_BASE_URL": BASE}
    done = subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", "list"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"{BASE}/"
    done = subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", "stats", "--store", "nosuch://"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == Exit.USAGE
    assert "unknown store scheme" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_console_script_is_installed(uri: str) -> None:
    script = Path(sys.executable).parent / "sitemap-middleware"
    assert script.exists(), "pip install -e . installs the sitemap-middleware script"
    done = subprocess.run(
        [str(script), "stats", "--store", uri],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("3 URLs")


def _stderr_of_import(source: Path, store: str, terminal: bool) -> str:
    """The import's stderr, written to a pseudo-terminal or to a pipe."""
    import pty

    command = [sys.executable, "-m", "sitemap_middleware", "import", str(source)]
    env = {**os.environ, "SITEMAP_STORE": store, "SITEMAP_BASE_URL": BASE}
    if not terminal:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return done.stderr
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=follower
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert process.wait(timeout=60) == 0
    return seen.decode("utf-8", "replace")


@pytest.mark.slow
def test_progress_shows_on_a_terminal_only(tmp_path: Path) -> None:
    source = tmp_path / "urls.txt"
    source.write_text("".join(f"{BASE}/p{n}\n" for n in range(2000)))
    shown = _stderr_of_import(source, f"sqlite:///{tmp_path / 'a.sqlite3'}", True)
    assert "importing" in shown
    # The total is known once the source is checked: the bar counts to it.
    assert "2000/2000" in shown
    piped = _stderr_of_import(source, f"sqlite:///{tmp_path / 'b.sqlite3'}", False)
    assert piped == ""
