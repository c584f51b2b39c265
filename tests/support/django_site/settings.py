"""The project's settings: the sitemap app installed, its middleware first."""

from __future__ import annotations

import os
from pathlib import Path

SECRET_KEY = "test-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["www.example.com", "127.0.0.1", "localhost", "testserver"]
ROOT_URLCONF = "django_site.urls"
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.sitemaps",
    "sitemap_middleware.django",
]
MIDDLEWARE = [
    "sitemap_middleware.django.SitemapMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [Path(__file__).resolve().parent / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("DJANGO_TEST_DB", ":memory:"),
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
STATIC_URL = "static/"
LOGIN_URL = "/accounts/login/"
SITEMAP = {
    "base_url": os.environ.get("SITEMAP_TEST_BASE_URL", "https://www.example.com"),
    "store": os.environ.get("SITEMAP_TEST_STORE", "memory://"),
}
