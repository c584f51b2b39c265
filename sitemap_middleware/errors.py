"""Exceptions of sitemap_middleware, factored out to avoid import loops.

* ``SitemapError``: base of everything the package raises.
    * ``ConfigError`` (also a ``ValueError``): a bad config dict or store URI,
      raised at start-up.
    * ``StoreError``: a store could not do what it was asked: an outage,
      retried (a server down, a lock held too long).
        * ``StoreFault``: one that lasts until someone acts (a damaged file, a
          schema this release cannot read): not retried like an outage.
        * ``StoreReadOnly``: a write to a store that can only be read (a
          file on a read-only file system): its pages are still served.
"""

from __future__ import annotations


class SitemapError(Exception):
    """Base class of the package's exceptions."""


class ConfigError(SitemapError, ValueError):
    """The configuration is invalid; the message names the key and the fix."""


class StoreError(SitemapError):
    """A store failed to read or write."""


class StoreFault(StoreError):
    """The store cannot be used until someone acts: its message names the
    store and what to do (restore a backup, delete it to start again, upgrade
    the package). Waiting does not end it, though the store may be repaired
    while the app runs: it is looked at again now and then, never retried
    like an outage."""


class StoreReadOnly(StoreError):
    """A write to a store that can only be read: its pages are served, and
    nothing is recorded until it can be written again."""
