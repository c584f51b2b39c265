"""The app of the store-file tests in tests/acceptance/test_faults.py, served by
gunicorn: every path but robots.txt is a public HTML page naming itself, wrapped
by ``SitemapMiddleware`` on ``FAULT_STORE`` and ``FAULT_BASE_URL``, answered after
``FAULT_DELAY`` seconds; the package's
log lines go to stderr with the worker's pid, so that the test tells the
workers apart."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import Any

from sitemap_middleware import SitemapMiddleware

handler = logging.StreamHandler()
handler.setFormatter(logging.Formatter("%(process)d %(levelname)s %(message)s"))
logging.getLogger("sitemap_middleware").addHandler(handler)
logging.getLogger("sitemap_middleware").setLevel(logging.INFO)


def page(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    path = environ["PATH_INFO"]
    if path == "/robots.txt":
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"none"]
    # A page takes a while: requests sent together reach every worker.
    time.sleep(float(os.environ.get("FAULT_DELAY", "0")))
    body = f"<!doctype html><title>{path}</title><h1>{path}</h1>".encode()
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
    return [body]


app = SitemapMiddleware(
    page,
    {
        "base_url": os.environ["FAULT_BASE_URL"],
        "store": os.environ["FAULT_STORE"],
        # Pages stay fresh for five minutes: only the store's new epoch
        # makes a worker record again what it wrote into a deleted file.
        "recheck_interval": 300,
        "new_urls_per_minute": None,
    },
)
