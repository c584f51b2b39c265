"""The command line on a store that holds sections: stats, list, export and import
show or take them; on a store without sections their output is as before."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from support.cli import run
from support.helpers import gunzip_once, locs, validate

from sitemap_middleware import Entry, open_store
from sitemap_middleware.cli import Exit

BASE = "https://www.example.com"
WHEN = datetime(2024, 5, 1, 12, 30, tzinfo=timezone.utc)


@pytest.fixture
def uri(uri: str) -> str:
    """A SQLite store of three sections, parts of two URLs."""
    uri += "?part_size=2"
    with open_store(uri) as store:
        store.upsert(
            [
                Entry("/", WHEN, route="/", section=""),
                Entry("/blog/a", WHEN, route="/blog/<slug>", section="posts"),
                Entry("/tags/x", WHEN, section="tags"),
                Entry("/blog/b", WHEN, route="/blog/<slug>", section="posts"),
                Entry("/blog/c", WHEN, route="/blog/<slug>", section="posts"),
            ]
        )
    return uri


def test_stats_count_urls_and_parts_per_section(uri: str) -> None:
    code, out, _ = run("stats", "--store", uri)
    assert code == Exit.OK
    assert "5 URLs in 4 parts" in out
    assert "sections:\n  default: 1 URL in 1 part\n  posts: 3 URLs in 2 parts\n" in out
    assert "  tags: 1 URL in 1 part\n" in out
    assert re.search(
        r"part 2: 2 URLs, lastmod 2024-05-01T12:30:00\+00:00, version \S+,"
        r" section posts\n",
        out,
    )
    _, out, _ = run("stats", "--store", uri, "--json")
    stats = json.loads(out)
    assert stats["sections"] == {
        "default": {"urls": 1, "parts": [1]},
        "posts": {"urls": 3, "parts": [2, 4]},
        "tags": {"urls": 1, "parts": [3]},
    }
    assert [p["section"] for p in stats["parts"]] == [
        "default",
        "posts",
        "tags",
        "posts",
    ]


def test_list_names_each_urls_section_and_filters_by_one(uri: str) -> None:
    _, out, _ = run("list", "--store", uri, "--base-url", BASE, "--format", "csv")
    assert out.splitlines() == [
        "url,lastmod,route,section",
        f"{BASE}/,2024-05-01T12:30:00+00:00,/,default",
        f"{BASE}/blog/a,2024-05-01T12:30:00+00:00,/blog/<slug>,posts",
        f"{BASE}/blog/b,2024-05-01T12:30:00+00:00,/blog/<slug>,posts",
        f"{BASE}/tags/x,2024-05-01T12:30:00+00:00,,tags",
        f"{BASE}/blog/c,2024-05-01T12:30:00+00:00,/blog/<slug>,posts",
    ]
    code, out, _ = run("list", "--store", uri, "--base-url", BASE, "--section", "posts")
    assert code == Exit.OK
    assert out.split() == [f"{BASE}/blog/a", f"{BASE}/blog/b", f"{BASE}/blog/c"]
    _, out, _ = run(
        "list",
        "--store",
        uri,
        "--base-url",
        BASE,
        "--section",
        "default",
        "--format",
        "json",
    )
    assert json.loads(out) == [
        {
            "url": f"{BASE}/",
            "lastmod": "2024-05-01T12:30:00+00:00",
            "route": "/",
            "section": "default",
        }
    ]
    code, _, err = run("list", "--store", uri, "--base-url", BASE, "--section", "nope")
    assert code == Exit.PROBLEMS
    assert err.strip() == "Error: no part holds section 'nope'"


def test_export_names_each_sections_parts(uri: str, tmp_path: Path) -> None:
    code, out, _ = run(
        "export", "--store", uri, "--base-url", BASE, str(tmp_path / "out")
    )
    assert code == Exit.OK
    assert "section posts: 3 URLs in sitemap-2.xml.gz, sitemap-4.xml.gz\n" in out
    assert "section default: 1 URL in sitemap-1.xml.gz\n" in out
    index = validate((tmp_path / "out" / "sitemap.xml").read_bytes())
    assert locs(index) == [f"{BASE}/sitemap-{n}.xml.gz" for n in (1, 2, 3, 4)]
    part = (tmp_path / "out" / "sitemap-4.xml.gz").read_bytes()
    assert locs(validate(gunzip_once(part))) == [f"{BASE}/blog/c"]


def test_import_puts_new_urls_in_the_section_asked(uri: str, tmp_path: Path) -> None:
    source = tmp_path / "urls.txt"
    source.write_text(f"{BASE}/blog/d\n{BASE}/blog/a\n{BASE}/news/1\n")
    code, _, err = run(
        "import", "--store", uri, "--base-url", BASE, "--section", "posts", str(source)
    )
    assert code == Exit.OK, err
    with open_store(uri) as store:
        laid = {
            e.path: p.section for p in store.parts() for e in store.entries(p.number)
        }
    assert laid["/blog/d"] == laid["/news/1"] == laid["/blog/a"] == "posts"
    code, _, err = run(
        "import",
        "--store",
        uri,
        "--base-url",
        BASE,
        "--section",
        "Bad Name",
        str(source),
    )
    assert code == Exit.USAGE
    assert "--section 'Bad Name' must be a short lower-case word" in err


def test_a_store_without_sections_shows_none(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'plain.sqlite3'}"
    with open_store(uri) as store:
        store.upsert([Entry("/", WHEN), Entry("/about", WHEN)])
    _, out, _ = run("stats", "--store", uri)
    assert "section" not in out
    _, out, _ = run("stats", "--store", uri, "--json")
    assert "sections" not in json.loads(out)
    _, out, _ = run("list", "--store", uri, "--base-url", BASE, "--format", "csv")
    assert out.splitlines()[0] == "url,lastmod,route"
    _, out, _ = run("export", "--store", uri, "--base-url", BASE, str(tmp_path / "out"))
    assert "\nsection " not in out
