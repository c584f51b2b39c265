"""Django glue: ``sitemap_middleware.django`` in ``INSTALLED_APPS``,
:class:`SitemapMiddleware` first in ``MIDDLEWARE``, ``settings.SITEMAP`` the
config dict; ``python manage.py sitemap ...`` runs the command line.

.. code-block:: python

    INSTALLED_APPS = [..., "sitemap_middleware.django"]
    MIDDLEWARE = ["sitemap_middleware.django.SitemapMiddleware", ...]
    SITEMAP = {"base_url": "https://www.example.com"}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .middleware import DjangoSitemap, SitemapMiddleware, get_sitemap

__all__ = ["DjangoSitemap", "SitemapMiddleware", "get_sitemap"]


def __getattr__(name: str) -> object:
    """The middleware, once Django asks for it: ``INSTALLED_APPS`` imports this
    package before the app registry is ready (PEP 562)."""
    if name in __all__:
        from . import middleware

        return getattr(middleware, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
