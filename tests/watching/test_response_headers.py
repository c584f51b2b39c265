"""The policy's walk over a response's headers: a ``noindex`` anywhere removes,
whatever header comes first; a response varying on a request header a partial
request carries (htmx's ``HX-Request``) is a variant to such a request, and the
page to one without it. On both stacks."""

from __future__ import annotations

from typing import Any

import pytest
from support.helpers import asgi_exchange, asgi_scope
from werkzeug.test import EnvironBuilder

from sitemap_middleware import ASGISitemapMiddleware, SitemapMiddleware
from sitemap_middleware.config import Config
from sitemap_middleware.reasons import DEPENDS, RECORD, REMOVE, Skipped
from sitemap_middleware.watching.policy import Policy

CONFIG = {"base_url": "http://localhost", "store": "memory://", "crawlers": False}
HTML = ("Content-Type", "text/html")
NOINDEX = ("X-Robots-Tag", "noindex")
SKIPPING = [
    (("Cache-Control", "private"), Skipped.PRIVATE),
    (("Cache-Control", "no-store"), Skipped.PRIVATE),
    (("Content-Encoding", "gzip"), Skipped.ENCODED),
    (("Vary", "*"), Skipped.VARY),
    (("Content-Disposition", "inline"), Skipped.ATTACHMENT),
]


def _policy(**extra: Any) -> Policy:
    return Policy(Config.from_mapping({"base_url": "http://localhost", **extra}))


def _both(headers: list[tuple[str, str]]) -> list[Any]:
    """The headers as WSGI's str pairs and as ASGI's bytes pairs."""
    return [headers, [(k.lower().encode(), v.encode()) for k, v in headers]]


@pytest.mark.parametrize(("header", "reason"), SKIPPING)
@pytest.mark.parametrize("noindex_first", [True, False])
def test_noindex_anywhere_removes(
    header: tuple[str, str], reason: str, noindex_first: bool
) -> None:
    policy = _policy()
    pair = [NOINDEX, header] if noindex_first else [header, NOINDEX]
    for headers in _both([HTML, *pair]):
        assert policy.response_action(200, headers) == REMOVE
    for headers in _both([HTML, header]):
        assert policy.response_action(200, headers) == reason


def test_the_first_skip_reason_noted_is_the_answer() -> None:
    policy = _policy(skip_set_cookie=True)
    first = [("Cache-Control", "no-store"), ("Set-Cookie", "a=b")]
    assert policy.response_action(200, [HTML, *first]) == Skipped.PRIVATE
    assert policy.response_action(200, [HTML, *first[::-1]]) == Skipped.SET_COOKIE
    # Not HTML and private: the header's reason, as before.
    assert policy.response_action(200, first[:1]) == Skipped.PRIVATE


@pytest.mark.parametrize(("header", "reason"), SKIPPING)
@pytest.mark.parametrize("noindex_first", [True, False])
@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
def test_a_listed_page_leaves_on_noindex_whatever_the_order(
    header: tuple[str, str], reason: str, noindex_first: bool, stack: str
) -> None:
    pair = [NOINDEX, header] if noindex_first else [header, NOINDEX]
    answers = iter([[HTML], [HTML, *pair]])
    middleware = _serve(stack, lambda: next(answers))
    _visit(stack, middleware, "/page", {})
    assert middleware.flush() and middleware.store.count() == 1
    _visit(stack, middleware, "/page", {})
    assert middleware.flush() and middleware.store.count() == 0


# unavailable_after: a date past is a noindex, a date to come or one no
# parser reads is none (https://developers.google.com/search/docs/crawling-indexing/robots-meta-tag).
PAST = "unavailable_after: 2001-01-01"
FUTURE = "unavailable_after: Fri, 01 Jan 2100 00:00:00 GMT"


@pytest.mark.parametrize(
    ("value", "action"),
    [
        (PAST, REMOVE),
        ("googlebot: unavailable_after: 25 Jun 2010 15:00:00 PST", REMOVE),
        ("noarchive, unavailable_after: Fri, 25 Jun 2010 15:00:00 GMT", REMOVE),
        (FUTURE, RECORD),
        ("unavailable_after: when the sale ends", RECORD),
        ("unavailable_after: 2001-02-30", RECORD),
    ],
)
def test_unavailable_after_a_date_past_removes(value: str, action: str) -> None:
    policy = _policy()
    for headers in _both([HTML, ("X-Robots-Tag", value)]):
        assert policy.response_action(200, headers) == action


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
@pytest.mark.parametrize("where", ["header", "meta"])
def test_a_listed_page_leaves_once_its_unavailable_after_date_has_passed(
    stack: str, where: str
) -> None:
    """Listed while the date is to come (a date no parser reads changes
    nothing), removed once a visit read says a date that has passed (every
    visit read here: a page written lately is read again after
    ``recheck_interval``)."""
    said = iter([FUTURE, "unavailable_after: next week", PAST])
    value = ""

    def headers_of() -> list[tuple[str, str]]:
        nonlocal value
        value = next(said)
        return [HTML, ("X-Robots-Tag", value)] if where == "header" else [HTML]

    def page_of() -> bytes:
        if where == "header":
            return FULL
        meta = f'<meta name="robots" content="{value}">'.encode()
        return FULL.replace(b"<title>", meta + b"<title>")

    middleware = _serve(stack, headers_of, page_of=page_of, recheck_interval=0)
    for listed in (1, 1, 0):
        _visit(stack, middleware, "/sale", {})
        assert middleware.flush() and middleware.store.count() == listed


# Vary on request headers: what a partial request carries is a variant.
FULL = b"<!doctype html><html><head><title>Posts</title></head><body>all</body></html>"
PARTIAL = b"<ul><li>one</li></ul>"


@pytest.mark.parametrize(
    ("vary", "action"),
    [
        ("HX-Request", DEPENDS),
        ("Accept-Encoding, Turbo-Frame", DEPENDS),
        ("X-Requested-With", DEPENDS),
        ("x-pjax", DEPENDS),
        ("Accept, Accept-Encoding, Accept-Language, User-Agent", RECORD),
        ("Cookie", RECORD),  # no named session cookies: the anonymous variant
        ("Authorization", RECORD),  # never on a request that gets here
        ("*", Skipped.VARY),
    ],
)
def test_vary_on_a_request_header_depends_on_the_request(
    vary: str, action: str
) -> None:
    policy = _policy()
    for headers in _both([HTML, ("Vary", vary)]):
        assert policy.response_action(200, headers) == action


@pytest.mark.parametrize("stack", ["wsgi", "asgi"])
@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("HX-Request", "true"),
        ("Turbo-Frame", "posts"),
        ("X-Requested-With", "XMLHttpRequest"),
        ("X-PJAX", "true"),
    ],
)
def test_a_partial_is_a_variant_and_the_full_page_is_recorded(
    stack: str, header: str, value: str
) -> None:
    vary = "Accept-Encoding, " + header

    def answer() -> list[tuple[str, str]]:
        return [HTML, ("Vary", vary)]

    middleware = _serve(stack, answer, partial=header)
    _visit(stack, middleware, "/posts", {header: value})
    assert middleware.flush() and middleware.store.count() == 0
    assert middleware.stats()["skipped"] == {"vary": 1}
    _visit(stack, middleware, "/posts", {})
    assert middleware.flush() and middleware.store.count() == 1
    assert middleware.stats()["recorded"] == 1
    _visit(stack, middleware, "/other", {"Accept-Language": "fr"})
    assert middleware.flush() and middleware.store.count() == 2


def _serve(
    stack: str,
    headers_of: Any,
    partial: str = "",
    page_of: Any = lambda: FULL,
    **config: Any,
) -> Any:
    """A middleware around an app that answers ``headers_of()`` and
    ``page_of()``, a fragment to a request carrying ``partial`` (``config``
    over :data:`CONFIG`)."""
    if stack == "wsgi":

        def wsgi_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            start_response("200 OK", headers_of())
            key = "HTTP_" + partial.upper().replace("-", "_")
            return [PARTIAL if partial and key in environ else page_of()]

        return SitemapMiddleware(wsgi_app, {**CONFIG, **config})

    async def asgi_app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(k.lower().encode(), v.encode()) for k, v in headers_of()]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        sent = {name for name, _ in scope["headers"]}
        fragment = partial and partial.lower().encode() in sent
        await send(
            {"type": "http.response.body", "body": PARTIAL if fragment else page_of()}
        )

    return ASGISitemapMiddleware(asgi_app, {**CONFIG, **config})


def _visit(stack: str, middleware: Any, path: str, headers: dict[str, str]) -> None:
    if stack == "wsgi":
        environ = EnvironBuilder(
            path=path, base_url="http://localhost", headers=headers
        ).get_environ()
        result = middleware(environ, lambda status, headers, exc_info=None: None)
        list(result)
        close = getattr(result, "close", None)
        if close is not None:
            close()
        return
    lines = [(b"host", b"localhost")]
    lines += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    asgi_exchange(middleware, asgi_scope(path, lines))
