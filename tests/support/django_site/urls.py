"""The project's URLconf."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.sitemaps import Sitemap
from django.contrib.sitemaps.views import sitemap as sitemap_view
from django.urls import include, path

from . import views


class Posts(Sitemap):
    """The Sitemap class the project wrote before the middleware."""

    def items(self) -> list[str]:
        return ["old-post", *views.POSTS]

    def location(self, item: str) -> str:
        return f"/blog/{item}/"


sitemaps = {"posts": Posts}

urlpatterns = [
    path("", views.home),
    path("about/", views.about),
    path("blog/<slug:slug>/", views.post),
    path("archive/", views.Archive.as_view()),
    path("contact/", views.contact),
    path("account/", views.account),
    path("members/", views.members),
    path("stream/", views.stream),
    path("news/", views.news),
    path("live/", views.live),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("old-sitemap.xml", sitemap_view, {"sitemaps": sitemaps}),
]
