"""What the apps share: their asset folders, and the ASGI install of the README's
quick start (``add_sitemap``), with ``add_middleware`` where that helper is missing."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
DOWNLOADS = HERE / "downloads"
# The navbar logo of every app: site chrome, never an image of a page.
LOGO = "/static/logo.png"


def install_asgi(app: Any, config: Mapping[str, Any]) -> None:
    """``add_sitemap(app, config)`` as the README says; before that helper exists,
    the ``add_middleware`` it replaces, so that these apps run on older code."""
    try:
        from sitemap_middleware.starlette import add_sitemap  # type: ignore[attr-defined]
    except ImportError:
        from sitemap_middleware import ASGISitemapMiddleware

        app.add_middleware(ASGISitemapMiddleware, config=dict(config))
    else:
        add_sitemap(app, dict(config))
