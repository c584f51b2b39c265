"""The URLconf of a project that serves django.contrib.sitemaps at /sitemap.xml,
the path the middleware answers."""

from __future__ import annotations

from django.contrib.sitemaps.views import sitemap
from django.urls import path

from . import views
from .urls import sitemaps

urlpatterns = [
    path("", views.home),
    path("sitemap.xml", sitemap, {"sitemaps": sitemaps}),
]
