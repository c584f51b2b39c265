"""Text sitemaps (``text_sitemap``) and the schema reference (``schema_location``),
both off by default, on both stacks.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.helpers import gunzip_once, locs, parse, validate
from support.sites import HTML, ROUTES, Site

from sitemap_middleware.render import XSI_NS

TEXT = {"text_sitemap": True}


def test_text_parts_list_the_urls_of_the_xml_parts(make: Callable[..., Site]) -> None:
    site = make({**TEXT, "store": "memory://?part_size=2"})
    site.visit("/", "/about", "/a&b", "/blog/café", "/blog/it's")
    for number in (1, 2, 3):
        xml = locs(validate(gunzip_once(site.get(f"/sitemap-{number}.xml.gz").body)))
        text = site.get(f"/sitemap-{number}.txt")
        assert text.status == 200
        assert text.headers["content-type"] == "text/plain; charset=utf-8"
        assert text.headers["x-robots-tag"] == "noindex"
        assert text.body.decode("utf-8").splitlines() == xml
    assert site.get("/sitemap-4.txt").status == 404
    # Three parts: no single text file can hold them all.
    assert site.get("/sitemap.txt").status == 404
    # The index lists the XML parts only.
    assert all(
        loc.endswith(".xml.gz") for loc in locs(validate(site.get("/sitemap.xml").body))
    )


def test_one_part_is_also_sitemap_txt(make: Callable[..., Site]) -> None:
    site = make(TEXT)
    site.visit("/", "/a&b")
    whole = site.get("/sitemap.txt")
    assert whole.status == 200
    assert whole.body == b"http://localhost/\nhttp://localhost/a&b\n"
    assert whole.body == site.get("/sitemap-1.txt").body


def test_text_parts_have_validators_304_and_head(make: Callable[..., Site]) -> None:
    site = make(TEXT)
    site.visit("/")
    for path in ("/sitemap-1.txt", "/sitemap.txt"):
        first = site.get(path)
        etag = first.headers["etag"]
        assert first.headers["cache-control"] == "public, max-age=3600"
        assert site.get(path, {"If-None-Match": etag}).status == 304
        modified = first.headers["last-modified"]  # alone, no 304 (validators.py)
        assert site.get(path, {"If-Modified-Since": modified}).status == 200
        head = site.head(path)
        assert (head.status, head.body) == (200, b"")
        assert head.headers["content-length"] == str(len(first.body))
        assert site.request("POST", path).status == 405
    # Another document than the gzip part: another ETag.
    assert (
        site.get("/sitemap-1.txt").headers["etag"]
        != (site.get("/sitemap-1.xml.gz").headers["etag"])
    )
    site.visit("/about")
    assert site.get("/sitemap-1.txt").headers["etag"] != etag


def test_sitemap_txt_of_another_part_has_another_etag(
    make: Callable[..., Site],
) -> None:
    """/sitemap.txt is whichever part is the one: its ETag names the part, as
    a version counts within its part (two parts' first versions alike)."""
    site = make({**TEXT, "store": "memory://?part_size=1"})
    site.visit("/")
    first = site.get("/sitemap.txt")
    site.visit("/about")  # part 2
    assert site.get("/sitemap.txt").status == 404  # two parts: none is the one
    ROUTES["/"] = (410, {"Content-Type": HTML}, [b"gone"])
    assert site.get("/").status == 410
    assert site.recorded() == ["/about"]
    second = site.get("/sitemap.txt", {"If-None-Match": first.headers["etag"]})
    assert second.status == 200 and second.body == b"http://localhost/about\n"
    assert second.headers["etag"] != first.headers["etag"]


def test_text_paths_belong_to_the_app_when_off(make: Callable[..., Site]) -> None:
    ROUTES["/sitemap.txt"] = (200, {"Content-Type": "text/plain"}, [b"the app's"])
    ROUTES["/sitemap-1.txt"] = (
        200,
        {"Content-Type": "text/plain"},
        [b"also the app's"],
    )
    site = make()
    site.visit("/")
    assert site.get("/sitemap.txt").body == b"the app's"
    assert site.get("/sitemap-1.txt").body == b"also the app's"


@pytest.mark.parametrize(
    "path", ["/sitemap-01.txt", "/sitemap-1.txt.gz", "/sitemap-.txt"]
)
def test_bad_text_paths_are_404(make: Callable[..., Site], path: str) -> None:
    site = make(TEXT)
    site.visit("/")
    assert site.get(path).status == 404


def test_schema_location_names_the_schemas(make: Callable[..., Site]) -> None:
    ROUTES["/gallery"] = (
        200,
        {"Content-Type": HTML},
        [
            b"<!doctype html><html><head><title>G</title></head><body><main>"
            b'<h1>Gallery</h1><img src="/a.png"></main></body></html>'
        ],
    )
    site = make({"schema_location": True})
    site.visit("/", "/gallery")
    index = validate(site.get("/sitemap.xml").body)
    where = index.get(f"{{{XSI_NS}}}schemaLocation").split()
    assert where == [
        "http://www.sitemaps.org/schemas/sitemap/0.9",
        "http://www.sitemaps.org/schemas/sitemap/0.9/siteindex.xsd",
    ]
    part = validate(gunzip_once(site.get("/sitemap-1.xml.gz").body))
    pairs = part.get(f"{{{XSI_NS}}}schemaLocation").split()
    sitemaps = "http://www.sitemaps.org/schemas/sitemap/0.9"
    images = "http://www.google.com/schemas/sitemap-image/1.1"
    assert dict(zip(pairs[::2], pairs[1::2], strict=True)) == {
        sitemaps: f"{sitemaps}/sitemap.xsd",
        "http://www.w3.org/1999/xhtml": (
            "http://www.w3.org/2002/08/xhtml/xhtml1-strict.xsd"
        ),
        images: f"{images}/sitemap-image.xsd",
    }
    assert "image:image" in gunzip_once(site.get("/sitemap-1.xml.gz").body).decode()


def test_no_schema_location_by_default(make: Callable[..., Site]) -> None:
    site = make()
    site.visit("/")
    assert (
        parse(site.get("/sitemap.xml").body).get(f"{{{XSI_NS}}}schemaLocation") is None
    )
    part = gunzip_once(site.get("/sitemap-1.xml.gz").body)
    assert b"schemaLocation" not in part
