"""IndexNow: the URLs the writers added, changed or removed, pushed to the configured
endpoint once across every worker (claimed from the store's pending set), from a
thread of its own, never from the request path.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from werkzeug.http import parse_date

from ..config import IndexNowOptions
from ..errors import StoreError
from ..reasons import PUSHED
from ..stores.contract import Pushes
from .breaker import Breaker

logger = logging.getLogger("sitemap_middleware")

# URLs one request may carry (indexnow.org, "Submitting set of URLs").
MAX_URLS = 10_000
# Seconds a request may take; a claim holds many times that, so that only a
# worker that died (or lost its store) leaves its URLs for another to send.
TIMEOUT = 10.0
LEASE = 120.0
# Without a Retry-After, a retry waits this long, doubling from MIN to MAX (a
# Retry-After is followed up to MAX).
MIN_BACKOFF = 1.0
MAX_BACKOFF = 3600.0
# What an answer that stops the pushes means (indexnow.org, "Response format").
_STOPS = {
    400: "the request was refused as malformed",
    403: "the key is not valid: the key file at {key_location} was not found or"
    " does not hold the key",
    422: "the URLs do not belong to {host}, or the key does not match the"
    " protocol's form",
}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer, not a new destination: nothing is sent anywhere
    but the configured endpoint."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Pusher:
    """Sends the store's pending pushes in batches of at most ``MAX_URLS``.

    Each batch is claimed with a lease (``Pushes.claim_pushes``): deleted once
    the endpoint accepts it (200, 202), leased again to the time of the retry
    on 429, 5xx or a network error (``Retry-After`` respected), released and
    kept on any other answer, after which this process pushes no more until
    restarted (one ERROR line says why).
    """

    def __init__(
        self,
        options: IndexNowOptions,
        base_url: str,
        store: Pushes,
        count: Callable[[str, int], object] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._options = options
        # The recorder's counters: stats()["pushed"], summed by site_stats().
        self._count = count
        self._store = store
        self._clock = clock
        self._base = base_url
        self._host = urlsplit(base_url).hostname or ""
        self._key_location = base_url + options.key_location
        self._open = urllib.request.build_opener(_NoRedirect).open
        # The endpoint's (or the store's) outages: the wait before a retry.
        self._breaker = Breaker(
            "IndexNow push deferred: %(detail)s; the URLs stay pending,"
            " retried in %(delay).0f s",
            "IndexNow push deferred again: %(detail)s",
            "IndexNow pushes resumed after %(seconds).1f s",
            MIN_BACKOFF,
            MAX_BACKOFF,
        )
        self.stopped = False
        """``True`` once an answer stopped the pushes (until restart)."""
        self.sent = 0
        """URLs the endpoint accepted from this process."""
        self._wake = threading.Event()
        self._starting = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = False

    def start(self) -> None:
        """Start the thread (once)."""
        with self._starting:
            if self._thread is not None or self._stopping:
                return
            self._thread = threading.Thread(
                target=self._run, name="sitemap-indexnow", daemon=True
            )
            self._thread.start()

    def stop(self, timeout: float) -> None:
        """End the thread, within about ``timeout`` seconds (a request under
        way is given up on: its URLs stay pending, claimed until the lease
        ends)."""
        with self._starting:
            self._stopping = True
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        # Changes of the first interval go together, as every later ones do.
        delay = self._options.interval
        while not self._stopping and not self.stopped:
            self._wake.wait(min(delay, threading.TIMEOUT_MAX))
            if self._stopping:
                return
            delay = self.push()

    def push(self) -> float:
        """Claim one batch and send it; the seconds to wait before the next.
        Never raises."""
        if self.stopped:
            return math.inf
        try:
            return self._push()
        except Exception as exc:  # the thread never dies
            logger.error("bug in the IndexNow push: %r", exc, exc_info=exc)
            return self._breaker.back_off()

    def _push(self) -> float:
        now = self._clock()
        until = now + LEASE
        try:
            paths = self._store.claim_pushes(MAX_URLS, now, until)
        except StoreError as exc:
            return self._breaker.trip(f"the store is unavailable ({exc})")
        if not paths:
            return self._options.interval
        status, detail, retry_after = self._post(paths)
        if status is not None and 200 <= status < 300:
            try:
                self._store.pushed(paths, until)
            except StoreError as exc:
                # Sent again when the lease ends: at least once, never lost.
                logger.debug("IndexNow: sent, not yet marked sent: %s", exc)
            self.sent += len(paths)
            if self._count is not None:
                self._count(PUSHED, len(paths))
            self._breaker.reset()
            return 0.0 if len(paths) == MAX_URLS else self._options.interval
        if status is None or status == 429 or status >= 500:
            delay = self._breaker.trip(detail, self._asked(retry_after))
            try:
                self._store.retry_pushes(paths, until, now + delay)
            except StoreError:
                pass  # the lease ends anyway
            return delay
        self._stop(status, paths, until)
        return math.inf

    def _post(self, paths: list[str]) -> tuple[int | None, str, str | None]:
        """POST one batch; (status or ``None``, what happened, Retry-After)."""
        body = json.dumps(
            {
                "host": self._host,
                "key": self._options.key,
                "keyLocation": self._key_location,
                "urlList": [self._base + path for path in paths],
            }
        ).encode("utf-8")
        request = urllib.request.Request(
            self._options.endpoint,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json; charset=utf-8"},
        )
        endpoint = self._options.endpoint
        try:
            with self._open(request, timeout=TIMEOUT) as response:
                return response.status, f"{endpoint} answered {response.status}", None
        except urllib.error.HTTPError as exc:
            with exc:
                retry_after = exc.headers.get("Retry-After")
                return exc.code, f"{endpoint} answered {exc.code}", retry_after
        except (OSError, http.client.HTTPException) as exc:  # URLError is an OSError
            return None, f"{endpoint} could not be reached ({exc})", None

    def _asked(self, retry_after: str | None) -> float | None:
        """The seconds a Retry-After asks for (RFC 9110 §10.2.3: seconds or an
        HTTP date), ``None`` without one (or one not understood)."""
        if retry_after is None:
            return None
        text = retry_after.strip()
        # ASCII digits only: str.isdigit takes superscripts for digits too.
        if text.isascii() and text.isdigit():
            return float(text)
        when = parse_date(text)
        if when is None:
            return None
        return max(when.timestamp() - self._clock(), 0.0)

    def _stop(self, status: int, paths: list[str], until: float) -> None:
        self.stopped = True
        try:  # free for a worker with a better config; kept either way
            self._store.retry_pushes(paths, until, 0.0)
        except StoreError:
            pass
        meaning = _STOPS.get(status, "an answer IndexNow does not define")
        if 300 <= status < 400:
            meaning = "a redirect (set the endpoint to the URL it names)"
        logger.error(
            "IndexNow stopped until restart: %s answered %d (%s); the URLs"
            " stay pending",
            self._options.endpoint,
            status,
            meaning.format(key_location=self._key_location, host=self._host),
        )
