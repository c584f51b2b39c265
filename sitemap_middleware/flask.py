"""Flask glue: ``Sitemap(app)`` or ``Sitemap().init_app(app)`` wraps ``app.wsgi_app``
with :class:`~sitemap_middleware.SitemapMiddleware`, configured from
``app.config["SITEMAP"]``, and tells it which route served each page.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from .config import DEFAULT_STORE_FILE
from .errors import ConfigError
from .wsgi import SitemapMiddleware

EXTENSION = "sitemap"


class Sitemap:
    """The Flask extension. The store defaults to an SQLite file in the app's
    instance folder; the middleware lands in ``app.extensions["sitemap"]``.

    .. code-block:: python

        app.config["SITEMAP"] = {"base_url": "https://www.example.com"}
        Sitemap(app)
    """

    def __init__(self, app: Any = None) -> None:
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Any) -> SitemapMiddleware:
        """Wrap ``app.wsgi_app``; calling it twice for one app is an error."""
        if EXTENSION in app.extensions:
            raise ConfigError("Sitemap is already set up for this app")
        config = app.config.get("SITEMAP")
        if config is None:
            raise ConfigError(
                "Sitemap needs app.config[\"SITEMAP\"], a dict with at least 'base_url'"
            )
        if "store" not in config:
            os.makedirs(app.instance_path, exist_ok=True)
            path = os.path.join(app.instance_path, DEFAULT_STORE_FILE)
            config = {**config, "store": f"sqlite:///{path}"}
        middleware = SitemapMiddleware(
            app.wsgi_app, config, find_route=_route_finder(app)
        )
        app.wsgi_app = middleware
        app.extensions[EXTENSION] = middleware
        return middleware


def get_sitemap(app: Any) -> SitemapMiddleware:
    """The middleware that ``Sitemap`` installed on ``app``."""
    middleware: SitemapMiddleware = app.extensions[EXTENSION]
    return middleware


def _route_finder(app: Any) -> Callable[[Mapping[str, Any]], tuple[str, object] | None]:
    views = app.view_functions

    def find_route(environ: Mapping[str, Any]) -> tuple[str, object] | None:
        # Flask's request sits in the environ while the response starts, its
        # URL rule matched: no per-request hook needed, and pages that are not
        # recorded pay nothing.
        rule = getattr(environ.get("werkzeug.request"), "url_rule", None)
        if rule is None:
            return None
        return rule.rule, views.get(rule.endpoint)

    return find_route
