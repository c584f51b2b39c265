"""The examples under real servers (gunicorn, uvicorn), read by an independent
sitemap consumer that starts from /robots.txt."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.helpers import (
    HTTPClient,
    exited,
    free_port,
    gunzip_once,
    locs,
    running,
    sitemap_urls,
    started,
    validate,
    wait_until,
    write_entry,
)

pytestmark = [pytest.mark.servers, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


SERVERS = {
    "gunicorn-flask": (
        "flask_app",
        ["-m", "gunicorn", "-w", "2", "-b", "{bind}", "entry:app"],
    ),
    "uvicorn-starlette": (
        "starlette_app",
        ["-m", "uvicorn", "--port", "{port}", "entry:app"],
    ),
    "uvicorn-fastapi": (
        "fastapi_app",
        ["-m", "uvicorn", "--port", "{port}", "entry:app"],
    ),
}


@pytest.fixture(params=sorted(SERVERS))
def server(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[str, HTTPClient]]:
    module, argv = SERVERS[request.param]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    write_entry(
        tmp_path,
        f"""
        from {module} import create_app
        app = create_app(
            {{"base_url": {base!r}, "store": "sqlite:///{tmp_path}/s.sqlite3"}}
        )
        """,
    )
    args = [a.format(bind=f"127.0.0.1:{port}", port=port) for a in argv]
    with running(args, tmp_path, port, "/", f"{request.param} to start") as (
        client,
        _,
    ):
        yield base, client


def crawled(base: str, client: HTTPClient) -> list[str]:
    """Crawl the live demo, then wait until its sitemap lists exactly the public
    pages (the writer threads flush about once a second): their URLs."""
    import demo_content

    def fetch(path: str) -> tuple[int, str, bytes]:
        reply = client.get(path)
        return reply.status, reply.headers.get("content-type", ""), reply.body

    demo_content.crawl(fetch)
    expected = sorted(f"{base}{p}" for p in demo_content.PUBLIC_PATHS)
    wait_until(lambda: sorted(sitemap_urls(client)) == expected, 15, "the sitemap")
    return expected


def test_consumer_finds_exactly_the_public_pages(
    server: tuple[str, HTTPClient],
) -> None:
    """Crawl the live example, then let usp discover the sitemap from robots.txt."""
    from usp.tree import sitemap_tree_for_homepage

    base, client = server
    expected = crawled(base, client)
    urls = sitemap_urls(client)
    assert len(urls) == len(set(urls))

    tree = sitemap_tree_for_homepage(base + "/", use_known_paths=False)
    found = [page.url for page in tree.all_pages()]
    assert sorted(found) == expected


def test_head_and_conditional_on_a_real_socket(server: tuple[str, HTTPClient]) -> None:
    """HEAD sends no body over the wire; 304 has none either; gzip stays single."""
    base, client = server
    assert client.get("/about").status == 200
    wait_until(lambda: client.get("/sitemap.xml").status == 200, 15, "a sitemap")
    get = client.get("/sitemap.xml")
    validate(get.body)
    head = client.head("/sitemap.xml")
    assert head.status == 200 and head.body == b""
    assert head.headers["Content-Length"] == str(len(get.body))
    not_modified = client.get("/sitemap.xml", {"If-None-Match": get.headers["ETag"]})
    assert (not_modified.status, not_modified.body) == (304, b"")
    page_url = locs(validate(get.body))[0]
    page = client.get(page_url[len(base) :], {"Accept-Encoding": "gzip"})
    assert page.headers["Content-Type"] == "application/gzip"
    assert page.headers.get("Content-Encoding") is None
    validate(gunzip_once(page.body))
    robots = client.get("/robots.txt", {"Host": "evil.example"})
    assert f"Sitemap: {base}/sitemap.xml" in robots.body.decode()


@pytest.mark.parametrize("server", ["gunicorn-flask"], indirect=True)
def test_the_health_report_of_the_live_demo(
    server: tuple[str, HTTPClient], tmp_path: Path
) -> None:
    """Crawl the demo under gunicorn (two workers), then ``report --json`` as a
    process of its own reads the store they wrote."""
    import json

    import demo_content

    base, client = server
    crawled(base, client)
    done = subprocess.run(
        [sys.executable, "-m", "sitemap_middleware", "report", "--json"],
        env={
            **os.environ,
            "PYTHONPATH": str(EXAMPLES.parent),
            "SITEMAP_STORE": f"sqlite:///{tmp_path}/s.sqlite3",
            "SITEMAP_BASE_URL": base,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["listed"] == len(demo_content.PUBLIC_PATHS)
    (section,) = report["sections"]
    spread = section["lastmod"]
    assert sum(spread.values()) == report["listed"]
    # The posts and the blog list declare their dates (of 2024): older than a
    # year. A page another worker saw change is dated by that change.
    assert spread["older"] == len(demo_content.POSTS) + 1
    assert spread["undated"] + spread["week"] == report["listed"] - spread["older"]
    if report["crawls_kept"]:
        # Every page was just served, and no verified crawler came.
        assert section["stale"] == 0
        assert section["never_fetched"] == report["listed"]
        assert report["unlisted"] == 0


# -- A store at start-up ---------------------------------------------------------

FLASK_ENTRY = """
from flask import Flask
from sitemap_middleware import SitemapMiddleware

app = Flask(__name__)

@app.get("/")
def home():
    return "<!doctype html><title>Home</title><main>Home</main>"

app.wsgi_app = SitemapMiddleware(app.wsgi_app, {config!r})
"""

FASTAPI_ENTRY = """
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from sitemap_middleware.starlette import add_sitemap

app = FastAPI()

@app.get("/", response_class=HTMLResponse)
async def home() -> str:
    return "<!doctype html><title>Home</title><main>Home</main>"

add_sitemap(app, {config!r})
"""

ENTRIES = {
    "gunicorn-flask": (
        FLASK_ENTRY,
        ["-m", "gunicorn", "-w", "2", "-b", "{bind}", "entry:app"],
    ),
    "uvicorn-fastapi": (
        FASTAPI_ENTRY,
        ["-m", "uvicorn", "--port", "{port}", "entry:app"],
    ),
}


def _entry(folder: Path, server: str, port: int, store: str) -> list[str]:
    """The server's command line, its entry.py written: the app of ``server``
    with a sitemap middleware on ``store``."""
    entry, argv = ENTRIES[server]
    config = {"base_url": f"http://127.0.0.1:{port}", "store": store}
    (folder / "entry.py").write_text(entry.format(config=config))
    return [a.format(bind=f"127.0.0.1:{port}", port=port) for a in argv]


@pytest.mark.parametrize("server", sorted(ENTRIES))
def test_a_store_folder_that_is_missing_stops_the_server(
    tmp_path: Path, server: str
) -> None:
    """The configuration reference's relative URI without its folder: the app
    does not start, and the log says the absolute path and what to do (not
    the Flask instance folder: that one is made)."""
    port = free_port()
    args = _entry(tmp_path, server, port, "sqlite:///data/sitemap.sqlite3")
    assert exited(started(args, tmp_path), 60) != 0
    said = (tmp_path / "server.log").read_text()
    assert (
        f"ConfigError: SQLite {tmp_path}/data/sitemap.sqlite3: its folder"
        f" {tmp_path}/data does not exist: create the folder, or fix the store URI"
    ) in said, said
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("server", sorted(ENTRIES))
def test_redis_down_at_start_up_is_an_outage_served_through(
    tmp_path: Path, server: str
) -> None:
    """Redis not there when the app starts: it starts and serves its pages;
    the sitemap answers 503 with Retry-After; the warning names the store,
    its password masked, on one line."""
    port = free_port()
    store = "redis://:s3cret@127.0.0.1:1/0?connect_timeout=0.2&timeout=0.2"
    args = _entry(tmp_path, server, port, store)
    with running(args, tmp_path, port, "/", f"{server} to start") as (client, _):
        for _ in range(3):
            assert client.get("/").status == 200
        reply = client.get("/sitemap.xml")
        assert reply.status == 503
        assert int(reply.headers["Retry-After"]) > 0
        log = tmp_path / "server.log"

        def warned() -> bool:
            return "recording paused: store unavailable" in log.read_text()

        wait_until(warned, 15, "the outage's warning")
    lines = [
        line
        for line in log.read_text().splitlines()
        if "recording paused: store unavailable" in line
    ]
    assert lines, log.read_text()
    assert "(Redis redis://:***@127.0.0.1:1/0: " in lines[0], lines
    assert "s3cret" not in log.read_text()
