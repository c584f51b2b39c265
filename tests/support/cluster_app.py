"""The app and the load client of the hreflang test in
tests/acceptance/test_concurrency.py.

As a module it is the server's entry point, ``cluster_app:app``: a Flask app
(``LOAD_STACK=wsgi``) or a Starlette app (``LOAD_STACK=asgi``) wrapped by the
middleware on ``LOAD_BASE_URL`` and ``LOAD_STORE``, answering 200 HTML for
``/<lang>/<k>`` (lang in LANGUAGES, k in 0..CLUSTERS-1), each page declaring its
cluster: the same page in every language, itself included.

As a script it is one load client: ``python cluster_app.py PORT SEED TOTAL``
requests TOTAL pages in a random order of its seed, and prints a JSON list of
the paths answered 200 with their page's body.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import sys
from typing import Any

CLUSTERS = 20
LANGUAGES = ("en", "de", "fr")
PATHS = [f"/{lang}/{k}" for k in range(CLUSTERS) for lang in LANGUAGES]


def body(lang: str, k: int) -> bytes:
    links = "".join(
        f'<link rel="alternate" hreflang="{other}" href="/{other}/{k}">'
        for other in LANGUAGES
    )
    return (
        f"<!doctype html><html lang={lang}><head><meta charset=utf-8>"
        f"<title>{lang} {k}</title>{links}</head><body><main><h1>{lang} {k}</h1>"
        f"<p>Words about page {k} in {lang}.</p></main></body></html>"
    ).encode()


def _flask(config: dict[str, Any]) -> Any:
    from flask import Flask, Response, abort

    from sitemap_middleware import SitemapMiddleware

    flask = Flask(__name__)

    @flask.route("/<lang>/<int:k>")
    def page(lang: str, k: int) -> Response:
        if lang not in LANGUAGES or k >= CLUSTERS:
            abort(404)
        return Response(body(lang, k), content_type="text/html; charset=utf-8")

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
        lang, k = request.path_params["lang"], int(request.path_params["k"])
        if lang not in LANGUAGES or k >= CLUSTERS:
            return Response(b"not found", 404, media_type="text/plain")
        return Response(body(lang, k), media_type="text/html; charset=utf-8")

    return Starlette(
        routes=[Route("/{lang}/{k:int}", page)],
        middleware=[Middleware(ASGISitemapMiddleware, config=config)],
    )


def client(port: int, seed: int, total: int) -> list[str]:
    """GET ``total`` random pages, one connection each (see load_app.client)."""
    rng = random.Random(seed)
    served = []
    for path in (rng.choice(PATHS) for _ in range(total)):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            data = response.read()
        finally:
            connection.close()
        _, lang, k = path.split("/")
        if response.status == 200 and data == body(lang, int(k)):
            served.append(path)
    return served


if os.environ.get("LOAD_STACK"):
    _config = {
        "base_url": os.environ["LOAD_BASE_URL"],
        "store": os.environ["LOAD_STORE"],
    }
    app = (_flask if os.environ["LOAD_STACK"] == "wsgi" else _starlette)(_config)


if __name__ == "__main__":
    port, seed, total = map(int, sys.argv[1:4])
    print(json.dumps(client(port, seed, total)))
