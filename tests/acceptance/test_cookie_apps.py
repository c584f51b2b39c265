"""Acceptance: sites whose public pages set a cookie. A Flask blog whose posts carry
a Flask-WTF comment form (the CSRF token in a new session: ``Set-Cookie`` on every
anonymous visit), under gunicorn with two workers, and a FastAPI site behind
starlette-csrf (``Set-Cookie: csrftoken=...`` on every page), under uvicorn, are
browsed by a crawler, by a visitor who keeps the cookies the site sets and by a
signed-in user; the sitemap lists exactly the public pages, the posts included.
Then a site whose ``base_url`` names another host: the warning that says why
nothing is listed comes within seconds of traffic, as the empty sitemap's 404 says.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from realapps.serve import Server

pytestmark = [pytest.mark.servers, pytest.mark.slow]

LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


def expect(
    client: httpx.Client, method: str, path: str, status: int, **kw: object
) -> httpx.Response:
    reply = client.request(method, path, **kw)  # type: ignore[arg-type]
    assert reply.status_code == status, f"{method} {path}: {reply.status_code}"
    return reply


def csrf_token(page: httpx.Response) -> str:
    """The token Flask-WTF's ``hidden_tag()`` put in a form."""
    found = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page.text)
    assert found is not None, page.text
    return found.group(1)


def sets_a_cookie(reply: httpx.Response, name: str) -> None:
    assert any(
        line.startswith(f"{name}=") for line in reply.headers.get_list("set-cookie")
    ), reply.headers


def crawl(crawler: httpx.Client, statuses: dict[str, int]) -> None:
    """Each path answers its status to a crawler, which keeps no cookie."""
    for path, status in statuses.items():
        crawler.cookies.clear()
        expect(crawler, "GET", path, status)


@dataclass
class Site:
    server: Server
    listing: set[str]


# -- the Flask blog with Flask-WTF ------------------------------------------------

BLOG_PUBLIC = {"/", "/about", "/post/1", "/post/2", "/newsletter", "/pricing"}


def browse_the_blog(server: Server) -> None:
    with server.client() as crawler:
        for path in sorted(BLOG_PUBLIC):
            crawler.cookies.clear()  # a crawler keeps no cookie
            reply = expect(crawler, "GET", path, 200)
            if path.startswith(("/post/", "/newsletter")):
                # The form's CSRF token, in a new session: the case at hand.
                sets_a_cookie(reply, "session")
                assert "cookie" in reply.headers["vary"].lower()
        crawl(
            crawler,
            {
                "/post/3": 404,  # unpublished
                "/drafts": 302,
                "/auth/login": 200,
                "/cart/add/1": 302,
                "/magic": 400,
                "/oauth/callback?code=4/0AX4&state=xyz": 200,
            },
        )
    # A magic link from a mail, opened in a fresh browser: it signs in at once.
    with server.client() as reader:
        reply = expect(reader, "GET", "/magic?token=c2lnbmVkLWluLWFz", 200)
        assert "Welcome back, ada" in reply.text
        sets_a_cookie(reply, "session")
    # A visitor whose browser keeps what the site sets: anonymous, but the
    # session cookie it sends back is not known to be harmless.
    with server.client() as visitor:
        for path in ("/post/1", "/post/2", "/about", "/pricing", "/pricing"):
            expect(visitor, "GET", path, 200)
        form = expect(visitor, "GET", "/post/1", 200)
        comment = {"csrf_token": csrf_token(form), "body": "Nice post"}
        expect(visitor, "POST", "/post/1", 302, data=comment)


def sign_in_to_the_blog(server: Server) -> None:
    with server.client() as member:
        form = expect(member, "GET", "/auth/login", 200)
        login = {
            "csrf_token": csrf_token(form),
            "username": "ada",
            "password": "lovelace",
        }
        expect(member, "POST", "/auth/login", 302, data=login)
        for path in ("/", "/post/1", "/post/3", "/drafts", "/about", "/newsletter"):
            reply = expect(member, "GET", path, 200)
            assert "Signed in as ada" in reply.text, path
        expect(member, "GET", "/auth/logout", 302)


@pytest.fixture(scope="module")
def blog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("blog")
    server = Server("gunicorn", "realapps.comments:create_app", folder)
    with server.browsed(browse_the_blog, sign_in_to_the_blog) as listing:
        yield Site(server, set(listing))


def test_the_blog_lists_its_posts_and_nothing_private(blog: Site) -> None:
    """The posts and the newsletter page set a cookie to every anonymous
    visitor and are listed; the pricing page's A/B cookie too; no signed-in
    page, magic link, login, callback, cart link or unpublished post."""
    assert blog.listing == BLOG_PUBLIC, sorted(blog.listing ^ BLOG_PUBLIC)


# -- the FastAPI site with starlette-csrf -------------------------------------------

EVENTS_PUBLIC = {"/", "/events/pycon", "/events/flask-meetup", "/contact"}


def browse_the_events(server: Server) -> None:
    with server.client() as crawler:
        for path in sorted(EVENTS_PUBLIC):
            crawler.cookies.clear()
            sets_a_cookie(expect(crawler, "GET", path, 200), "csrftoken")
        crawl(
            crawler,
            {
                "/events/board-meeting": 302,
                "/events/nope": 404,
                "/account": 302,
                "/login": 200,
                "/docs": 200,
            },
        )
    with server.client() as member:
        expect(member, "GET", "/login", 200)
        token = {"x-csrftoken": member.cookies["csrftoken"]}
        login = {"username": "ada", "password": "lovelace"}
        expect(member, "POST", "/login", 303, data=login, headers=token)
        assert "session" in member.cookies
        for path in ("/", "/events/board-meeting", "/account", "/contact"):
            reply = expect(member, "GET", path, 200)
            assert "Signed in as ada" in reply.text, path
        signup = {"email": "ada@example.com"}
        expect(member, "POST", "/events/pycon/signup", 303, data=signup, headers=token)
        expect(member, "GET", "/logout", 303)


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("events")
    server = Server("uvicorn", "realapps.events:create_app", folder)
    with server.browsed(browse_the_events) as listing:  # lifespan shutdown flushes
        yield Site(server, set(listing))


def test_the_csrf_cookie_site_lists_its_public_pages(events: Site) -> None:
    """Every page sets ``csrftoken``; the public ones are listed, the docs,
    the login, the members' event and the account page are not."""
    assert events.listing == EVENTS_PUBLIC, sorted(events.listing ^ EVENTS_PUBLIC)


# -- why nothing is listed, in a running server --------------------------------------


def _log_line(log: Path, needle: str, timeout: float) -> str | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in log.read_text(errors="replace").splitlines():
            if needle in line:
                return line
        time.sleep(0.2)
    return None


def test_a_base_url_on_another_host_is_warned_about_within_seconds(
    tmp_path: Path,
) -> None:
    """Started locally with the quick start's base_url, every request is for
    another host: nothing is queued, yet the warning naming
    ``allowed_hosts`` comes from the writer's periodic check within seconds
    (before anyone asks for the sitemap), and says what the 404 of the empty
    sitemap tells to look for."""
    server = Server(
        "flask",
        "realapps.comments:create_app",
        tmp_path,
        settings={"LOGGING": LOG_FORMAT},
        sitemap={"base_url": "https://www.example.com"},
    )
    server.start()
    try:
        with server.client() as client:
            for _ in range(12):
                expect(client, "GET", "/", 200)
                expect(client, "GET", "/about", 200)
        line = _log_line(server.log, "nothing recorded yet", timeout=20)
        assert line is not None, server.log.read_text()
        assert line.startswith(f"{logging.getLevelName(logging.WARNING)} ")
        assert "sitemap_middleware:" in line
        assert "'host'" in line and "'allowed_hosts'" in line and "'base_url'" in line
        with server.client() as client:
            empty = expect(client, "GET", "/sitemap.xml", 404)
        # What the 404 tells to look for is what came.
        assert "'sitemap_middleware' logger has a WARNING" in empty.text
        assert "naming it and the setting to change" in empty.text
    finally:
        server.stop()
