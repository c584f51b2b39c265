"""The Django project under real servers, gunicorn (wsgi.py) and uvicorn
(asgi.py): browsed anonymously, then signed in through Django's login form (a
CSRF token, a session), the sitemap lists the public pages and nothing else."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.helpers import (
    HTTPClient,
    exited,
    free_port,
    running,
    sitemap_urls,
    started,
    wait_until,
)

pytestmark = [pytest.mark.servers, pytest.mark.slow]

SUPPORT = Path(__file__).resolve().parent.parent / "support"
SERVERS = {
    "gunicorn": ["-m", "gunicorn", "-w", "2", "-b", "{bind}", "django_site.wsgi"],
    "uvicorn": ["-m", "uvicorn", "--port", "{port}", "django_site.asgi:application"],
}
PUBLIC = ["/", "/about/", "/archive/", "/blog/hello-world/", "/contact/", "/news/"]
PRIVATE = ["/account/", "/members/", "/admin/", "/admin/login/", "/accounts/login/"]


def _environment(tmp_path: Path, port: int) -> dict[str, str]:
    return {
        "DJANGO_SETTINGS_MODULE": "django_site.settings",
        "DJANGO_TEST_DB": str(tmp_path / "db.sqlite3"),
        "SITEMAP_TEST_STORE": f"sqlite:///{tmp_path / 'sitemap.sqlite3'}",
        "SITEMAP_TEST_BASE_URL": f"http://127.0.0.1:{port}",
    }


@pytest.fixture(params=sorted(SERVERS))
def server(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, HTTPClient]]:
    port = free_port()
    for name, value in _environment(tmp_path, port).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYTHONPATH", str(SUPPORT))
    manage = [sys.executable, str(SUPPORT / "django_site" / "manage.py")]
    subprocess.run([*manage, "migrate", "-v", "0"], check=True, timeout=120)
    make_user = (
        "from django.contrib.auth.models import User;"
        " User.objects.create_superuser('ada', 'ada@example.com', 'lovelace-1815')"
    )
    subprocess.run([*manage, "shell", "-c", make_user], check=True, timeout=120)
    argv = [
        a.format(bind=f"127.0.0.1:{port}", port=port) for a in SERVERS[request.param]
    ]
    (tmp_path / "django_site").symlink_to(SUPPORT / "django_site")
    with running(argv, tmp_path, port, "/about/", f"{request.param} to start") as (
        client,
        _,
    ):
        yield f"http://127.0.0.1:{port}", client


def _sign_in(client: HTTPClient) -> str:
    """Django's login form, as a browser submits it: the session cookie."""
    import http.client
    from urllib.parse import urlencode

    form = client.get("/accounts/login/")
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', form.body)
    assert token is not None
    cookie = form.headers["Set-Cookie"].split(";")[0]
    body = urlencode(
        {
            "username": "ada",
            "password": "lovelace-1815",
            "csrfmiddlewaretoken": token[1].decode(),
        }
    )
    conn = http.client.HTTPConnection(client.host, client.port, timeout=10)
    try:
        conn.request(
            "POST",
            "/accounts/login/",
            body,
            {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie},
        )
        response = conn.getresponse()
        response.read()
        assert response.status == 302, response.status
        cookies = response.headers.get_all("Set-Cookie") or []
    finally:
        conn.close()
    session = next(c.split(";")[0] for c in cookies if c.startswith("sessionid="))
    return f"{cookie}; {session}"


def test_the_public_pages_and_nothing_signed_in(server: tuple[str, HTTPClient]) -> None:
    base, client = server
    for path in [*PUBLIC, "/stream/", *PRIVATE]:
        client.get(path)
    cookie = _sign_in(client)
    signed_in = {"Cookie": cookie}
    assert client.get("/account/", signed_in).status == 200
    assert client.get("/members/", signed_in).status == 200
    assert client.get("/admin/", signed_in).status == 200
    for path in ["/members/", "/admin/auth/user/", "/contact/", "/about/?me=1"]:
        client.get(path, signed_in)
    expected = sorted(f"{base}{path}" for path in [*PUBLIC, "/stream/"])
    # The writers flush about once a second.
    wait_until(lambda: sorted(sitemap_urls(client)) == expected, 15, "the sitemap")
    robots = client.get("/robots.txt")
    assert f"Sitemap: {base}/sitemap.xml".encode() in robots.body


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_a_bad_setting_stops_the_server(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store file whose folder is missing is a config error: the handler
    loads its middleware as the server imports the project, which fails, and
    the log names the setting."""
    port = free_port()
    for key, value in _environment(tmp_path, port).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SITEMAP_TEST_STORE", f"sqlite:///{tmp_path}/missing/s.sqlite3")
    (tmp_path / "django_site").symlink_to(SUPPORT / "django_site")
    bind = f"127.0.0.1:{port}"
    argv = [a.format(bind=bind, port=port) for a in SERVERS[name]]
    assert exited(started(argv, tmp_path), 60) != 0
    log = (tmp_path / "server.log").read_text()
    assert "settings.SITEMAP" in log and "missing" in log
