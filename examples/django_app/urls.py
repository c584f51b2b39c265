"""The demo's URLconf: the Flask demo's paths, without Django's trailing slashes."""

from __future__ import annotations

from django.urls import path

from . import views

handler404 = "django_app.views.not_found"

urlpatterns = [
    path("", views.home),
    path("about", views.about),
    path("blog/", views.blog),
    path("blog/<slug>", views.post),
    path("pages", views.pages),
    path("search", views.search),
    path("account", views.account),
    path("login", views.login),
    path("admin/", views.admin),
    path("api/posts", views.api_posts),
    path("draft", views.draft),
    path("old", views.old),
    path("gone", views.gone),
    path("en/", views.language, {"lang": "en"}),
    path("de/", views.language, {"lang": "de"}),
]
