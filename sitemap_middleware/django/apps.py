"""The Django app: ``settings.SITEMAP`` checked at start-up (system checks naming
the key), and the one sitemap middleware of the process, built from it once and
rebuilt when a test overrides the setting.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed

from ..apps import DJANGO
from ..apps.django import MIDDLEWARE
from ..core import checked
from ..errors import ConfigError

if TYPE_CHECKING:
    from .middleware import DjangoSitemap

SETTING = "SITEMAP"


class SitemapConfig(AppConfig):  # type: ignore[misc]
    """``sitemap_middleware.django`` in ``INSTALLED_APPS``."""

    name = "sitemap_middleware.django"
    label = "sitemap_middleware"
    verbose_name = "Sitemap"

    def ready(self) -> None:
        self._built: DjangoSitemap | None = None
        self._building = threading.Lock()
        checks.register(check_settings)
        setting_changed.connect(self._changed, dispatch_uid=self.name)

    def sitemap(self) -> DjangoSitemap:
        """The middleware's shared part (store, writer, server), built from
        ``settings.SITEMAP`` on first use, one per process, its routes
        learned from the URLconf.

        :raises ImproperlyConfigured: naming the key at fault.
        """
        built = self._built
        if built is not None:
            return built
        with self._building:
            if self._built is None:
                from .middleware import DjangoSitemap

                try:
                    self._built = DjangoSitemap(_setting())
                except ConfigError as exc:
                    raise ImproperlyConfigured(f"settings.{SETTING}: {exc}") from exc
            built = self._built
        # Here, not only in the middleware: once override_settings has built
        # it again, no handler loads its middleware to learn the routes. Out
        # of the lock: the URLconf it imports may ask for the sitemap.
        built.learn()
        return built

    def replace(self, sitemap: DjangoSitemap | None) -> DjangoSitemap | None:
        """Put ``sitemap`` in place of the one built (``None``: build again
        from the settings on next use); the one it replaces is returned,
        for its owner to close."""
        with self._building:
            old, self._built = self._built, sitemap
        return old

    def _changed(self, setting: str, **kwargs: Any) -> None:
        # override_settings(SITEMAP=...) in a test: the next request builds
        # the middleware of the new config.
        if setting == SETTING:
            old = self.replace(None)
            if old is not None:
                old.close()


def _setting() -> dict[str, Any]:
    given = getattr(settings, SETTING, None)
    if given is None:
        raise ConfigError(
            f"the {SETTING} setting is missing: a dict with at least 'base_url'"
        )
    if not isinstance(given, dict):
        raise ConfigError(f"the {SETTING} setting must be a dict, got {given!r}")
    return given


def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``settings.SITEMAP`` as the middleware will parse it (each mistake an
    error naming the key), and the middleware's place in ``MIDDLEWARE``."""
    found: list[checks.CheckMessage] = []
    try:
        checked(_setting(), DJANGO)
    except ConfigError as exc:
        found.append(
            checks.Error(
                f"settings.{SETTING}: {exc}",
                hint="See the configuration reference of sitemap-middleware.",
                id="sitemap_middleware.E001",
            )
        )
    middleware = list(getattr(settings, "MIDDLEWARE", None) or ())
    if MIDDLEWARE not in middleware:
        found.append(
            checks.Warning(
                f"{MIDDLEWARE!r} is not in MIDDLEWARE: nothing is recorded or served",
                hint="Put it first in MIDDLEWARE.",
                id="sitemap_middleware.W001",
            )
        )
    elif middleware[0] != MIDDLEWARE:
        found.append(
            checks.Warning(
                f"{MIDDLEWARE!r} is not the first entry of MIDDLEWARE: a middleware"
                " before it may answer the sitemap's paths, or change the pages it"
                " sees",
                hint="Put it first in MIDDLEWARE.",
                id="sitemap_middleware.W002",
            )
        )
    return found
