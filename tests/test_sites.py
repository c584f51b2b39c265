"""Several sites from one app (the ``sites`` key), on both stacks: the Host
header selects a site, never builds a URL; each site lists its own pages
under its own origin; a host no site names records nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support import sites
from support.helpers import NS, gunzip_once, locs, validate
from support.sites import HTML, Site, html, make_site, stored_entries

DE = "https://example.de"
FR = "https://example.fr"
SITES = {
    "de": {"base_url": DE, "hosts": ["example.de", "www.example.de"]},
    "fr": {"base_url": FR, "hosts": ["example.fr"]},
}


@pytest.fixture
def two(stack: str) -> Iterator[Site]:
    site = make_site(stack, {"sites": SITES, "store": "memory://"})
    yield site
    site.close()


def paths(site: Site, name: str) -> set[str]:
    return set(stored_entries(site.middleware.site(name)))


def test_each_site_lists_its_own_pages_under_its_own_origin(two: Site) -> None:
    assert two.fetch("/about", [("Host", "example.de")]) == 200
    assert two.fetch("/", [("Host", "www.example.de")]) == 200
    assert two.fetch("/xhtml", [("Host", "example.fr")]) == 200
    assert paths(two, "de") == {"/about", "/"}
    assert paths(two, "fr") == {"/xhtml"}
    assert two.middleware.flush(5.0)

    de = two.get("/sitemap.xml", {"Host": "example.de"})
    assert locs(validate(de.body)) == [f"{DE}/sitemap-1.xml.gz"]
    part = two.get("/sitemap-1.xml.gz", {"Host": "www.example.de"})
    assert sorted(locs(validate(gunzip_once(part.body)))) == [f"{DE}/", f"{DE}/about"]
    fr = two.get("/sitemap-1.xml.gz", {"Host": "example.fr"})
    assert locs(validate(gunzip_once(fr.body))) == [f"{FR}/xhtml"]

    robots = two.get("/robots.txt", {"Host": "example.fr"}).body.decode()
    assert f"Sitemap: {FR}/sitemap.xml" in robots
    assert DE not in robots
    robots = two.get("/robots.txt", {"Host": "example.de"}).body.decode()
    assert f"Sitemap: {DE}/sitemap.xml" in robots
    assert FR not in robots


@pytest.mark.parametrize(
    ("headers", "site"),
    [
        # The default port, case: the site's; recorded (allowed_hosts' rules).
        ([("Host", "EXAMPLE.FR:443")], "fr"),
        ([("Host", "Example.De")], "de"),
    ],
)
def test_a_host_selects_its_site(
    two: Site, headers: list[tuple[str, str]], site: str
) -> None:
    assert two.fetch("/about", headers) == 200
    other = "de" if site == "fr" else "fr"
    assert paths(two, site) == {"/about"}
    assert paths(two, other) == set()


def test_another_port_of_a_site_s_host_records_nothing(two: Site) -> None:
    """example.fr:8443 is another origin than https://example.fr, which an app
    building links from the request would name in a canonical link (and that
    removes a page): nothing is recorded for it (skipped.host)."""
    assert two.fetch("/about", [("Host", "EXAMPLE.FR:8443")]) == 200
    assert paths(two, "fr") == paths(two, "de") == set()


@pytest.mark.parametrize(
    "headers",
    [
        [("Host", "evil.example")],
        [("Host", "example.fr.evil.example")],
        [("Host", "evil.example"), ("X-Forwarded-Host", "example.fr")],
        [("Host", "evil.example"), ("Forwarded", "host=example.fr")],
        [("Host", "xn--exmple-cua.fr")],  # IDN: exämple.fr
        [("Host", "ex\xe4mple.fr")],  # its Unicode spelling, sent raw
        [("Host", "example.fr.")],  # the trailing dot: fr's documents, no record
        [("Host", "example.fr"), ("Host", "example.de")],  # two Host lines
        [("Host", "")],
    ],
)
def test_a_host_no_site_names_records_nothing(
    two: Site, headers: list[tuple[str, str]]
) -> None:
    assert two.fetch("/about", headers) == 200
    assert paths(two, "de") == set()
    assert paths(two, "fr") == set()
    skipped = two.middleware.stats()["skipped"]
    fr_skipped = two.middleware.site("fr").stats()["skipped"]
    assert skipped.get("host", 0) + fr_skipped.get("host", 0) == 1


def test_an_unknown_host_gets_the_default_site_s_documents(two: Site) -> None:
    assert two.fetch("/about", [("Host", "example.de")]) == 200
    assert paths(two, "de") == {"/about"}
    for host in ("evil.example", "example.fr.evil.example"):
        robots = two.get("/robots.txt", {"Host": host}).body.decode()
        assert f"Sitemap: {DE}/sitemap.xml" in robots
        index = two.get("/sitemap.xml", {"Host": host})
        assert locs(validate(index.body)) == [f"{DE}/sitemap-1.xml.gz"]
        assert "evil" not in index.body.decode()


def test_an_hreflang_cluster_spans_the_sites(
    two: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/twins on each site declares itself and the other site's /twins: each
    sitemap lists its page with both links (the other site's under its own
    origin), once both sites hold it; a member on no site of the app is
    dropped from what the page declares."""
    links = "".join(
        f'<link rel="alternate" hreflang="{lang}" href="{href}">'
        for lang, href in (
            ("de", f"{DE}/twins"),
            ("fr", f"{FR}/twins"),
            ("it", "https://example.it/twins"),
        )
    )
    monkeypatch.setitem(
        sites.ROUTES, "/twins", (200, {"Content-Type": HTML}, [html("T", links)])
    )
    cluster = {("de", f"{DE}/twins"), ("fr", f"{FR}/twins")}
    assert two.fetch("/twins", [("Host", "example.de")]) == 200
    assert two.middleware.flush(5.0)
    assert twins(two, "example.de") == {f"{DE}/twins": set()}
    assert two.fetch("/twins", [("Host", "example.fr")]) == 200
    assert two.middleware.flush(5.0)
    assert twins(two, "example.de") == {f"{DE}/twins": cluster}
    assert twins(two, "example.fr") == {f"{FR}/twins": cluster}


def twins(site: Site, host: str) -> dict[str, set[tuple[str, str]]]:
    """loc -> its links, in the validated part the site serves for ``host``."""
    part = validate(gunzip_once(site.get("/sitemap-1.xml.gz", {"Host": host}).body))
    return {
        url.findtext("sm:loc", namespaces=NS) or "": {
            (str(link.get("hreflang")), str(link.get("href")))
            for link in url.iterfind("xhtml:link", NS)
        }
        for url in part.iterfind("sm:url", NS)
    }


def test_one_base_url_is_one_site(stack: str) -> None:
    site = make_site(stack, {"base_url": DE, "store": "memory://"})
    try:
        assert site.middleware.site("") is site.middleware
        assert site.fetch("/about", [("Host", "example.de")]) == 200
        assert site.fetch("/", [("Host", "example.fr")]) == 200
        assert site.recorded() == ["/about"]
    finally:
        site.close()


def test_the_cli_takes_a_site(tmp_path: Any) -> None:
    """--site names a site's listing in the store the middleware wrote."""
    from click.testing import CliRunner

    from sitemap_middleware.cli import main

    store = f"sqlite:///{tmp_path}/s.db"
    site = make_site("wsgi", {"sites": SITES, "store": store})
    try:
        assert site.fetch("/about", [("Host", "example.de")]) == 200
        assert site.fetch("/", [("Host", "example.fr")]) == 200
        assert site.middleware.flush(5.0)
    finally:
        site.close()
    runner = CliRunner()
    de = runner.invoke(main, ["list", "--store", store, "--base-url", DE])
    fr = runner.invoke(
        main, ["list", "--store", store, "--base-url", FR, "--site", "fr"]
    )
    assert (de.exit_code, de.output) == (0, f"{DE}/about\n")
    assert (fr.exit_code, fr.output) == (0, f"{FR}/\n")
    bad = runner.invoke(main, ["stats", "--store", store, "--site", "../fr"])
    assert bad.exit_code == 2
    assert "a site's name is 1 to 16 lower-case letters" in bad.output


def test_a_store_of_one_site_is_the_default_site_s_listing(
    stack: str, tmp_path: Any
) -> None:
    """Adding 'sites' to a config of one base_url keeps its pages listed:
    the default site reads the store as it was written."""
    store = f"sqlite:///{tmp_path}/s.db"
    one = make_site(stack, {"base_url": DE, "store": store})
    try:
        assert one.fetch("/about", [("Host", "example.de")]) == 200
        assert one.recorded() == ["/about"]
    finally:
        one.close()
    two = make_site(stack, {"sites": SITES, "store": store})
    try:
        assert paths(two, "de") == {"/about"}
        assert paths(two, "fr") == set()
        index = two.get("/sitemap.xml", {"Host": "example.de"})
        assert locs(validate(index.body)) == [f"{DE}/sitemap-1.xml.gz"]
        assert two.get("/sitemap.xml", {"Host": "example.fr"}).status == 404
    finally:
        two.close()


SITE_APPS = {
    "wsgi": """
from flask import Flask
from sitemap_middleware import SitemapMiddleware

app = Flask(__name__)

@app.route("/")
@app.route("/about")
def page():
    return "<!doctype html><html><head><title>A page</title></head></html>"

app.wsgi_app = SitemapMiddleware(app.wsgi_app, CONFIG)
""",
    "asgi": """
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route
from sitemap_middleware.starlette import add_sitemap

async def page(request):
    return HTMLResponse("<!doctype html><html><title>A page</title></html>")

app = Starlette(routes=[Route("/", page), Route("/about", page)])
add_sitemap(app, CONFIG)
""",
}


def test_the_app_commands_take_a_site(
    stack: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """seed --site records the site's pages in its listing, under its origin;
    a name the config lacks is a one-line error."""
    from click.testing import CliRunner

    from sitemap_middleware.cli import main

    store = f"sqlite:///{tmp_path}/s.db"
    module = f"two_sites_{stack}"
    source = SITE_APPS[stack].replace("CONFIG", repr({"sites": SITES, "store": store}))
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    runner = CliRunner()
    seeded = runner.invoke(main, ["seed", "--app", f"{module}:app", "--site", "fr"])
    assert seeded.exit_code == 0, seeded.output
    fr = runner.invoke(
        main, ["list", "--store", store, "--site", "fr", "--base-url", FR]
    )
    assert sorted(fr.output.split()) == [f"{FR}/", f"{FR}/about"]
    de = runner.invoke(main, ["list", "--store", store, "--base-url", DE])
    # The default site's listing holds nothing (its file may not exist).
    assert (de.exit_code, de.output) == (0, "") or "no store at" in de.output
    wrong = runner.invoke(main, ["seed", "--app", f"{module}:app", "--site", "it"])
    assert wrong.exit_code == 2  # a bad option
    assert "the app's sitemap config has no site 'it' (its sites: de, fr)" in (
        wrong.output
    )
