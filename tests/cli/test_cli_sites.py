"""The command line with several sites: ``--site`` without ``--app`` refused where
it cannot tell the first site's listing, a command's removal settling the other
site's hreflang clusters as the middleware's own does (with ``--app``, whatever
``--store`` and ``--base-url`` say), and ``import`` keeping the alternates on
another of the app's sites, as a visit keeps them.
"""

from __future__ import annotations

import gzip
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import fromstring

import pytest
from support.cli import run
from support.helpers import stored_paths
from support.store_kinds import Fresh

from sitemap_middleware import Entry, open_store
from sitemap_middleware.cli import Exit
from sitemap_middleware.cli.entries import SITEMAP_NS, _Reader
from sitemap_middleware.config import site_store

DE = "https://example.de"
FR = "https://example.fr"
PAIR = {("de", f"{DE}/x"), ("fr", f"{FR}/x")}

# Two sites whose /x name each other as hreflang alternates; the store is the
# environment's SITES_STORE, read when the app is made; GONE: the (host, path)
# that answer 404.
APP = """
import os

from flask import Flask, abort, request
from sitemap_middleware import SitemapMiddleware

ORIGINS = {"de": "https://example.de", "fr": "https://example.fr"}
GONE = set()


def create_app():
    app = Flask(__name__)

    @app.get("/x")
    @app.get("/keep")
    def page():
        if (request.host, request.path) in GONE:
            abort(404)
        links = "".join(
            f'<link rel="alternate" hreflang="{lang}" href="{origin}/x">'
            for lang, origin in ORIGINS.items()
        ) if request.path == "/x" else ""
        return (
            f"<!doctype html><html><head><title>{request.host}{request.path}"
            f"</title>{links}</head><body><p>Some words.</p></body></html>"
        )

    app.wsgi_app = SitemapMiddleware(app.wsgi_app, {
        "store": os.environ["SITES_STORE"],
        "sites": {
            "de": {"base_url": ORIGINS["de"]},
            "fr": {"base_url": ORIGINS["fr"]},
        },
    })
    return app
"""


class Sites:
    """The app of :data:`APP` (``spec`` for ``--app``), on the store ``uri``."""

    def __init__(self, module: Any, uri: str) -> None:
        self.module = module
        self.uri = uri
        self.spec = f"{module.__name__}:create_app"
        self.made: list[Any] = []

    def app(self) -> Any:
        app = self.module.create_app()
        self.made.append(app.wsgi_app)
        return app

    def visit(self, origin: str, *paths: str) -> None:
        from werkzeug.test import Client

        app = self.app()
        client = Client(app, use_cookies=False)
        for path in paths:
            with client.get(path, base_url=origin) as response:
                response.get_data()  # recorded once the body is sent
        assert app.wsgi_app.flush(10)

    def links(self, origin: str) -> dict[str, set[tuple[str, str]]]:
        """Each URL the site's sitemap lists -> its alternates, as served."""
        from lxml import etree
        from werkzeug.test import Client

        client = Client(self.app(), use_cookies=False)
        with client.get("/sitemap-1.xml.gz", base_url=origin) as response:
            if response.status_code != 200:
                return {}
            root = etree.fromstring(gzip.decompress(response.get_data()))
        ns = {
            "s": "http://www.sitemaps.org/schemas/sitemap/0.9",
            "x": "http://www.w3.org/1999/xhtml",
        }
        return {
            str(url.findtext("s:loc", namespaces=ns)): {
                (str(link.get("hreflang")), str(link.get("href")))
                for link in url.iterfind("x:link", ns)
            }
            for url in root.iterfind("s:url", ns)
        }

    def both(self) -> None:
        """/x and /keep recorded on both sites: each /x lists the pair."""
        for origin in (DE, FR):
            self.visit(origin, "/keep", "/x")
        assert self.links(DE)[f"{DE}/x"] == PAIR
        assert self.links(FR)[f"{FR}/x"] == PAIR

    def close(self) -> None:
        for middleware in self.made:
            middleware.close()


@pytest.fixture
def sites(
    kind: str, fresh: Fresh, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Sites]:
    """The app of :data:`APP` on a fresh store of the test's ``kind``."""
    uri = fresh.uri(kind, tmp_path)
    name = f"cli_sites_{abs(hash(str(tmp_path))):x}"
    (tmp_path / f"{name}.py").write_text(APP)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("SITES_STORE", uri)
    made = Sites(importlib.import_module(name), uri)
    yield made
    made.close()


def _source(tmp_path: Path, *urls: str) -> str:
    path = tmp_path / "in.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(f"<url><loc>{url}</loc></url>" for url in urls)
        + "</urlset>"
    )
    return str(path)


def _present(uri: str) -> bool:
    store: Any = open_store(uri)
    try:
        return bool(store.present())
    finally:
        store.close()


# -- --site without --app ------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_without_app_a_site_listing_that_holds_no_sitemap_is_refused(
    sites: Sites, tmp_path: Path
) -> None:
    """Without the app the command cannot tell the first site, whose listing is
    the store itself: ``--site de`` (the first) names a listing nothing serves.
    A command that writes refuses it, saying why, and writes nothing; one that
    reads says the same; a site's listing that holds a sitemap is used."""
    sites.both()
    uri, listing = sites.uri, site_store(sites.uri, "de")
    before = stored_paths(uri)
    source = _source(tmp_path, f"{DE}/imported")
    asked = ("--store", uri, "--site", "de", "--base-url", DE)
    for command in (("import", source), ("remove", f"{DE}/x"), ("prune", "--yes")):
        code, out, err = run(command[0], *asked, command[1])
        assert code == Exit.USAGE, (out, err)
        assert err.count("\n") == 1 and err.startswith("Error: --site de names"), err
        assert "without --app the command cannot tell which site is the first" in err
        assert "give --app, or leave out --site for the first site" in err
    assert not _present(listing)
    assert stored_paths(uri) == before
    code, _, err = run("list", *asked)
    assert code == Exit.STORE
    assert "give --app, or leave out --site for the first site" in err
    assert not _present(listing)
    # Another site's listing holds its sitemap: written as asked.
    code, _, err = run(
        "import", "--store", uri, "--site", "fr", "--base-url", FR,
        _source(tmp_path, f"{FR}/imported"),
    )  # fmt: skip
    assert code == Exit.OK, err
    assert "/imported" in stored_paths(site_store(uri, "fr"))


# -- a removal settles the other site's clusters ------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", "redis", "postgres"])
@pytest.mark.parametrize(
    ("command", "given"),
    [
        ("remove", ("--base-url", FR)),
        ("remove", ("--store", "{uri}")),
        ("verify", ("--base-url", FR, "--yes")),
        ("verify", ("--store", "{uri}", "--yes")),
    ],
)
def test_an_override_of_the_app_s_own_value_settles_the_other_site(
    sites: Sites, command: str, given: tuple[str, ...]
) -> None:
    """``--base-url`` or ``--store`` equal to the app's own are no override: the
    removal goes through the app's own listing of the site, whose removals
    settle the other sites' clusters."""
    sites.both()
    sites.module.GONE.add(("example.fr", "/x"))
    args = [value.format(uri=sites.uri) for value in given]
    urls = [f"{FR}/x"] if command == "remove" else []
    code, _, err = run(command, "--app", sites.spec, "--site", "fr", *args, *urls)
    assert code == Exit.OK, err
    assert f"{FR}/x" not in sites.links(FR)
    assert sites.links(DE)[f"{DE}/x"] == set()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
@pytest.mark.parametrize("command", ["remove", "verify"])
def test_another_store_is_linked_to_the_app_s_other_sites(
    sites: Sites, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--store`` another store than the app's: the site's listing in it is
    linked to the other sites' listings in it, as the middleware links them."""
    sites.both()
    sites.module.GONE.add(("example.fr", "/x"))
    # The app's own store is elsewhere now; --store names the one recorded.
    monkeypatch.setenv("SITES_STORE", f"sqlite:///{tmp_path / 'own.sqlite3'}")
    args = [f"{FR}/x"] if command == "remove" else ["--yes"]
    code, _, err = run(
        command, "--app", sites.spec, "--site", "fr", "--store", sites.uri, *args
    )
    assert code == Exit.OK, err
    monkeypatch.setenv("SITES_STORE", sites.uri)
    assert f"{FR}/x" not in sites.links(FR)
    assert sites.links(DE)[f"{DE}/x"] == set()


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_seed_of_a_site_completes_the_cluster(sites: Sites) -> None:
    """seed records without the rate of new URLs, by a middleware of its own:
    its listing is linked too, so that the pair is listed on both sites."""
    sites.visit(DE, "/x")
    assert sites.links(DE)[f"{DE}/x"] == set()
    code, _, err = run("seed", "--app", sites.spec, "--site", "fr")
    assert code == Exit.OK, err
    assert sites.links(FR)[f"{FR}/x"] == PAIR
    assert sites.links(DE)[f"{DE}/x"] == PAIR


# -- import ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_import_keeps_the_alternates_on_another_of_the_app_s_sites(
    sites: Sites, tmp_path: Path
) -> None:
    """fr's old sitemap names /x with its de alternate, de/x is recorded
    declaring both: imported with the app, the pair is listed on both sites,
    as when fr/x is visited. Without the app no other site is known: only the
    site's own alternates are kept."""
    sites.visit(DE, "/x")
    source = tmp_path / "fr.xml"
    source.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        ' xmlns:xhtml="http://www.w3.org/1999/xhtml">'
        f"<url><loc>{FR}/x</loc>"
        f'<xhtml:link rel="alternate" hreflang="de" href="{DE}/x"/>'
        f'<xhtml:link rel="alternate" hreflang="fr" href="{FR}/x"/>'
        "</url></urlset>"
    )
    code, _, err = run("import", "--app", sites.spec, "--site", "fr", str(source))
    assert code == Exit.OK, err
    assert sites.links(FR)[f"{FR}/x"] == PAIR
    assert sites.links(DE)[f"{DE}/x"] == PAIR


def test_an_alternate_is_kept_on_the_site_or_another_of_the_app_s_sites() -> None:
    """The reading of a ``<url>`` keeps its alternates as a visit keeps a
    page's (``recording.clusters.declared``): its site's as paths, another
    site's of ``abroad`` as URLs, one per language, sorted; without ``abroad``
    (no app), only the site's own."""
    url = fromstring(
        f'<url xmlns="{SITEMAP_NS[1:-1]}" xmlns:xhtml="http://www.w3.org/1999/xhtml">'
        f"<loc>{FR}/x</loc>"
        f'<xhtml:link rel="alternate" hreflang="fr" href="{FR}/x"/>'
        f'<xhtml:link rel="alternate" hreflang="de" href="{DE}/x"/>'
        f'<xhtml:link rel="alternate" hreflang="it" href="https://example.it/x"/>'
        "</url>"
    )
    alone = _Reader("s.xml", FR, frozenset(), SITEMAP_NS).full(url)
    assert isinstance(alone, Entry)
    assert alone.alternates == (("fr", "/x"),)
    both = _Reader("s.xml", FR, frozenset(), SITEMAP_NS, (DE,)).full(url)
    assert isinstance(both, Entry)
    assert both.alternates == (("de", f"{DE}/x"), ("fr", "/x"))
