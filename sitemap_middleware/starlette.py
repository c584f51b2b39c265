"""Starlette and FastAPI glue: install :class:`ASGISitemapMiddleware` with its
config checked at once, and find it inside an app to call ``flush()`` or
``stats()`` on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .apps import MAX_LAYERS, STARLETTE
from .apps.frameworks import refuse_second
from .asgi import ASGISitemapMiddleware
from .config import Config
from .core import checked as check_config

if TYPE_CHECKING:
    from starlette.middleware import Middleware


def add_sitemap(app: Any, config: Mapping[str, Any] | Config) -> None:
    """Install the sitemap middleware on a Starlette or FastAPI app, the
    config checked now: a mistake raises here, in the app factory, where
    ``app.add_middleware(ASGISitemapMiddleware, config=...)`` would let the
    server start and answer every request with 500 (Starlette builds its
    middleware at the first request or lifespan startup).

    .. code-block:: python

        app = FastAPI()
        add_sitemap(app, {"base_url": "https://www.example.com"})

    :raises ConfigError: naming the key at fault, the store URI's options
        included; an SQLite file whose folder is missing; an app that has a
        sitemap middleware already. The store is not connected to: a server
        that is down is an outage, met at run time.
    """
    refuse_second(app, ASGISitemapMiddleware)
    app.add_middleware(ASGISitemapMiddleware, config=checked(config))


def middleware(config: Mapping[str, Any] | Config) -> Middleware:
    """The same for ``Starlette(middleware=[...])``: the specification of the
    sitemap middleware, its config checked now.

    .. code-block:: python

        from sitemap_middleware.starlette import middleware

        app = Starlette(routes=routes, middleware=[middleware(config)])

    :raises ConfigError: as :func:`add_sitemap`.
    """
    # Imported here: importing the package needs no framework.
    from starlette.middleware import Middleware

    return Middleware(ASGISitemapMiddleware, config=checked(config))


def checked(config: Mapping[str, Any] | Config) -> Config:
    """The config checked as :func:`~sitemap_middleware.core.checked` does,
    in Starlette's spelling of routes."""
    return check_config(config, STARLETTE)


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
        elif callable(getattr(layer, "asgi_app", None)):  # Quart's app
            layer = layer.asgi_app
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
