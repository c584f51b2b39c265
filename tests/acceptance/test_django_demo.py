"""The Django demo (examples/django_app) under gunicorn and uvicorn, crawled as
the other demos are: exactly the public pages of ``demo_content`` listed, the
signed-in account never; ``manage.py sitemap`` on it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.helpers import HTTPClient, free_port, running, sitemap_urls, wait_until

pytestmark = [pytest.mark.servers, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SERVERS = {
    "gunicorn": ["-m", "gunicorn", "-w", "2", "-b", "{bind}", "django_app.wsgi"],
    "uvicorn": ["-m", "uvicorn", "--port", "{port}", "django_app.asgi:application"],
}


@pytest.fixture(params=sorted(SERVERS))
def demo(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, HTTPClient]]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("DEMO_BASE_URL", base)
    monkeypatch.setenv("DEMO_STORE", f"sqlite:///{tmp_path / 's.sqlite3'}")
    # The demo's, whatever another test of this process set.
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "django_app.settings")
    # The server's path is its folder's: the demo and demo_content are there.
    for name in ("django_app", "demo_content.py"):
        (tmp_path / name).symlink_to(EXAMPLES / name)
    bind = f"127.0.0.1:{port}"
    argv = [a.format(bind=bind, port=port) for a in SERVERS[request.param]]
    with running(argv, tmp_path, port, "/", f"{request.param} to start") as (
        client,
        _,
    ):
        yield base, client


def test_the_demo_lists_exactly_its_public_pages(demo: tuple[str, HTTPClient]) -> None:
    import demo_content

    base, client = demo

    def fetch(path: str) -> tuple[int, str, bytes]:
        reply = client.get(path)
        return reply.status, reply.headers.get("content-type", ""), reply.body

    demo_content.crawl(fetch)
    assert client.get("/account", {"Cookie": "session=demo"}).status == 200
    expected = sorted(f"{base}{path}" for path in demo_content.PUBLIC_PATHS)
    # The writers flush about once a second.
    wait_until(lambda: sorted(sitemap_urls(client)) == expected, 15, "the sitemap")
    assert client.get("/site-map").status == 200


def test_manage_py_sitemap_seeds_the_demo(tmp_path: Path) -> None:
    import demo_content

    store = f"sqlite:///{tmp_path / 's.sqlite3'}"
    env = {
        **os.environ,
        "DEMO_STORE": store,
        "DEMO_BASE_URL": "http://127.0.0.1:8000",
        "DJANGO_SETTINGS_MODULE": "django_app.settings",
    }
    manage = [sys.executable, str(EXAMPLES / "django_app" / "manage.py"), "sitemap"]
    done = subprocess.run(
        [*manage, "seed"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(
        [*manage, "list"], capture_output=True, text=True, env=env, timeout=120
    )
    paths = sorted(
        line.removeprefix("http://127.0.0.1:8000")
        for line in listed.stdout.split()
        if line.startswith("http")
    )
    # Every public page but those only links reach (/search's query aside).
    assert set(paths) <= set(demo_content.PUBLIC_PATHS)
    assert {post.path for post in demo_content.POSTS} <= set(paths)
