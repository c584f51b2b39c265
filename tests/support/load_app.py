"""The app and the load clients of tests/acceptance/test_concurrency.py.

As a module it is the server's entry point: ``load_app:app`` is a Flask app wrapped
by ``SitemapMiddleware`` (``LOAD_STACK=wsgi``) or a Starlette app wrapped by
``ASGISitemapMiddleware`` (``LOAD_STACK=asgi``), on ``LOAD_BASE_URL`` and
``LOAD_STORE``. It answers 200 HTML for ``/page/<n>``, n in 0..PAGES-1, and for
``/<lang>/<k>``, lang in LANGUAGES and k in 0..CLUSTERS-1, each of the latter
declaring its cluster: the same page in every language, itself included.

As a script it is one load client:

- ``python load_app.py pages PORT INDEX CLIENTS TOTAL SEED`` requests every
  ``/page/<n>`` whose number is ``INDEX`` modulo ``CLIENTS``, then random ones up
  to ``TOTAL`` requests, and prints a JSON object of status -> count;
- ``python load_app.py clusters PORT SEED TOTAL`` requests ``TOTAL`` random pages
  of the clusters, and prints a JSON list of the paths answered 200 with their
  page's body.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import sys
from collections import Counter
from typing import Any

PAGES = 1000
CLUSTERS = 20
LANGUAGES = ("en", "de", "fr")
PATHS = [f"/{lang}/{k}" for k in range(CLUSTERS) for lang in LANGUAGES]
HTML = "text/html; charset=utf-8"


def _page(n: int) -> bytes:
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>Page {n}</title></head><body><main><h1>Page {n}</h1>"
        f"<p>Words about page number {n}.</p></main></body></html>"
    ).encode()


def _member(lang: str, k: int) -> bytes:
    links = "".join(
        f'<link rel="alternate" hreflang="{other}" href="/{other}/{k}">'
        for other in LANGUAGES
    )
    return (
        f"<!doctype html><html lang={lang}><head><meta charset=utf-8>"
        f"<title>{lang} {k}</title>{links}</head><body><main><h1>{lang} {k}</h1>"
        f"<p>Words about page {k} in {lang}.</p></main></body></html>"
    ).encode()


# Every page by its path, each depending on its path alone.
BODIES = {
    **{f"/page/{n}": _page(n) for n in range(PAGES)},
    **{f"/{lang}/{k}": _member(lang, k) for k in range(CLUSTERS) for lang in LANGUAGES},
}


def _flask(config: dict[str, Any]) -> Any:
    from flask import Flask, Response, abort, request

    from sitemap_middleware import SitemapMiddleware

    flask = Flask(__name__)

    def page(**_: object) -> Response:
        if request.path not in BODIES:
            abort(404)
        return Response(BODIES[request.path], content_type=HTML)

    flask.add_url_rule("/page/<int:n>", view_func=page)
    flask.add_url_rule("/<lang>/<int:k>", view_func=page)
    flask.wsgi_app = SitemapMiddleware(flask.wsgi_app, config)  # type: ignore[method-assign]
    return flask


def _starlette(config: dict[str, Any]) -> Any:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from sitemap_middleware import ASGISitemapMiddleware

    async def page(request: Request) -> Response:
        if request.url.path not in BODIES:
            return Response(b"not found", 404, media_type="text/plain")
        return Response(BODIES[request.url.path], media_type=HTML)

    return Starlette(
        routes=[Route("/page/{n:int}", page), Route("/{lang}/{k:int}", page)],
        middleware=[Middleware(ASGISitemapMiddleware, config=config)],
    )


def get(port: int, path: str) -> tuple[int, bytes]:
    """GET ``path`` on a connection of its own: its status and body.

    Not keep-alive: ``uvicorn --workers N`` leaves Nagle's algorithm on for the
    sockets it hands its workers, so each keep-alive response waits ~40 ms for
    the client's delayed ACK (seen with a bare Starlette app too).
    """
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _served(port: int, path: str) -> tuple[int, bool]:
    """The status of ``path``, and whether it came with the page's body."""
    status, data = get(port, path)
    return status, status == 200 and data == BODIES[path]


def pages(port: int, index: int, clients: int, total: int, seed: int) -> Counter[int]:
    """Send ``total`` requests for ``/page/<n>``; count the statuses, a status
    whose body was not the page's counted negative."""
    rng = random.Random(seed)
    numbers = list(range(index, PAGES, clients))
    numbers += [rng.randrange(PAGES) for _ in range(total - len(numbers))]
    rng.shuffle(numbers)
    statuses: Counter[int] = Counter()
    for n in numbers:
        status, ok = _served(port, f"/page/{n}")
        statuses[status if ok else -status] += 1
    return statuses


def clusters(port: int, seed: int, total: int) -> list[str]:
    """GET ``total`` random pages of the clusters; those served whole."""
    rng = random.Random(seed)
    picked = [rng.choice(PATHS) for _ in range(total)]
    return [path for path in picked if _served(port, path)[1]]


if os.environ.get("LOAD_STACK"):
    _config = {
        "base_url": os.environ["LOAD_BASE_URL"],
        "store": os.environ["LOAD_STORE"],
    }
    app = (_flask if os.environ["LOAD_STACK"] == "wsgi" else _starlette)(_config)


if __name__ == "__main__":
    client = pages if sys.argv[1] == "pages" else clusters
    print(json.dumps(client(*map(int, sys.argv[2:]))))
