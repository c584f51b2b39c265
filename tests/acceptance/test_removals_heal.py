"""Removals heal under a real server: gunicorn with several workers, each holding
/about as fresh for five minutes; the command line removes it from the store; the
next visits, whichever worker serves them, put it back in the sitemap within a
couple of seconds, with no restart."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.helpers import HTTPClient, free_port, gunicorn, sitemap_urls, wait_until

pytestmark = [pytest.mark.servers, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 4
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def server(store_uri: str, tmp_path: Path) -> Iterator[tuple[str, str, HTTPClient]]:
    """The Flask example under gunicorn with WORKERS workers, each answer
    naming the worker that served it (X-Worker, outside the middleware)."""
    uri = store_uri
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    entry = f"""
        import os
        from flask_app import create_app

        inner = create_app({{"base_url": {base!r}, "store": {uri!r}}})

        def app(environ, start_response):
            def start(status, headers, exc_info=None):
                headers = [*headers, ("X-Worker", str(os.getpid()))]
                return start_response(status, headers, exc_info)
            return inner(environ, start)
        """
    with gunicorn(tmp_path, port, WORKERS, entry) as client:
        yield base, uri, client


def test_a_page_removed_by_the_command_line_is_back_in_seconds(
    server: tuple[str, str, HTTPClient],
) -> None:
    base, uri, client = server
    about = f"{base}/about"

    def listed() -> bool:
        return about in sitemap_urls(client)

    # Every worker serves /about, records it (or sees it stored) and holds it
    # as fresh for recheck_interval (300 s): on the release before, none of
    # them would have written it again for five minutes.
    workers: set[str] = set()
    deadline = time.monotonic() + 30
    while len(workers) < WORKERS:
        assert time.monotonic() < deadline, f"only workers {workers} answered"
        reply = client.get("/about")
        assert reply.status == 200
        workers.add(reply.headers["x-worker"])
    wait_until(listed, 10, "/about in the sitemap")
    time.sleep(1.5)  # every writer has written and remembers it

    removed = subprocess.run(
        [
            sys.executable,
            "-c",
            "from sitemap_middleware.cli import main; main()",
            "remove",
            "--store",
            uri,
            "--base-url",
            base,
            about,
        ],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.strip() == f"removed: {about}"
    assert not listed()

    seen: set[str] = set()

    def back() -> bool:
        for _ in range(2 * WORKERS):  # a few visits: every worker sees it
            reply = client.get("/about")
            assert reply.status == 200
            seen.add(reply.headers["x-worker"])
        return listed()

    took = wait_until(back, 5, "/about back in the sitemap")
    print(f"{uri.partition(':')[0]}: /about listed again after {took:.2f} s")
    assert listed()
