"""What the apps share: their asset folders, and the ASGI install of the README's
quick start (``add_sitemap``)."""

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
    """``add_sitemap(app, config)``, as the README's FastAPI quick start says."""
    from sitemap_middleware.starlette import add_sitemap

    add_sitemap(app, dict(config))
