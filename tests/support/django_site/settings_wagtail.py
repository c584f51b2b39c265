"""The project as a Wagtail site: its page tree served by Wagtail, its
``wagtail.contrib.sitemaps`` view at /sitemap.xml (the middleware's path)."""

from __future__ import annotations

from .settings import *  # noqa: F403
from .settings import INSTALLED_APPS, MIDDLEWARE

ROOT_URLCONF = "django_site.urls_wagtail"
INSTALLED_APPS = [
    *INSTALLED_APPS,
    "wagtail.contrib.sitemaps",
    "wagtail.sites",
    "wagtail.users",
    "wagtail.documents",
    "wagtail.images",
    "wagtail.search",
    "wagtail.admin",
    "wagtail",
    "modelcluster",
    "taggit",
]
MIDDLEWARE = [*MIDDLEWARE, "wagtail.contrib.redirects.middleware.RedirectMiddleware"]
INSTALLED_APPS.append("wagtail.contrib.redirects")
WAGTAIL_SITE_NAME = "Field Notes"
WAGTAILADMIN_BASE_URL = "https://www.example.com"
