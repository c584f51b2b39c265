"""Property-based fuzzing of the whole pipeline, on both stacks: random request
targets and headers, random response headers, random heads and bodies (hostile
hrefs and srcs, dates, entities, sizes), each exchange run through the bare app and
through the middleware. Properties:

1. the app's response is byte-identical to the bare app's (status, headers, chunks);
2. the writer is alive afterwards: it records a following good page, logs no bug;
3. every document served is schema-valid;
4. nothing listed fails the privacy rules (private exchanges use /private-* paths);
5. no request for a URL other than a listed URL's exact spelling removes it.

``SITEMAP_FUZZ_EXAMPLES`` sets the examples per test (default 150; the closing
figures were run with 10000).
"""

from __future__ import annotations

import gzip
import itertools
import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.helpers import asgi_exchange, asgi_scope, validate

from sitemap_middleware import ASGISitemapMiddleware, Entry, SitemapMiddleware

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("SITEMAP_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
CONFIG: dict[str, Any] = {
    "base_url": "https://www.example.com",
    "store": "memory://",
    "lastmod_source": "article",
    "query": ["page"],
    "recheck_interval": 0,
    "new_urls_per_minute": None,
}

HREFS = st.sampled_from(
    [
        "http://[::1",
        "http://[x",
        "https://ｅｘａｍｐｌｅ.com/a",
        "https://www.example.com:443/a",
        "https://www.example.com/%zz",
        "//evil.test/x",
        "javascript:alert(1)",
        "/" + "a" * 3000,
        "/img/logo.png",
        "https://www.example.com/x?y=1",
        "data:image/png;base64,AAAA",
        "\x00",
        "https://www.exa mple.com/",
        "../../../etc",
        "",
    ]
)
DATES = st.sampled_from(
    [
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T23:59:59-14:00",
        "2024-02-30T00:00:00Z",
        "2024-05-01T10:00:00+02:00",
        "yesterday",
        "",
    ]
)
TEXT = st.sampled_from(
    ["hello", "&#110;oindex", "&amp;", "<![x[", "<!--", "é", "\ufffd"]
)


@st.composite
def heads(draw: st.DrawFn) -> bytes:
    tags = draw(
        st.lists(
            st.one_of(
                st.builds(lambda h: f'<link rel="canonical" href="{h}">', HREFS),
                st.builds(
                    lambda lang, h: (
                        f'<link rel="alternate" hreflang="{lang}" href="{h}">'
                    ),
                    st.sampled_from(["en", "de", "x-default", "de_AT", "1234567890"]),
                    HREFS,
                ),
                st.builds(
                    lambda d: f'<meta property="article:modified_time" content="{d}">',
                    DATES,
                ),
                st.builds(lambda t: f'<meta name="robots" content="{t}">', TEXT),
                st.builds(lambda h: f'<base href="{h}">', HREFS),
                st.just("<script>" + "x" * 70_000 + "</script>"),
                TEXT,
            ),
            max_size=5,
        )
    )
    images = draw(st.lists(st.builds(lambda h: f'<img src="{h}">', HREFS), max_size=3))
    main = draw(st.booleans())
    body = "".join(images) + draw(TEXT)
    if main:
        body = f"<main>{body}</main>"
    head = f"<head><title>t</title>{''.join(tags)}</head>"
    page = f"<!doctype html><html>{head}<body>{body}</body></html>"
    encoding = draw(st.sampled_from(["utf-8", "latin-1", "utf-16"]))
    try:
        data = page.encode(encoding)
    except UnicodeEncodeError:
        data = page.encode("utf-8")
    return data + draw(st.binary(max_size=32))


SEGMENTS = st.sampled_from(
    [
        "pricing",
        "",
        ".",
        "..",
        "%2E%2E",
        "%2e",
        "a",
        "%2F",
        "x;jsessionid=1",
        "admin",
        "é",
        "%C3%A9",
        "%ZZ",
        "A",
        "index.html",
        "550e8400-e29b-41d4-a716-446655440000",
    ]
)
QUERIES = st.sampled_from(
    [
        "",
        "page=2",
        "page=999",
        "q=x",
        "utm_source=mail",
        "lang=de",
        "token=abc",
        "print=1",
    ]
)
STATUSES = st.sampled_from([200, 200, 200, 301, 302, 304, 404, 410, 429, 500, 206])
RESPONSE_HEADERS = st.lists(
    st.sampled_from(
        [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Type", "text/html"),
            ("Content-Type", "application/json"),
            ("X-Robots-Tag", "noindex"),
            ("Link", '<http://[x>; rel="canonical"'),
            ("Link", '</pricing>; rel="alternate"; hreflang="de"'),
            ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT"),
            ("Last-Modified", "garbage"),
            ("Vary", "Accept-Encoding"),
            ("Cache-Control", "public, max-age=60"),
        ]
    ),
    max_size=4,
)
PRIVATE_HEADERS = st.sampled_from(
    [("Cache-Control", "no-store"), ("Cache-Control", "private"), ("Vary", "*")]
)


@st.composite
def exchanges(draw: st.DrawFn) -> dict[str, Any]:
    private = draw(st.sampled_from([None, "cookie", "authorization", "response"]))
    segments = draw(st.lists(SEGMENTS, min_size=1, max_size=4))
    if private:
        segments = [f"private-{draw(st.integers(0, 9))}", *segments]
    path = "/" + "/".join(segments)
    headers = draw(RESPONSE_HEADERS)
    if private == "response":
        headers = [("Content-Type", "text/html"), draw(PRIVATE_HEADERS), *headers]
    request: list[tuple[str, str]] = [("Host", "www.example.com")]
    if private == "cookie":
        request.append(("Cookie", "session=alice"))
    elif private == "authorization":
        request.append(("Authorization", "Bearer x"))
    chunks = draw(st.integers(1, 3))
    body = draw(heads())
    size = max(1, len(body) // chunks)
    return {
        "path": path,
        "query": draw(QUERIES),
        "request": request,
        "status": draw(STATUSES),
        "headers": headers,
        "chunks": [body[i : i + size] for i in range(0, len(body), size)] or [b""],
    }


# -- the two stacks -----------------------------------------------------------------


def _wsgi_app(case: dict[str, Any]) -> Any:
    def app(environ: dict[str, Any], start_response: Any) -> Iterator[bytes]:
        start_response(f"{case['status']} X", list(case["headers"]))
        yield from case["chunks"]

    return app


def _environ(case: dict[str, Any]) -> dict[str, Any]:
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        # PATH_INFO: the target percent-decoded, latin-1 over the bytes.
        "PATH_INFO": _decoded(case["path"]),
        "QUERY_STRING": case["query"],
        "SERVER_NAME": "www.example.com",
        "SERVER_PORT": "443",
        "wsgi.url_scheme": "https",
    }
    for name, value in case["request"]:
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    return environ


def _decoded(path: str) -> str:
    from urllib.parse import unquote_to_bytes

    return unquote_to_bytes(path.encode("utf-8")).decode("latin-1")


def _wsgi_run(app: Any, case: dict[str, Any]) -> tuple[str, list[Any], list[bytes]]:
    seen: list[Any] = []
    result = app(_environ(case), lambda s, h, e=None: seen.append((s, list(h))))
    try:
        chunks = list(result)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    status, headers = seen[0]
    return status, headers, chunks


def _asgi_app(case: dict[str, Any]) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(k.lower().encode(), v.encode()) for k, v in case["headers"]]
        await send(
            {
                "type": "http.response.start",
                "status": case["status"],
                "headers": headers,
            }
        )
        for i, chunk in enumerate(case["chunks"]):
            more = i < len(case["chunks"]) - 1
            await send({"type": "http.response.body", "body": chunk, "more_body": more})

    return app


def _scope(case: dict[str, Any]) -> dict[str, Any]:
    return asgi_scope(
        _decoded(case["path"]).encode("latin-1").decode("utf-8", "replace"),
        [(k.lower().encode(), v.encode()) for k, v in case["request"]],
        scheme="https",
        raw_path=case["path"].encode("utf-8"),
        query_string=case["query"].encode(),
    )


def _asgi_run(app: Any, case: dict[str, Any]) -> list[dict[str, Any]]:
    return asgi_exchange(app, _scope(case))


class Harness:
    """One middleware per stack; each case is swapped into the app it wraps."""

    def __init__(self, stack: str) -> None:
        self.stack = stack
        self.case: dict[str, Any] = {}
        self.goods = itertools.count()
        if stack == "wsgi":
            inner = _wsgi_app(self.case)
            self.middleware: Any = SitemapMiddleware(inner, CONFIG)
        else:
            self.middleware = ASGISitemapMiddleware(_asgi_app(self.case), CONFIG)

    def reset(self) -> None:
        """Empty the store, so that each example starts from nothing (and the
        sitemap read after it stays small)."""
        store = self.middleware.store
        paths = [e.path for part in store.parts() for e in store.entries(part.number)]
        store.remove(paths)

    def exchange(self, case: dict[str, Any]) -> None:
        """Run ``case`` bare and wrapped; the two must be identical (property 1)."""
        self.case.clear()
        self.case.update(case)
        if self.stack == "wsgi":
            bare = _wsgi_run(_wsgi_app(case), case)
            assert _wsgi_run(self.middleware, case) == bare
        else:
            bare_messages = _asgi_run(_asgi_app(case), case)
            assert _asgi_run(self.middleware, case) == bare_messages

    def good_page(self) -> str:
        path = f"/good-{next(self.goods)}"
        self.exchange(
            {
                "path": path,
                "query": "",
                "request": [("Host", "www.example.com")],
                "status": 200,
                "headers": [("Content-Type", "text/html")],
                "chunks": [
                    b"<!doctype html><html><body><main>good</main></body></html>"
                ],
            }
        )
        return path

    def get(self, path: str) -> tuple[int, bytes]:
        if self.stack == "wsgi":
            case = {"path": path, "query": "", "request": []}
            status, _, chunks = _wsgi_run(self.middleware, case)
            return int(status[:3]), b"".join(chunks)
        sent = _asgi_run(self.middleware, {"path": path, "query": "", "request": []})
        return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


@pytest.fixture(params=["wsgi", "asgi"])
def harness(request: pytest.FixtureRequest) -> Iterator[Harness]:
    harness = Harness(request.param)
    yield harness
    harness.middleware.close()


def _listed(harness: Harness) -> list[str]:
    """Every listed path, every document validated (property 3)."""
    status, body = harness.get("/sitemap.xml")
    if status == 404:
        return []
    assert status == 200
    root = validate(body)
    paths: list[str] = []
    ns = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    for loc in root.iterfind(".//sm:loc", ns):
        part = loc.text.removeprefix("https://www.example.com")
        part_status, data = harness.get(part)
        assert part_status == 200
        urlset = validate(gzip.decompress(data))
        for url in urlset.iterfind("sm:url/sm:loc", ns):
            paths.append(url.text.removeprefix("https://www.example.com"))
    return paths


@FUZZ
@given(cases=st.lists(exchanges(), min_size=1, max_size=4))
def test_whatever_the_exchange(
    harness: Harness, cases: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.clear()
    harness.reset()
    with caplog.at_level(logging.ERROR, logger="sitemap_middleware"):
        for case in cases:
            harness.exchange(case)
        good = harness.good_page()
        assert harness.middleware.flush()
    # Property 2: alive, and nothing hostile counted as a bug.
    stats = harness.middleware.stats()
    assert stats["errors"].get("bug", 0) == 0, stats
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    listed = _listed(harness)
    assert good in listed
    # Property 4: no private exchange is listed.
    assert not [p for p in listed if p.startswith("/private-")]


@FUZZ
@given(cases=st.lists(exchanges(), min_size=1, max_size=4))
def test_only_the_exact_spelling_removes(
    harness: Harness, cases: list[dict[str, Any]]
) -> None:
    """Property 5: /pricing and / stay listed unless a removal answered exactly
    their stored spelling (no query, no other spelling of the path)."""
    harness.reset()
    store = harness.middleware.store
    store.upsert([Entry("/pricing"), Entry("/")])
    exact = False
    for case in cases:
        harness.exchange(case)
        if (
            case["path"] in ("/pricing", "/")
            and not case["query"]
            and case["request"] == [("Host", "www.example.com")]
        ):
            exact = True
    assert harness.middleware.flush()
    if not exact:
        assert {e.path for e in store.entries(1)} >= {"/pricing", "/"}
