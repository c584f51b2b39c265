"""The project without the sitemap middleware (nor its app)."""

from __future__ import annotations

from .settings import *  # noqa: F403
from .settings import INSTALLED_APPS, MIDDLEWARE

INSTALLED_APPS = [app for app in INSTALLED_APPS if not app.startswith("sitemap")]
MIDDLEWARE = [entry for entry in MIDDLEWARE if not entry.startswith("sitemap")]
