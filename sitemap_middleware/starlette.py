"""Starlette and FastAPI glue: find the :class:`ASGISitemapMiddleware` inside an
app to call ``flush()`` or ``stats()`` on it.
"""

from __future__ import annotations

from typing import Any

from .asgi import ASGISitemapMiddleware

# Layers walked at most: more than any real stack holds, and an end should a
# chain of ``app`` attributes lead round in a circle.
MAX_LAYERS = 100


def get_sitemap(app: Any) -> ASGISitemapMiddleware:
    """The sitemap middleware serving ``app``: installed with
    ``Middleware(...)`` or ``app.add_middleware(...)``, or wrapped around it.

    Starlette (and FastAPI) create their middleware instances when the app
    starts, at lifespan startup or on the first request, whichever comes
    first; before that only specifications exist. Call this from then on: in
    the lifespan handler, in a request, or after ``TestClient(app)`` has been
    entered. Earlier it raises :class:`LookupError` saying so, and builds
    nothing: building the stack here would make a second instance, or stop
    ``add_middleware`` from working.
    """
    layer: Any = app
    for _ in range(MAX_LAYERS):
        if isinstance(layer, ASGISitemapMiddleware):
            return layer
        if hasattr(layer, "user_middleware"):  # a Starlette or FastAPI app
            if layer.middleware_stack is None:
                if _declared(layer.user_middleware):
                    raise LookupError(
                        "ASGISitemapMiddleware is installed on this app but exists"
                        " only once the app has started (lifespan startup or first"
                        " request); call get_sitemap(app) after that"
                    )
                break
            layer = layer.middleware_stack
        else:
            layer = getattr(layer, "app", None)
            if layer is None:
                break
    raise LookupError("no ASGISitemapMiddleware in this app")


def _declared(specs: list[Any]) -> bool:
    """Whether a ``Middleware(cls, ...)`` specification names the sitemap."""
    for spec in specs:
        cls = getattr(spec, "cls", None)
        if isinstance(cls, type) and issubclass(cls, ASGISitemapMiddleware):
            return True
    return False
