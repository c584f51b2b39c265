"""The Wagtail site's URLconf, as Wagtail's project template writes it, with its
sitemap view at /sitemap.xml."""

from __future__ import annotations

from django.urls import include, path
from wagtail import urls as wagtail_urls
from wagtail.admin import urls as wagtailadmin_urls
from wagtail.contrib.sitemaps.views import sitemap

urlpatterns = [
    path("admin/", include(wagtailadmin_urls)),
    path("sitemap.xml", sitemap),
    path("", include(wagtail_urls)),
]
