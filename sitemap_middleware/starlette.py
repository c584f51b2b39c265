"""Starlette and FastAPI glue: find the :class:`ASGISitemapMiddleware` inside an
app to call ``flush()`` or ``stats()`` on it.
"""

from __future__ import annotations

from typing import Any

from .asgi import ASGISitemapMiddleware


def get_sitemap(app: Any) -> ASGISitemapMiddleware:
    """The sitemap middleware installed with ``Middleware(...)`` or
    ``app.add_middleware(...)``.

    Starlette builds its middleware stack on the first request; this builds it
    the same way if that has not happened yet.
    """
    layer = getattr(app, "middleware_stack", None)
    if layer is None and hasattr(app, "build_middleware_stack"):
        layer = app.middleware_stack = app.build_middleware_stack()
    layer = layer or app
    seen = 0
    while layer is not None and seen < 100:
        if isinstance(layer, ASGISitemapMiddleware):
            return layer
        layer = getattr(layer, "app", None)
        seen += 1
    raise LookupError("no ASGISitemapMiddleware in this app")
