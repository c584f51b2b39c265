"""Exceptions of sitemap_middleware, factored out to avoid import loops.

* ``SitemapError``: base of everything the package raises.
    * ``ConfigError`` (also a ``ValueError``): a bad config dict or store URI,
      raised at start-up.
    * ``StoreError``: a store could not do what it was asked.
"""

from __future__ import annotations


class SitemapError(Exception):
    """Base class of the package's exceptions."""


class ConfigError(SitemapError, ValueError):
    """The configuration is invalid; the message names the key and the fix."""


class StoreError(SitemapError):
    """A store failed to read or write."""
