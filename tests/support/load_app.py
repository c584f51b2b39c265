"""The app and the load client of tests/acceptance/test_concurrency.py.

As a module it is the server's entry point: ``load_app:app`` is a Flask app wrapped
by ``SitemapMiddleware`` (``LOAD_STACK=wsgi``) or a Starlette app wrapped by
``ASGISitemapMiddleware`` (``LOAD_STACK=asgi``), on ``LOAD_BASE_URL`` and
``LOAD_STORE``; it answers 200 HTML for ``/page/<n>``, n in 0..999.

As a script it is one load client: ``python load_app.py PORT INDEX CLIENTS TOTAL
SEED`` requests every page whose number is ``INDEX`` modulo ``CLIENTS``, then random
pages up to ``TOTAL`` requests, and prints a JSON object of status -> count.
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


def body(n: int) -> bytes:
    """The page of ``n``: depends only on ``n``."""
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>Page {n}</title></head><body><main><h1>Page {n}</h1>"
        f"<p>Words about page number {n}.</p></main></body></html>"
    ).encode()


def _flask(config: dict[str, Any]) -> Any:
    from flask import Flask, Response, abort

    from sitemap_middleware import SitemapMiddleware

    flask = Flask(__name__)

    @flask.route("/page/<int:n>")
    def page(n: int) -> Response:
        if n >= PAGES:
            abort(404)
        return Response(body(n), content_type="text/html; charset=utf-8")

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
        n = int(request.path_params["n"])
        if n >= PAGES:
            return Response(b"not found", 404, media_type="text/plain")
        return Response(body(n), media_type="text/html; charset=utf-8")

    return Starlette(
        routes=[Route("/page/{n:int}", page)],
        middleware=[Middleware(ASGISitemapMiddleware, config=config)],
    )


def client(port: int, index: int, clients: int, total: int, seed: int) -> Counter[int]:
    """Send ``total`` GET requests, one connection each; count the statuses.

    Not keep-alive: ``uvicorn --workers N`` leaves Nagle's algorithm on for the
    sockets it hands its workers, so each keep-alive response waits ~40 ms for
    the client's delayed ACK (seen with a bare Starlette app too).
    """
    rng = random.Random(seed)
    numbers = list(range(index, PAGES, clients))
    numbers += [rng.randrange(PAGES) for _ in range(total - len(numbers))]
    rng.shuffle(numbers)
    statuses: Counter[int] = Counter()
    for n in numbers:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.request("GET", f"/page/{n}")
            response = connection.getresponse()
            data = response.read()
        finally:
            connection.close()
        ok = response.status == 200 and data == body(n)
        statuses[response.status if ok else -response.status] += 1
    return statuses


if os.environ.get("LOAD_STACK"):
    _config = {
        "base_url": os.environ["LOAD_BASE_URL"],
        "store": os.environ["LOAD_STORE"],
    }
    app = (_flask if os.environ["LOAD_STACK"] == "wsgi" else _starlette)(_config)


if __name__ == "__main__":
    port, index, clients, total, seed = map(int, sys.argv[1:6])
    print(json.dumps(client(port, index, clients, total, seed)))
