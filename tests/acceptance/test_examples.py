"""The example sites import, warm up by crawling, and list exactly their public
pages in the sitemap."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from support.helpers import parse_page, sitemap_lastmods, sitemap_urls
from support.sites import Site

EXAMPLES = {"flask_app": "wsgi", "starlette_app": "asgi", "fastapi_app": "asgi"}
FOLDER = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(params=sorted(EXAMPLES))
def example(request: pytest.FixtureRequest, tmp_path: Path) -> Site:
    module = importlib.import_module(request.param)
    app = module.create_app(
        {"base_url": "http://localhost", "store": f"sqlite:///{tmp_path}/s.sqlite3"}
    )
    site = Site(EXAMPLES[request.param], app)
    yield site
    site.close()


def test_crawl_records_exactly_the_public_pages(example: Site) -> None:
    """Following links from / reaches every page; only the public ones are listed."""
    import demo_content

    def fetch(path: str) -> tuple[int, str, bytes]:
        reply = example.get(path)
        return reply.status, reply.headers.get("content-type", ""), reply.body

    visited = demo_content.crawl(fetch)
    for path in ("/draft", "/old", "/gone", "/admin/", "/api/posts", "/account"):
        assert path in visited
    example.recorded()
    urls = sitemap_urls(example)
    assert len(urls) == len(set(urls))
    assert sorted(urls) == sorted(
        f"http://localhost{p}" for p in demo_content.PUBLIC_PATHS
    )
    robots = example.get("/robots.txt").body.decode()
    assert "Sitemap: http://localhost/sitemap.xml" in robots


def test_the_sitemap_shows_the_dates_the_posts_declare(example: Site) -> None:
    """Each post declares when it was edited (article:modified_time and JSON-LD),
    the blog list the newest of them (JSON-LD): the sitemap shows exactly those,
    to the second in UTC. The pages that declare no date were seen once and
    never seen to change: they have no lastmod, not the time of the crawl."""
    import demo_content

    def fetch(path: str) -> tuple[int, str, bytes]:
        reply = example.get(path)
        return reply.status, reply.headers.get("content-type", ""), reply.body

    demo_content.crawl(fetch)
    example.recorded()
    lastmods = sitemap_lastmods(example)  # every document validated

    def utc(text: str) -> str:
        moment = datetime.fromisoformat(text).astimezone(timezone.utc)
        return moment.isoformat(timespec="seconds")

    expected: dict[str, str | None] = {
        f"http://localhost{path}": None for path in demo_content.PUBLIC_PATHS
    }
    for post in demo_content.POSTS:
        expected[f"http://localhost{post.path}"] = utc(post.modified)
    newest = max(utc(post.modified) for post in demo_content.POSTS)
    expected["http://localhost/blog/"] = newest
    assert lastmods == expected
    index = example.get("/sitemap.xml").body
    # The index dates its part by when the file changed: the crawl.
    assert b"<lastmod>" in index


def test_signed_in_account_is_not_recorded(example: Site) -> None:
    """/account with a session cookie is personal: never recorded."""
    reply = example.get("/account", {"Cookie": "session=demo"})
    assert reply.status == 200
    assert example.get("/account").status in (302, 303, 307)
    assert example.recorded() == []


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_config_typo_stops_the_factory(name: str) -> None:
    """Every example's factory checks the sitemap config when it builds the
    app, not at the first request."""
    from sitemap_middleware import ConfigError

    module = importlib.import_module(name)
    with pytest.raises(ConfigError, match="changefreq"):
        module.create_app({"base_url": "http://localhost", "chagnefreq": "daily"})


def test_the_app_renders_the_site_map_the_middleware_serves(example: Site) -> None:
    """/site-map is the middleware's page, /pages the app's own layout around
    site_map(): the same links, and neither is recorded."""
    import demo_content

    def fetch(path: str) -> tuple[int, str, bytes]:
        reply = example.get(path)
        return reply.status, reply.headers.get("content-type", ""), reply.body

    assert "/site-map" in demo_content.crawl(fetch)  # linked from every page
    example.recorded()
    served = parse_page(example.get("/site-map").body).links["main"]
    own = parse_page(example.get("/pages").body).links["main"]
    assert served == own
    assert sorted(href for href, _ in served) == sorted(sitemap_urls(example))
    assert example.get("/pages?page=2").status == 404
    example.recorded()
    assert "http://localhost/site-map" not in sitemap_urls(example)


def test_every_demo_names_the_same_store() -> None:
    """The three demos and the command line share one file, whatever the
    working directory: examples/instance/sitemap.sqlite3, an absolute path."""
    import demo_content
    import fastapi_app
    import starlette_app

    assert demo_content.STORE_FILE == FOLDER / "instance" / "sitemap.sqlite3"
    uri = f"sqlite:///{demo_content.STORE_FILE.as_posix()}"
    assert uri == demo_content.STORE
    assert starlette_app.DEFAULTS["store"] == demo_content.STORE
    assert fastapi_app.DEFAULTS["store"] == demo_content.STORE


# Run from another folder, on a copy of examples/ (the checkout's own store is
# left alone): each demo opens <copy>/instance/sitemap.sqlite3.
STORE_PATHS = """
import flask_app, starlette_app, fastapi_app
from starlette.testclient import TestClient
from sitemap_middleware.starlette import get_sitemap

print(flask_app.create_app().extensions["sitemap"].store.path)
for module in (starlette_app, fastapi_app):
    app = module.create_app()
    with TestClient(app):
        print(get_sitemap(app).store.path)
"""


@pytest.mark.slow
def test_every_demo_keeps_its_store_in_examples_instance(tmp_path: Path) -> None:
    copy = tmp_path / "examples"
    copy.mkdir()
    for source in FOLDER.glob("*.py"):
        shutil.copy(source, copy)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {str(copy)!r})\n" + STORE_PATHS,
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    expected = str(copy / "instance" / "sitemap.sqlite3")
    assert result.stdout.split() == [expected] * 3
    assert not list(elsewhere.iterdir())


@pytest.mark.parametrize("text_sitemap", [False, True])
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_banner_names_every_document_served(
    name: str, text_sitemap: bool, tmp_path: Path
) -> None:
    """What a demo prints before serving: the store's file and every document
    the site serves (the index, a part, robots.txt, the site map page,
    llms.txt, the text sitemap when on), each of which answers 200."""
    import demo_content

    module = importlib.import_module(name)
    store = tmp_path / "s.sqlite3"
    config = {
        "base_url": "http://localhost",
        "store": f"sqlite:///{store}",
        "text_sitemap": text_sitemap,
    }
    example = Site(EXAMPLES[name], module.create_app(config))
    try:

        def fetch(path: str) -> tuple[int, str, bytes]:
            reply = example.get(path)
            return reply.status, reply.headers.get("content-type", ""), reply.body

        visited = demo_content.crawl(fetch)
        example.recorded()
        text = demo_content.banner("http://localhost", visited, example.middleware)
        assert str(store) in text.splitlines()[0]
        urls = re.findall(r"http://localhost(/\S*)", text)
        expected = {"/", "/robots.txt", "/sitemap.xml", "/sitemap-1.xml.gz"}
        expected |= {"/site-map", "/pages", "/llms.txt"}
        if text_sitemap:
            expected.add("/sitemap-1.txt")
        assert set(urls) == expected
        for path in urls:
            assert example.get(path).status == 200, path
    finally:
        example.close()
