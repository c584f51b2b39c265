"""The app of tests/acceptance/test_served_sections.py: a Flask blog wrapped by
``SitemapMiddleware`` on ``SECTIONS_BASE_URL`` and ``SECTIONS_STORE``, with the
``sections`` of the JSON in ``SECTIONS``. It answers 200 HTML for every path of
:data:`PATHS`: posts under ``/blog/<slug>``, tag pages under ``/tags/<tag>``,
and ``/``, ``/about`` and ``/terms``.
"""

from __future__ import annotations

import json
import os
from typing import Any

POSTS = [f"/blog/post-{n}" for n in range(12)]
TAGS = [f"/tags/tag-{n}" for n in range(7)]
OTHERS = ["/", "/about", "/terms"]
PATHS = POSTS + TAGS + OTHERS


def body(path: str) -> bytes:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{path}</title></head><body><main><h1>{path}</h1>"
        f"<p>What {path} says.</p></main></body></html>"
    ).encode()


def _app(config: dict[str, Any]) -> Any:
    from flask import Flask, Response, request

    from sitemap_middleware import SitemapMiddleware

    flask = Flask(__name__)

    def page() -> Response:
        return Response(body(request.path), content_type="text/html; charset=utf-8")

    flask.add_url_rule("/", "home", page)
    flask.add_url_rule("/about", "about", page)
    flask.add_url_rule("/terms", "terms", page)
    flask.add_url_rule("/blog/<slug>", "post", lambda slug: page())
    flask.add_url_rule("/tags/<tag>", "tag", lambda tag: page())
    flask.wsgi_app = SitemapMiddleware(flask.wsgi_app, config)  # type: ignore[method-assign]
    return flask


if os.environ.get("SECTIONS_STORE"):
    app = _app(
        {
            "base_url": os.environ["SECTIONS_BASE_URL"],
            "store": os.environ["SECTIONS_STORE"],
            "sections": json.loads(os.environ["SECTIONS"]),
        }
    )
