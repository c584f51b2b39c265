"""A sitemap request never waits on the writers: with PostgreSQL behind a link of
150 ms each way, while the writer opens the store and writes its first pages, each
request for a document is answered within the bound, and never a 404."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.latency import latency_proxy
from support.store_kinds import Fresh

from sitemap_middleware import SitemapMiddleware
from sitemap_middleware.serving.server import SERVE_WAIT

HTML = b"<!doctype html><html><head><title>%s</title></head><body>words</body></html>"


def _app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
    return [HTML % environ["PATH_INFO"].encode()]


def _get(app: Any, path: str) -> tuple[int, dict[str, str], float]:
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: Any, exc_info: Any = None) -> None:
        seen["status"], seen["headers"] = int(status[:3]), dict(headers)

    started = time.monotonic()
    b"".join(app({**_ENVIRON, "PATH_INFO": path}, start_response))
    return seen["status"], seen["headers"], time.monotonic() - started


_ENVIRON = {
    "REQUEST_METHOD": "GET",
    "QUERY_STRING": "",
    "SERVER_NAME": "localhost",
    "SERVER_PORT": "80",
    "HTTP_HOST": "localhost",
    "wsgi.url_scheme": "http",
}


@pytest.mark.slow
def test_a_far_store_holds_no_sitemap_request_past_the_bound(fresh: Fresh) -> None:
    uri = urlsplit(fresh.postgres_uri())
    assert uri.hostname is not None
    with latency_proxy((uri.hostname, uri.port or 5432), 0.15) as proxy:
        far = uri._replace(netloc=f"{uri.username}@127.0.0.1:{proxy.port}")
        store = far.geturl() + "&connect_timeout=10"
        app = SitemapMiddleware(_app, {"base_url": "http://localhost", "store": store})
        try:
            for n in range(400):
                assert _get(app, f"/p/{n}")[0] == 200
            answers = []
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                status, headers, took = _get(app, "/sitemap.xml")
                answers.append(status)
                assert took < SERVE_WAIT + 0.5, (status, took)
                assert status in (200, 503), status  # never a 404 while pending
                if status == 503:
                    assert headers["Retry-After"]
                if status == 200:
                    break
            # The store's own pace: the pages are there once written.
            assert answers[-1] == 200, answers
            assert 503 in answers  # the writer was still opening it at first
        finally:
            app.close()
