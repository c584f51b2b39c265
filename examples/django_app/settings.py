"""The demo's settings: the sitemap app installed, its middleware first, the
store and base URL of the other demos (``$DEMO_STORE``, ``$DEMO_BASE_URL``
override them)."""

from __future__ import annotations

import os

import demo_content

SECRET_KEY = "demo-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ROOT_URLCONF = "django_app.urls"
INSTALLED_APPS = ["sitemap_middleware.django"]
MIDDLEWARE = ["sitemap_middleware.django.SitemapMiddleware"]
DATABASES: dict[str, object] = {}
USE_TZ = True
SITEMAP = demo_content.with_store_folder(
    {
        "base_url": os.environ.get("DEMO_BASE_URL", demo_content.local_base_url()),
        "store": os.environ.get("DEMO_STORE", demo_content.STORE),
        # The middleware's site map for people; /pages is the app's own.
        "html_sitemap": "/site-map",
    }
)
