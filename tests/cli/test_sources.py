"""``import`` against hostile sources: an index naming parts on another site or a
redirect away, documents shaped to stall or swell the parser, a source refused
half-way, and pages the store already holds.
"""

from __future__ import annotations

import gzip
import http.server
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support.helpers import serve_in_thread, stored_paths

from sitemap_middleware import Entry, open_store
from sitemap_middleware.cli import Exit, main
from sitemap_middleware.cli.sources import MAX_DEPTH, MAX_ELEMENTS

BASE = "https://www.example.com"
ROOT = Path(__file__).resolve().parents[2]
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
WHEN = datetime(2024, 5, 1, 12, 30, tzinfo=timezone.utc)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _import(store: str, source: str) -> tuple[int, str, str]:
    return _run("import", "--store", store, "--base-url", BASE, source)


def urlset(*paths: str) -> str:
    urls = "".join(f"<url><loc>{BASE}{path}</loc></url>" for path in paths)
    return f'<?xml version="1.0"?><urlset xmlns="{NS}">{urls}</urlset>'


def index(*locs: str) -> str:
    parts = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0"?><sitemapindex xmlns="{NS}">{parts}</sitemapindex>'


class Site:
    """A real HTTP server: its documents by path (a ``str`` body, or a
    ``(status, location)`` redirect), and every path it was asked for."""

    def __init__(self) -> None:
        self.documents: dict[str, str | tuple[int, str]] = {}
        self.asked: list[str] = []
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.asked.append(self.path)
                found = site.documents.get(self.path)
                if isinstance(found, tuple):
                    self.send_response(found[0])
                    self.send_header("Location", found[1])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = (found or "").encode()
                self.send_response(200 if found is not None else 404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        serve_in_thread(self.server)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sites() -> Iterator[tuple[Site, Site]]:
    """The source's site and another one (another port: another origin)."""
    pair = (Site(), Site())
    yield pair
    for site in pair:
        site.close()


@pytest.fixture
def store(tmp_path: Path) -> str:
    uri = f"sqlite:///{tmp_path / 's.sqlite3'}"
    open_store(uri).upsert([Entry("/kept", WHEN, "f", title="Kept")])
    return uri


# -- only what it was given ------------------------------------------------------


def test_an_index_over_http_is_followed_on_its_own_origin_only(
    sites: tuple[Site, Site], store: str
) -> None:
    """A part on another origin is reported and never requested; one on the
    index's origin, named absolute or relative, is read."""
    own, other = sites
    own.documents["/sitemap.xml"] = index(
        f"{own.url}/a.xml", "b.xml", f"{other.url}/evil.xml"
    )
    own.documents["/a.xml"] = urlset("/a")
    own.documents["/b.xml"] = urlset("/b")
    other.documents["/evil.xml"] = urlset("/evil")
    code, _, err = _import(store, f"{own.url}/sitemap.xml")
    assert code == Exit.PROBLEMS
    assert f"{other.url}/evil.xml: not on the origin of the index" in err
    assert other.asked == []
    assert stored_paths(store) == ["/a", "/b", "/kept"]


def test_a_redirect_off_the_origin_is_not_followed(
    sites: tuple[Site, Site], store: str
) -> None:
    own, other = sites
    own.documents["/sitemap.xml"] = index(f"{own.url}/a.xml", f"{own.url}/moved.xml")
    own.documents["/a.xml"] = urlset("/a")
    own.documents["/moved.xml"] = (302, f"{other.url}/evil.xml")
    other.documents["/evil.xml"] = urlset("/evil")
    code, _, err = _import(store, f"{own.url}/sitemap.xml")
    assert code == Exit.PROBLEMS
    assert "off the origin of the index" in err
    assert other.asked == []
    assert stored_paths(store) == ["/a", "/kept"]


def test_a_redirect_to_another_scheme_is_not_followed(
    sites: tuple[Site, Site], store: str
) -> None:
    """Not even for the source itself: urllib would follow one to ftp:."""
    own, _ = sites
    own.documents["/sitemap.xml"] = (302, "ftp://127.0.0.1:1/x.xml")
    code, _, err = _import(store, f"{own.url}/sitemap.xml")
    assert code == Exit.SOURCE
    assert "redirected to ftp://127.0.0.1:1/x.xml, not http(s)" in err
    assert stored_paths(store) == ["/kept"]


def test_a_file_index_reads_only_files_beside_it(tmp_path: Path, store: str) -> None:
    """A file index's URL names the file of its name beside the index; a
    path out of its folder (a ``file:`` URL, a parent) is reported."""
    folder = tmp_path / "export"
    folder.mkdir()
    (tmp_path / "secret.xml").write_text(urlset("/secret"))
    (folder / "part.xml").write_text(urlset("/part"))
    (folder / "sitemap.xml").write_text(
        index(
            "https://elsewhere.example/deep/part.xml",
            f"file://{tmp_path}/secret.xml",
            "../",
        )
    )
    code, _, err = _import(store, str(folder / "sitemap.xml"))
    assert code == Exit.PROBLEMS
    assert "../: names no file to look for in the index's folder or below" in err
    assert f"file://{tmp_path}/secret.xml: neither an http(s) URL" in err
    assert stored_paths(store) == ["/kept", "/part"]


# What an index may name that is no part of it: each is reported in a line and
# skipped, the rest imported, nothing stored lost. A remote index's: schemes
# other than http(s), whatever their case, another host, port or scheme, user
# info (to send credentials, or to hide the host).
REMOTE_REFUSED = [
    ("ftp://127.0.0.1/x.xml", "not an http(s) URL"),
    ("FTP://127.0.0.1/x.xml", "not an http(s) URL"),
    ("gopher:x.xml", "not an http(s) URL"),
    ("data:text/xml;base64,PHVybHNldC8+", "not an http(s) URL"),
    ("javascript:alert(1)", "not an http(s) URL"),
    ("file:///etc/passwd", "not an http(s) URL"),
    ("File:x.xml", "not an http(s) URL"),
    ("//evil.example/x.xml", "not on the origin of the index"),
    ("{other}/x.xml", "not on the origin of the index"),
    ("{own_https}/x.xml", "not on the origin of the index"),
    ("{own_user}/x.xml", "holds user info"),
    ("http://{own_host}@evil.example/x.xml", "holds user info"),
    ("http://[::1/x.xml", "not a URL"),
]


@pytest.mark.parametrize(("loc", "reason"), REMOTE_REFUSED)
def test_a_remote_index_reads_its_own_origin_over_http_only(
    sites: tuple[Site, Site],
    store: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    loc: str,
    reason: str,
) -> None:
    own, other = sites
    host = own.url.removeprefix("http://")
    loc = loc.format(
        other=other.url,
        own_https=f"https://{host}",
        own_user=f"http://user:SECRETPW@{host}",
        own_host=host,
    )
    # What an index's part was once read from when its scheme was not
    # http(s): a path of the working directory.
    monkeypatch.chdir(tmp_path)
    planted = tmp_path / loc
    if planted.parent.is_relative_to(tmp_path) and loc.isprintable():
        planted.parent.mkdir(parents=True, exist_ok=True)
        planted.write_text(urlset("/stolen"))
    own.documents["/sitemap.xml"] = index("/a.xml", loc)
    own.documents["/a.xml"] = urlset("/a")
    other.documents["/x.xml"] = urlset("/stolen")
    code, out, err = _import(store, f"{own.url}/sitemap.xml")
    assert code == Exit.PROBLEMS, err
    assert err.count("\n") == 1 and err.startswith("skipped "), err
    assert f": {reason}" in err
    assert "SECRETPW" not in out + err
    assert other.asked == []
    assert stored_paths(store) == ["/a", "/kept"]


@pytest.mark.parametrize(
    ("loc", "asked"),
    [
        ("relative/path.xml", "/relative/path.xml"),
        ("/etc/passwd", "/etc/passwd"),
        ("%2e%2e/%2e%2e/x.xml", "/%2e%2e/%2e%2e/x.xml"),
        ("HTTP://{host}/upper.xml", "/upper.xml"),
    ],
)
def test_a_remote_index_part_is_a_request_to_its_origin(
    sites: tuple[Site, Site],
    store: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    loc: str,
    asked: str,
) -> None:
    """A path, relative or absolute, names a URL on the index's origin: it is
    requested there, never read from this machine."""
    own, _ = sites
    monkeypatch.chdir(tmp_path)
    (tmp_path / "relative").mkdir()
    (tmp_path / "relative" / "path.xml").write_text(urlset("/stolen"))
    own.documents["/sitemap.xml"] = index(
        loc.format(host=own.url.removeprefix("http://"))
    )
    own.documents[asked] = urlset("/b")
    code, _, err = _import(store, f"{own.url}/sitemap.xml")
    assert (code, err) == (Exit.OK, "")
    assert own.asked == ["/sitemap.xml", asked]
    assert stored_paths(store) == ["/b", "/kept"]


LOCAL_REFUSED = [
    ("../secret.xml", "names no file"),
    ("../../../../../../etc/passwd", "names no file"),
    ("%2e%2e/secret.xml", "names no file"),
    ("sub/../../secret.xml", "names no file"),
    ("https://www.example.com/..%2fsecret.xml", "names no file"),
    ("link.xml", "names no file"),  # a symbolic link out of the folder
    ("{root}/secret.xml", "neither an http(s) URL nor a relative path"),
    ("file://{root}/secret.xml", "neither an http(s) URL nor a relative path"),
    ("FILE:///etc/passwd", "neither an http(s) URL nor a relative path"),
    ("//evil.example/secret.xml", "neither an http(s) URL nor a relative path"),
    ("ftp://evil.example/secret.xml", "neither an http(s) URL nor a relative path"),
    ("gopher:secret.xml", "neither an http(s) URL nor a relative path"),
    ("data:text/xml;base64,PHVybHNldC8+", "neither an http(s) URL nor a relative path"),
]


@pytest.mark.parametrize(("loc", "reason"), LOCAL_REFUSED)
def test_a_file_index_reads_files_in_its_folder_only(
    tmp_path: Path, store: str, loc: str, reason: str
) -> None:
    folder = tmp_path / "export"
    (folder / "sub").mkdir(parents=True)
    (tmp_path / "secret.xml").write_text(urlset("/secret"))
    (folder / "link.xml").symlink_to(tmp_path / "secret.xml")
    (folder / "sub" / "part.xml").write_text(urlset("/below"))
    (folder / "part.xml").write_text(urlset("/part"))
    hostile = loc.format(root=tmp_path)
    (folder / "sitemap.xml").write_text(
        index("sub/part.xml", "https://www.example.com/deep/part.xml", hostile)
    )
    code, _, err = _import(store, str(folder / "sitemap.xml"))
    assert code == Exit.PROBLEMS
    assert err == f"skipped {hostile}: {reason}" + err.partition(reason)[2], err
    assert err.count("\n") == 1
    assert stored_paths(store) == ["/below", "/kept", "/part"]


def test_a_part_an_index_names_many_times_is_read_once(
    sites: tuple[Site, Site], store: str
) -> None:
    """An index of a few kilobytes naming one large part 50,000 times (the
    protocol's limit) would cost 50,000 reads of it: each part is read once,
    however it is spelled."""
    site, _ = sites
    site.documents["/part.xml"] = urlset("/a")
    site.documents["/sitemap.xml"] = index(
        *[f"{site.url}/part.xml"] * 3, "/part.xml", "part.xml"
    )
    code, _, err = _import(store, f"{site.url}/sitemap.xml")
    assert code == Exit.OK, err
    assert site.asked == ["/sitemap.xml", "/part.xml"]
    assert stored_paths(store) == ["/a", "/kept"]


def test_a_file_index_naming_a_part_many_times_reads_it_once(
    tmp_path: Path, store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside a file index, every ``<loc>`` of the same file name is one file:
    read once."""
    from sitemap_middleware.cli import sources

    (tmp_path / "part.xml").write_text(urlset("/a"))
    (tmp_path / "sitemap.xml").write_text(
        index(*(f"https://{n}.example/part.xml" for n in range(5)))
    )
    opened: list[str] = []
    real = sources._opened

    def counting(path: str, source: str) -> Any:
        opened.append(path)
        return real(path, source)

    monkeypatch.setattr(sources, "_opened", counting)
    code, _, err = _import(store, str(tmp_path / "sitemap.xml"))
    assert code == Exit.OK, err
    assert opened.count(str(tmp_path / "part.xml")) == 1  # plain: read once
    assert stored_paths(store) == ["/a", "/kept"]


@pytest.mark.parametrize(
    "document",
    [
        "\ufeff" + urlset("/a", "/b"),
        f"\ufeff{BASE}/a\n{BASE}/b\n",  # a text sitemap
    ],
    ids=["xml", "text"],
)
def test_a_byte_order_mark_is_no_part_of_the_document(
    tmp_path: Path, store: str, document: str
) -> None:
    """Editors on Windows start UTF-8 files with a byte order mark: an XML
    sitemap so written is XML, a text sitemap's first URL a URL."""
    source = tmp_path / "sitemap.txt"
    source.write_text(document, encoding="utf-8")
    code, _, err = _import(store, str(source))
    assert (code, err) == (Exit.OK, "")
    assert stored_paths(store) == ["/a", "/b", "/kept"]


def test_a_source_that_sends_a_byte_now_and_then_is_refused_in_time(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that never pauses long enough to trip the read timeout, yet
    never ends: refused once the whole fetch passes its deadline, the store
    unchanged."""
    from sitemap_middleware.cli import sources

    monkeypatch.setattr(sources, "FETCH_SECONDS", 0.5)
    stop = threading.Event()

    class Dribble(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(10**6))
            self.end_headers()
            self.wfile.write(urlset("/a").encode()[:-10])
            try:
                while not stop.wait(0.05):
                    self.wfile.write(b" ")
                    self.wfile.flush()
            except OSError:
                pass  # the client left

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Dribble)
    serve_in_thread(server)
    started = time.monotonic()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/sitemap.xml"
        code, _, err = _import(store, url)
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
    assert code == Exit.SOURCE
    assert "took more than 0.5 s to send" in err
    assert time.monotonic() - started < 10
    assert stored_paths(store) == ["/kept"]


# -- hostile shapes ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "words"),
    [
        (
            f'<urlset xmlns="{NS}"><url>{"<x>" * (MAX_DEPTH + 2)}',
            "nested deeper than",
        ),
        (
            f'<urlset xmlns="{NS}"><url>{"<x/>" * (MAX_ELEMENTS + 1)}</url></urlset>',
            "in one entry",
        ),
        (f'<urlset xmlns="{NS}"><url><loc>{BASE}/a</loc></url><url>', "well-formed"),
    ],
)
def test_a_hostile_shape_is_refused_and_adds_nothing(
    tmp_path: Path, store: str, document: str, words: str
) -> None:
    """Refused whole, with a clear error, even after thousands of good
    entries (more than one write's batch): the store is as it was."""
    good = "".join(f"<url><loc>{BASE}/p/{n}</loc></url>" for n in range(2500))
    source = tmp_path / "hostile.xml"
    source.write_text(document.replace("<url>", good + "<url>", 1))
    code, _, err = _import(store, str(source))
    assert code == Exit.SOURCE
    assert words in err
    assert stored_paths(store) == ["/kept"]


@pytest.mark.slow
def test_one_long_token_costs_time_in_proportion(tmp_path: Path, store: str) -> None:
    """A gzip of a few hundred kilobytes holding one 48 MiB comment: parsed
    in seconds, not the hours a cost growing with the square of the token
    took (2, 4, 8 MiB: 3.7, 7.5, 20.7 s). A 48 MiB attribute value, and a
    start tag of 800,000 attributes (which cost 40 times its size to read),
    are refused at their first MiB without a '>', the store unchanged."""
    big = 48 * 1024 * 1024
    attributes = " ".join(f"a{n}='x'" for n in range(800_000))
    for name, filler, code in (
        ("comment", f"<!--{'a>' * (big // 2)}-->", Exit.OK),
        ("value", f'<x y="{"a" * big}"/>', Exit.SOURCE),
        ("attributes", f"<x {attributes}/>", Exit.SOURCE),
    ):
        source = tmp_path / f"{name}.xml.gz"
        source.write_bytes(
            gzip.compress(urlset("/a").replace("<url>", filler + "<url>").encode())
        )
        done = subprocess.run(
            [sys.executable, "-m", "sitemap_middleware", "import", str(source)],
            cwd=ROOT,
            env={"SITEMAP_STORE": store, "SITEMAP_BASE_URL": BASE, "PATH": ""},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == code, done.stderr
        if code == Exit.SOURCE:
            assert "bytes without a '>'" in done.stderr
        assert stored_paths(store) == ["/a", "/kept"]  # the comment's import, alone


MATRIX = (
    "a matrix parameter looks like a credential (;jsessionid=...): a visit"
    " stores the page"
)


def test_an_import_publishes_nothing_the_config_refuses(
    tmp_path: Path, store: str
) -> None:
    """What a visit could never record is reported and skipped: an excluded
    path, a secret link, a session id in a matrix parameter (a visit stores
    the path without it), the middleware's own path, an empty segment."""
    source = tmp_path / "sitemap.xml"
    refused = {
        "/admin/users": "excluded by exclude pattern '*/admin/*'",
        "/invite/550e8400-e29b-41d4-a716-446655440000": "a path segment looks like",
        "/pricing;jsessionid=0123456789ABCDEF": f"{MATRIX} as '/pricing'",
        "/docs;token=s3cr3t;v=2": f"{MATRIX} as '/docs;v=2'",
        "/sitemap.xml": "a path the middleware answers itself",
        "/a//b": "an empty path segment",
    }
    source.write_text(urlset("/fine", *refused))
    code, out, err = _import(store, str(source))
    assert code == Exit.PROBLEMS
    assert f"{len(refused)} skipped" in out
    for path, words in refused.items():
        assert f"skipped {BASE}{path}: {words}" in err
    assert stored_paths(store) == ["/fine", "/kept"]


def test_an_import_keeps_images_without_their_credentials(
    tmp_path: Path, store: str
) -> None:
    """The site's own images are kept as paths without their query (signed
    URLs, tokens), as a visit records them; another host's as given, unless
    a user name and password or a query ride in them."""
    images = {
        f"{BASE}/img/a.png?token=SECRET1&amp;X-Amz-Signature=abc": "/img/a.png",
        f"{BASE}/img/b.png": "/img/b.png",
        "https://cdn.example.net/c.png": "https://cdn.example.net/c.png",
        "https://admin:SECRET2@cdn.example.net/d.png": None,
        "https://cdn.example.net/e.png?sig=SECRET3": None,
        "ftp://cdn.example.net/f.png": None,
    }
    body = "".join(
        f"<image:image><image:loc>{url}</image:loc></image:image>" for url in images
    )
    source = tmp_path / "sitemap.xml"
    source.write_text(
        f'<?xml version="1.0"?><urlset xmlns="{NS}" xmlns:image='
        f'"http://www.google.com/schemas/sitemap-image/1.1"><url><loc>{BASE}/p'
        f"</loc>{body}</url></urlset>"
    )
    code, _, err = _import(store, str(source))
    assert code == Exit.OK, err
    found = open_store(store)
    try:
        published = b"".join(found.fragments(1)).replace(b"\0", BASE.encode())
    finally:
        found.close()
    listed = re.findall(rb"<image:loc>([^<]*)</image:loc>", published)
    assert [url.decode() for url in listed] == [
        kept if kept.startswith("https:") else BASE + kept
        for kept in images.values()
        if kept
    ]
    assert b"SECRET" not in published


# -- adds, never overrules -----------------------------------------------------------


def test_an_import_never_overrules_what_visits_recorded(
    tmp_path: Path, store: str
) -> None:
    """A page the store holds keeps its lastmod, fingerprint and title, even
    when the source claims a later change; new pages are added."""
    source = tmp_path / "sitemap.xml"
    source.write_text(
        urlset("/kept", "/new").replace(
            "/kept</loc>", "/kept</loc><lastmod>2025-01-01T00:00:00Z</lastmod>"
        )
    )
    code, out, _ = _import(store, str(source))
    assert code == Exit.OK
    assert "1 already in the store, kept as they are" in out
    found = open_store(store)
    try:
        entries = {e.path: e for p in found.parts() for e in found.entries(p.number)}
    finally:
        found.close()
    assert sorted(entries) == ["/kept", "/new"]
    kept = entries["/kept"]
    assert (kept.lastmod, kept.fingerprint, kept.title) == (WHEN, "f", "Kept")


# -- the fast path of an entry -------------------------------------------------------

_SEGMENTS = st.sampled_from(
    ["a", "b-c.html", ".", "..", ".well-known", "", "%41", "%2f", "é", "x?y=1", "#f",
     ";p=1", "a b", "A~_!$&'()*+,;=:@", "\t", "token123abcdef4567890xyz", "shop"]
)  # fmt: skip
_LOCS = st.one_of(
    st.builds(
        lambda origin, segments: origin + "".join("/" + s for s in segments),
        st.sampled_from(
            [
                f"{BASE}",
                f"{BASE}/shop",
                "https://WWW.example.com",
                "https://www.example.com:443",
                "http://www.example.com",
                "https://www.example.org",
                "https://user@www.example.com",
                "",
                " ",
            ]
        ),
        st.lists(_SEGMENTS, max_size=5),
    ),
    st.text(max_size=20),
)
_LASTMODS = st.one_of(
    st.none(),
    st.builds(
        "{:04d}-{:02d}-{:02d}".format,
        st.integers(1, 9999),
        st.integers(0, 13),
        st.integers(0, 32),
    ),
    st.builds(
        lambda day, time, zone: f"{day}T{time}{zone}",
        st.sampled_from(["2024-05-01", "2099-01-01", "1999-12-31", "2024-5-1"]),
        st.sampled_from(["10:00", "10:00:30", "10:00:30.25", "25:00", ""]),
        st.sampled_from(["Z", "+02:00", "-05:30", "", "+2", " "]),
    ),
    st.sampled_from(["2024", "2024-05", "2024-5", "24", "", " ", "now"]),
    st.text(max_size=12),
)
_CHANGEFREQS = st.one_of(st.none(), st.sampled_from(["daily", "weekly", "Daily", ""]))


_PRIORITIES = st.one_of(
    st.none(),
    st.sampled_from(["0.5", "1.0", "1", "0", "2", "-0.1", "nan", "x", "1e-1", ""]),
)


def _element(tag: str, text: str | None) -> str:
    from xml.sax.saxutils import escape

    if text is None:
        return ""
    # The characters XML 1.0 allows (§2.2): a sitemap holds no others.
    kept = "".join(
        c
        for c in text
        if c == "\t"
        or " " <= c <= "\ud7ff"
        or "\ue000" <= c <= "\ufffd"
        or c >= "\U00010000"
    )
    return f"<{tag}>{escape(kept)}</{tag}>"


@settings(max_examples=400, deadline=None)
@given(
    _LOCS,
    _LASTMODS,
    _CHANGEFREQS,
    _PRIORITIES,
    st.sampled_from(["", "<loc>second</loc>", "<other/>", "<image:image/>"]),
    st.sampled_from(["", "/shop"]),
)
def test_the_fast_path_gives_what_the_full_reading_gives(
    loc: str,
    lastmod: str | None,
    changefreq: str | None,
    priority: str | None,
    extra: str,
    prefix: str,
) -> None:
    """Any <url>, plain or not: the same entry, or the same problem."""
    from xml.etree.ElementTree import fromstring

    from sitemap_middleware.cli.sources import SITEMAP_NS, _Reader

    body = (
        _element("loc", loc)
        + _element("lastmod", lastmod)
        + _element("changefreq", changefreq)
        + _element("priority", priority)
        + extra
    )
    url = fromstring(
        f'<url xmlns="{NS}" xmlns:image="http://www.google.com/schemas/'
        f'sitemap-image/1.1">{body}</url>'
    )
    reader = _Reader("s.xml", BASE + prefix, frozenset(), SITEMAP_NS)
    assert reader.entry(url) == reader.full(url)


# Each W3C datetime form (https://www.w3.org/TR/NOTE-datetime) and what it
# reads as (a store keeps whole seconds); None: refused. A date alone is read
# as UTC; a time needs a zone.
_FORMS = [
    ("2024", datetime(2024, 1, 1, tzinfo=timezone.utc)),
    ("2024-05", datetime(2024, 5, 1, tzinfo=timezone.utc)),
    ("2024-05-02", datetime(2024, 5, 2, tzinfo=timezone.utc)),
    ("2024-05-02T10:20Z", datetime(2024, 5, 2, 10, 20, tzinfo=timezone.utc)),
    ("2024-05-02T10:20:30+02:00", datetime(2024, 5, 2, 8, 20, 30, tzinfo=timezone.utc)),
    (
        "2024-05-02T10:20:30.5-01:00",
        datetime(2024, 5, 2, 11, 20, 30, tzinfo=timezone.utc),
    ),
    (
        "\n  2024-05-02T10:20:30Z\n",
        datetime(2024, 5, 2, 10, 20, 30, tzinfo=timezone.utc),
    ),
    (" 2024-05 ", datetime(2024, 5, 1, tzinfo=timezone.utc)),
    ("2024-05-02T10:20:30", None),
    ("2024-13-01", None),
    ("yesterday", None),
]


@pytest.mark.parametrize("plain", [True, False], ids=["column", "element"])
def test_each_w3c_form_reads_as_its_moment_and_a_later_one_as_now(
    tmp_path: Path, plain: bool
) -> None:
    """The column reading of a plain document and the parser's reading of
    one that is not (an image in its first <url>) give each form the same
    moment; a moment later than the import's is stored as the import's."""
    forms = [*_FORMS, ("2999-01-01T00:00:00Z", "now")]
    image = "" if plain else "<image:image><image:loc>/i.png</image:loc></image:image>"
    urls = "".join(
        f"<url><loc>{BASE}/{index}</loc><lastmod>{text}</lastmod>"
        f"{image if index == 0 else ''}</url>"
        for index, (text, _) in enumerate(forms)
    )
    source = tmp_path / "dates.xml"
    source.write_text(
        f'<urlset xmlns="{NS}" xmlns:image="http://www.google.com/schemas/'
        f'sitemap-image/1.1">{urls}</urlset>'
    )
    uri = f"sqlite:///{tmp_path / 's.sqlite3'}"
    before = datetime.now(timezone.utc).replace(microsecond=0)
    code, _, err = _import(uri, str(source))
    assert code == Exit.PROBLEMS
    with open_store(uri) as store:
        stored = {
            entry.path: entry.lastmod
            for part in store.parts()
            for entry in store.entries(part.number)
        }
    for index, (text, expected) in enumerate(forms):
        path = f"/{index}"
        if expected is None:
            assert path not in stored
            assert f"{BASE}{path}: lastmod" in err
        elif expected == "now":
            assert before <= stored[path] <= datetime.now(timezone.utc)
        else:
            assert stored[path] == expected, text


def test_the_fast_path_takes_the_common_entry() -> None:
    from xml.etree.ElementTree import fromstring

    from sitemap_middleware.cli.sources import SITEMAP_NS, _Reader

    reader = _Reader("s.xml", BASE, frozenset(), SITEMAP_NS)
    url = fromstring(
        f'<url xmlns="{NS}"><loc>{BASE}/a/b-c</loc><lastmod>2024-05-01</lastmod>'
        "<priority>0.5</priority></url>"
    )
    assert reader._plain(f"{BASE}/a/b-c") == "/a/b-c"
    entry = reader.entry(url)
    assert isinstance(entry, Entry)
    assert (entry.path, entry.lastmod, entry.priority) == (
        "/a/b-c",
        datetime(2024, 5, 1, tzinfo=timezone.utc),
        0.5,
    )


# -- the namespace --------------------------------------------------------------------


def test_a_sitemap_without_the_namespace_is_read(tmp_path: Path, store: str) -> None:
    source = tmp_path / "plain.xml"
    source.write_text(f"<urlset><url><loc>{BASE}/plain</loc></url></urlset>")
    code, out, _ = _import(store, str(source))
    assert code == Exit.OK
    assert out.startswith("imported 1 entry (1 new URL);")
    assert stored_paths(store) == ["/kept", "/plain"]


def test_a_root_in_another_namespace_is_named(tmp_path: Path, store: str) -> None:
    source = tmp_path / "other.xml"
    source.write_text(
        f'<urlset xmlns="http://example.com/ns"><url><loc>{BASE}/a</loc></url></urlset>'
    )
    code, _, err = _import(store, str(source))
    assert code == Exit.SOURCE
    assert err == (
        f"Error: {source} is not a sitemap: its root <urlset> is in the namespace "
        "'http://example.com/ns', not 'http://www.sitemaps.org/schemas/sitemap/0.9'\n"
    )


def _both(body: str, prefix: str = "") -> tuple[object, object]:
    from xml.etree.ElementTree import fromstring

    from sitemap_middleware.cli.sources import SITEMAP_NS, _Reader

    reader = _Reader("s.xml", BASE + prefix, frozenset(), SITEMAP_NS)
    url = fromstring(f'<url xmlns="{NS}">{body}</url>')
    return reader.entry(url), reader.full(url)


@settings(max_examples=300, deadline=None)
@given(_LOCS, st.sampled_from(["", "/shop"]))
def test_the_fast_path_reads_each_loc_as_the_full_reading(
    loc: str, prefix: str
) -> None:
    fast, full = _both(_element("loc", loc), prefix)
    assert fast == full


@settings(max_examples=300, deadline=None)
@given(_LASTMODS, _CHANGEFREQS, _PRIORITIES)
def test_the_fast_path_reads_each_date_as_the_full_reading(
    lastmod: str | None, changefreq: str | None, priority: str | None
) -> None:
    body = (
        _element("loc", f"{BASE}/a")
        + _element("lastmod", lastmod)
        + _element("changefreq", changefreq)
        + _element("priority", priority)
    )
    fast, full = _both(body)
    assert fast == full


# -- a plain document, read once -------------------------------------------------------

_HEADS = st.sampled_from(
    [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        "<?xml version='1.0' encoding='utf-8' standalone='yes'?>",
        "",
        "\ufeff",
        '<?xml version="1.0" encoding="ISO-8859-1"?>',
        "<!-- a comment -->",
    ]
)
_ROOTS = st.sampled_from(
    [
        f'<urlset xmlns="{NS}">',
        "<urlset>",
        f'<urlset\n  xmlns="{NS}" xmlns:image="http://www.google.com/schemas/'
        'sitemap-image/1.1">',
        '<urlset xmlns="http://example.com/ns">',
        f'<urlset xmlns="{NS}" a="1" a="2">',
        f'<urlset xmlns="{NS}" x:y="1">',
    ]
)
_GAPS = st.sampled_from(["", "\n", "\r\n", "  \t", "\n  "])
_ODD = st.sampled_from(
    [
        "<!-- x -->",
        f"<url><loc>{BASE}/a?b=1&amp;c=2</loc></url>",
        f"<url><loc>{BASE}/&#97;</loc></url>",
        f"<url><loc><![CDATA[{BASE}/c]]></loc></url>",
        f"<url><lastmod>2024-01-01</lastmod><loc>{BASE}/order</loc></url>",
        f"<url><loc>{BASE}/i</loc><image:image><image:loc>{BASE}/i.png"
        "</image:loc></image:image></url>",
        f"<url><loc>\r\n{BASE}/crlf\r\n</loc></url>",
        f"<url ><loc>{BASE}/space</loc></url>",
        f"<url><loc>{BASE}/\x01</loc></url>",
        "<url><loc/></url>",
        f"<url><loc>{BASE}/open</loc>",
    ]
)


@st.composite
def _plain_urls(draw: st.DrawFn) -> str:
    gap = draw(_GAPS)
    return (
        f"<url>{gap}"
        + "".join(
            _element(tag, draw(values)) + draw(_GAPS)
            for tag, values in (
                ("loc", _LOCS),
                ("lastmod", _LASTMODS),
                ("changefreq", _CHANGEFREQS),
                ("priority", _PRIORITIES),
            )
        )
        + "</url>"
    )


def _mostly(good: str, others: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.just(good), others)


@settings(max_examples=500, deadline=None)
@given(
    _mostly("", _HEADS),
    _mostly(f'<urlset xmlns="{NS}">', _ROOTS),
    st.lists(st.one_of(_plain_urls(), _plain_urls(), _plain_urls(), _ODD), max_size=6),
    _GAPS,
    _mostly("</urlset>", st.sampled_from(["</urlset>\n", "</urlset><!-- e -->", ""])),
    # A base URL not in canonical form takes no fast path: the same items.
    st.sampled_from(["", "/shop", "https://WWW.example.com:443"]),
)
def test_a_plain_document_read_once_gives_what_checking_and_reading_give(
    tmp_path_factory: pytest.TempPathFactory,
    head: str,
    root: str,
    urls: list[str],
    gap: str,
    end: str,
    prefix: str,
) -> None:
    """Any document: read once (when plain) it gives the same entries and
    problems, in order, as checked and then read by the parser; when the
    parser refuses it, it is not plain."""
    from dataclasses import replace

    from sitemap_middleware.cli import sources

    path = tmp_path_factory.mktemp("plain") / "sitemap.xml"
    path.write_bytes(f"{head}{root}{gap}{gap.join(urls)}{gap}{end}".encode())
    started = datetime.now(timezone.utc)

    def dated(items: list[object]) -> list[object]:
        # A date to come is each reading's start: the same, but for the clock.
        return [
            replace(item, lastmod=started)
            if isinstance(item, Entry) and item.lastmod and item.lastmod > started
            else item
            for item in items
        ]

    local = sources._Local(str(path), None)
    base = prefix if prefix.startswith("https:") else BASE + prefix
    staged = sources._staged("s.xml", local, base, frozenset())
    try:
        checked = sources._check("s.xml", local)
    except sources.SourceError:
        assert staged is None
        return
    document = sources._Document("s.xml", local, checked.ns, checked.urls)
    read = list(sources.Reading([], [], base, frozenset())._read(document))
    event(f"plain: {staged is not None}, entries: {bool(staged)}")
    if staged is not None:
        assert dated(staged) == dated(read)
        assert len(staged) == checked.urls


@pytest.mark.parametrize(
    "document",
    [
        urlset("/a", "/b"),
        urlset("/a")
        .replace("<url>", "\r\n  <url>\r\n    ")
        .replace("</loc>", "</loc>\r\n  "),
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n'
        f"<url>\n  <loc>{BASE}/a</loc>\n  <lastmod>2024-05-01</lastmod>\n"
        "  <changefreq>daily</changefreq>\n  <priority>0.8</priority>\n</url>\n"
        f"<url><loc>{BASE}/b c</loc><priority>2</priority></url>\n</urlset>\n",
    ],
)
def test_a_plain_document_is_read_once(tmp_path: Path, document: str) -> None:
    from sitemap_middleware.cli import sources

    path = tmp_path / "sitemap.xml"
    path.write_text(document)
    staged = sources._staged(
        "s.xml", sources._Local(str(path), None), BASE, frozenset()
    )
    assert staged is not None
    assert [getattr(item, "path", None) for item in staged][:1] == ["/a"]


def test_a_plain_document_past_the_protocols_size_is_checked_then_read(
    tmp_path: Path, store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is held stays bounded: a document of more entries than a sitemap
    may hold, or of more bytes than a plain one is read whole in, is not held
    but checked, then read as it comes, and imported all the same."""
    from sitemap_middleware.cli import entries, sources

    source = tmp_path / "sitemap.xml"
    source.write_text(urlset("/a", "/b", "/c"))
    local = sources._Local(str(source), None)
    assert sources._staged("s.xml", local, BASE, frozenset()) is not None
    monkeypatch.setattr(entries, "MAX_URLS_PER_PART", 2)
    assert sources._staged("s.xml", local, BASE, frozenset()) is None
    monkeypatch.setattr(entries, "MAX_URLS_PER_PART", 3)
    monkeypatch.setattr(sources, "PLAIN_BYTES", source.stat().st_size - 1)
    assert sources._staged("s.xml", local, BASE, frozenset()) is None
    code, _, err = _import(store, str(source))
    assert (code, err) == (Exit.OK, "")
    assert stored_paths(store) == ["/a", "/b", "/c", "/kept"]


def test_a_part_refused_half_way_adds_nothing_and_the_others_are_imported(
    tmp_path: Path, store: str
) -> None:
    """An index's parts are read one at a time, each through before its
    entries are added: a part cut short after thousands of good entries
    (plain, then not) is reported and adds nothing; the parts before and
    after it are imported."""
    good = [f"/p/{n}" for n in range(2500)]
    (tmp_path / "a.xml").write_text(urlset("/a"))
    (tmp_path / "cut.xml").write_text(urlset(*good)[:-20])
    (tmp_path / "odd.xml").write_text(
        urlset(*good).replace("</urlset>", "<!-- odd --><url>")
    )
    (tmp_path / "b.xml").write_text(urlset("/b"))
    (tmp_path / "sitemap.xml").write_text(index("a.xml", "cut.xml", "odd.xml", "b.xml"))
    code, out, err = _import(store, str(tmp_path / "sitemap.xml"))
    assert code == Exit.PROBLEMS
    assert err.count("\n") == 2
    assert "skipped cut.xml" not in err  # named as the index names it
    assert f"skipped {tmp_path / 'cut.xml'}: " in err
    assert f"skipped {tmp_path / 'odd.xml'}: " in err
    assert "well-formed" in err
    assert stored_paths(store) == ["/a", "/b", "/kept"]
    assert "2 skipped" in out


def test_a_batch_adds_the_last_entry_of_each_path_the_store_lacks() -> None:
    """An import's batch: each path once, as it was last given; a path the
    store holds is left (counted), into an empty store and a filled one."""
    from sitemap_middleware.cli.store import _new
    from sitemap_middleware.model import UNDATED

    when = datetime(2024, 5, 1, tzinfo=timezone.utc)
    first, last = Entry("/twice", UNDATED), Entry("/twice", when)
    store = open_store("memory://")
    try:
        kept: list[int] = []
        assert _new(store, [first, Entry("/a"), last], kept) == [last, Entry("/a")]
        store.upsert([Entry("/a", when)])
        assert _new(store, [Entry("/a"), first, last, Entry("/b")], kept) == [
            last,
            Entry("/b"),
        ]
        assert kept == [0, 1]
    finally:
        store.close()


@pytest.mark.parametrize("uri", ["memory://", "example:///{folder}/shelf"])
def test_an_import_batch_is_written_alike_with_or_without_the_stores_add(
    uri: str, tmp_path: Path
) -> None:
    """The import's write: a store that ``Adds`` decides in its write which
    paths it holds, any other is asked first; either way each path once, as
    last given, a held one left as it was and counted."""
    import support.example_store  # noqa: F401 - registers example://

    from sitemap_middleware.cli.store import _add
    from sitemap_middleware.model import UNDATED
    from sitemap_middleware.stores.contract import Adds

    when = datetime(2024, 5, 1, tzinfo=timezone.utc)
    store = open_store(uri.format(folder=tmp_path))
    try:
        assert isinstance(store, Adds) == uri.startswith("memory")
        store.upsert([Entry("/a", when, "seen", title="As served")])
        kept: list[int] = []
        offered = [Entry("/b", UNDATED), Entry("/a"), Entry("/b", when)]
        assert _add(store, offered, kept) == 1
        assert kept == [1]
        rows = {e.path: e for p in store.parts() for e in store.entries(p.number)}
        assert (rows["/a"].fingerprint, rows["/a"].title) == ("seen", "As served")
        assert rows["/b"].lastmod == when
    finally:
        store.close()
