"""Acceptance: apps shaped like real open-source applications
(tests/acceptance/realapps), set up as the README's quick starts say and served by
gunicorn or uvicorn, are browsed by a crawler, by a visitor with analytics cookies
and by a signed-in user; the sitemap the server then serves lists exactly the public
pages.

Each app's records are flushed by an orderly shutdown (SIGTERM: atexit in gunicorn's
workers, lifespan shutdown in uvicorn) and the sitemap read from the same app started
again on the same store: nothing is left queued, whichever worker took a request, so
the listing is final when it is read, with no polling and no timing to guess.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import httpx
import pytest
from realapps.install import LOGO
from realapps.serve import Listed, Server, listed

pytestmark = [pytest.mark.servers, pytest.mark.slow]

# Consent and analytics cookies: a visitor who carries only these is anonymous.
ANALYTICS = {"_ga": "GA1.1.1234567890.1700000000", "cookieconsent_status": "dismiss"}


def expect(client: httpx.Client, method: str, path: str, status: int, **kw: Any) -> Any:
    """One request, its status checked, so that each app behaves as it claims."""
    reply = client.request(method, path, **kw)
    assert reply.status_code == status, f"{method} {path}: {reply.status_code}"
    return reply


def to_login(login: str) -> Callable[[httpx.Client, str], None]:
    """Checks that an anonymous visitor is sent to ``login`` (302 with ?next=)."""

    def check(client: httpx.Client, path: str) -> None:
        location = expect(client, "GET", path, 302).headers["location"]
        assert location.split("?")[0].endswith(login), f"{path} -> {location}"

    return check


def hiding(
    sign_in: Callable[[httpx.Client], None],
    path: str,
    action: str,
    status: int,
    form: dict[str, str],
) -> Callable[[httpx.Client], str]:
    """The author, signed in, posts ``form`` to ``path``/``action`` (answered
    ``status``), which makes the public page at ``path`` private."""

    def hide(client: httpx.Client) -> str:
        sign_in(client)
        expect(client, "POST", f"{path}/{action}", status, data=form)
        return path

    return hide


@dataclass(frozen=True)
class App:
    """An app, what each kind of visitor is shown, and what must be listed."""

    kind: str  # gunicorn or uvicorn
    factory: str
    crawled: tuple[str, ...]  # public pages a crawler (no cookie) gets, 200
    visited: tuple[str, ...]  # public pages only a visitor with ANALYTICS gets
    shown: tuple[str, ...]  # 200 to anyone yet never listed: forms, docs, files
    absent: tuple[str, ...]  # 404 to anonymous visitors (drafts)
    login: str  # where anonymous visitors of private pages are sent
    guarded: tuple[str, ...]  # private pages: a 302 to ``login`` when anonymous
    member: Callable[[Server], None]  # signs in, browses everything, signs out
    hide: Callable[[httpx.Client], str]  # signed in: makes a public page private
    hidden_status: int  # what anonymous visitors then get at that page
    settings: dict[str, Any] = field(default_factory=dict)
    sitemap: dict[str, Any] = field(default_factory=dict)
    changefreq: dict[str, str] = field(default_factory=dict)
    images: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def public(self) -> set[str]:
        return {*self.crawled, *self.visited}


# flaskr: the session read in before_request, a form login under /auth.


def flaskr_sign_in(client: httpx.Client) -> None:
    form = {"username": "ada", "password": "lovelace"}
    reply = expect(client, "POST", "/auth/login", 302, data=form)
    assert reply.headers["location"] == "/"
    assert "session" in client.cookies


def flaskr_member(server: Server) -> None:
    with server.client() as client:
        flaskr_sign_in(client)
        for path in ("/", "/1", "/4", "/create", "/1/update", "/about"):
            expect(client, "GET", path, 200)
        draft = {"title": "Half an idea", "body": "..."}
        created = expect(client, "POST", "/create", 302, data=draft)
        expect(client, "GET", created.headers["location"], 200)
        expect(client, "GET", "/auth/logout", 302)
        assert "session" not in client.cookies


FLASKR = {
    "crawled": ("/", "/1", "/2"),
    "visited": ("/3", "/about"),
    "shown": ("/auth/login", "/auth/register", "/static/offline.html"),
    "absent": ("/4",),
    "login": "/auth/login",
    "guarded": ("/create", "/1/update"),
    "member": flaskr_member,
    # Saved without "published": a draft again.
    "hide": hiding(
        flaskr_sign_in, "/2", "update", 302, {"title": "Notes", "body": "..."}
    ),
    "hidden_status": 404,
    "sitemap": {"routes": {"/<int:id>": {"changefreq": "weekly"}}},
    "changefreq": {"/1": "weekly", "/2": "weekly", "/3": "weekly"},
    # The cover sits in the post's <article>; the logo in the <nav>.
    "images": {"/1": ("/static/cover.png",), "/": ()},
}


# notebook: Flask-Login with "remember me".


def notebook_sign_in(client: httpx.Client) -> None:
    form = {"username": "ada", "password": "lovelace", "remember": "on"}
    expect(client, "POST", "/users/sign_in", 302, data=form)
    assert "remember_token" in client.cookies


NOTEBOOK_PRIVATE = ("/dashboard", "/notes/1", "/notes/2", "/settings")


def notebook_member(server: Server) -> None:
    with server.client() as client:
        notebook_sign_in(client)
        for path in (*NOTEBOOK_PRIVATE, "/guides/team-billing", "/"):
            expect(client, "GET", path, 200)
        remembered = client.cookies["remember_token"]
        expect(client, "GET", "/users/sign_out", 302)
    # A browser that kept only the remember cookie (the session one expired with
    # the browser): Flask-Login signs it in again on every request.
    with server.client() as client:
        for path in (*NOTEBOOK_PRIVATE, "/guides/team-billing", "/", "/features"):
            client.cookies.clear()
            client.cookies.set("remember_token", remembered)
            reply = expect(client, "GET", path, 200)
            assert "ada" in reply.text, path


NOTEBOOK = {
    "crawled": ("/", "/guides/getting-started"),
    "visited": ("/features", "/guides/keyboard-shortcuts"),
    "shown": ("/users/sign_in", "/users/sign_up", "/static/offline.html"),
    "absent": (),
    "login": "/users/sign_in",
    "guarded": (*NOTEBOOK_PRIVATE, "/guides/team-billing"),
    "member": notebook_member,
    "hide": hiding(
        notebook_sign_in,
        "/guides/keyboard-shortcuts",
        "visibility",
        302,
        {"members_only": "1"},
    ),
    "hidden_status": 302,
}


# blog: FastAPI, the OAuth2 token in an access_token cookie, the docs on.


def blog_sign_in(client: httpx.Client) -> None:
    form = {"username": "ada", "password": "lovelace"}
    expect(client, "POST", "/login", 303, data=form)
    assert "Bearer" in client.cookies["access_token"]


def blog_member(server: Server) -> None:
    with server.client() as client:
        blog_sign_in(client)
        for path in (
            "/",
            "/posts/new",
            "/posts/secret-plans",
            "/posts/for-subscribers",
        ):
            expect(client, "GET", path, 200)
        draft = {"slug": "half-an-idea", "title": "Half an idea"}
        expect(client, "POST", "/posts", 303, data=draft)
        expect(client, "GET", "/posts/half-an-idea", 200)
        expect(client, "GET", "/logout", 303)
        assert "access_token" not in client.cookies


def blog(docs: tuple[str, ...], settings: dict[str, Any]) -> dict[str, Any]:
    return {
        "crawled": ("/", "/posts/hello-fastapi", "/posts/dependency-injection"),
        "visited": ("/about", "/posts/async-all-the-way"),
        "shown": ("/login", *docs, "/docs/oauth2-redirect", "/static/offline.html"),
        "absent": ("/posts/secret-plans", "/posts/half-an-idea"),
        "login": "/login",
        "guarded": ("/posts/new", "/posts/for-subscribers"),
        "member": blog_member,
        "hide": hiding(
            blog_sign_in,
            "/posts/dependency-injection",
            "visibility",
            303,
            {"visibility": "members"},
        ),
        "hidden_status": 302,
        "settings": {"DOCS": settings},
    }


# portal: Starlette mounts and a cookie session.


def portal_sign_in(client: httpx.Client) -> None:
    form = {"username": "ada", "password": "lovelace"}
    expect(client, "POST", "/login", 303, data=form)
    assert "session" in client.cookies


def portal_member(server: Server) -> None:
    with server.client() as client:
        portal_sign_in(client)
        for path in ("/account", "/shop/orders", "/", "/shop/items/1", "/docs/faq"):
            expect(client, "GET", path, 200)
        expect(client, "GET", "/logout", 303)


PORTAL = {
    "crawled": ("/", "/docs/", "/docs/install", "/shop/", "/shop/items/1"),
    "visited": ("/pricing", "/docs/tutorial", "/docs/faq", "/shop/items/2"),
    "shown": ("/login", "/static/offline.html", "/downloads/brochure.html"),
    "absent": ("/shop/items/9",),
    "login": "/login",
    "guarded": ("/account", "/shop/orders"),
    "member": portal_member,
    "hide": hiding(
        portal_sign_in, "/shop/items/2", "visibility", 303, {"members_only": "1"}
    ),
    "hidden_status": 302,
}

APPS = {
    "flaskr-extension": App("gunicorn", "realapps.flaskr:create_app", **FLASKR),
    "flaskr-wrapper": App("gunicorn", "realapps.flaskr:create_wrapped_app", **FLASKR),
    "flask-login": App("gunicorn", "realapps.notebook:create_app", **NOTEBOOK),
    "fastapi": App(
        "uvicorn", "realapps.blog:create_app", **blog(("/docs", "/redoc"), {})
    ),
    "fastapi-custom-docs": App(
        "uvicorn",
        "realapps.blog:create_app",
        **blog(
            ("/api-docs", "/reference"),
            {"docs_url": "/api-docs", "redoc_url": "/reference"},
        ),
    ),
    "starlette-mounts": App("uvicorn", "realapps.portal:create_app", **PORTAL),
}


def browse_anonymously(app: App, server: Server) -> None:
    """A crawler keeps no cookie, and a visitor keeps only the analytics ones,
    whatever the site sets (Flask-Login flashes a message into the session of a
    visitor it sends to its login page)."""
    with server.client() as client:

        def get(path: str, status: int, cookies: dict[str, str] | None = None) -> None:
            client.cookies = httpx.Cookies(cookies)
            if status == 302:
                to_login(app.login)(client, path)
            elif path in app.public:
                # A page any shared cache could serve: no cookie set, not private.
                headers = expect(client, "GET", path, status).headers
                assert "set-cookie" not in headers, path
                assert "private" not in headers.get("cache-control", ""), path
            else:
                expect(client, "GET", path, status)

        for path in app.crawled + app.shown:
            get(path, 200)
        for path in app.absent:
            get(path, 404)
        for path in app.guarded:
            get(path, 302)
        for path in app.visited:
            get(path, 200, ANALYTICS)


@dataclass
class Run:
    app: App
    server: Server
    listing: dict[str, Listed]


@pytest.fixture(scope="module", params=sorted(APPS))
def run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Run]:
    """One server per app: browsed by everyone, restarted, its sitemap read."""
    app = APPS[request.param]
    server = Server(
        app.kind,
        app.factory,
        tmp_path_factory.mktemp(request.param),
        settings=app.settings,
        sitemap=app.sitemap,
    )
    with server.browsed(partial(browse_anonymously, app), app.member) as listing:
        yield Run(app, server, listing)


def diff(listed: set[str], expected: set[str]) -> str:
    return (
        f"listed but not public: {sorted(listed - expected)}; "
        f"public but not listed: {sorted(expected - listed)}"
    )


def test_lists_exactly_the_public_pages(run: Run) -> None:
    """No draft, form, login page, docs page, static file or signed-in page; every
    page a crawler or an analytics-cookie visitor was shown."""
    paths = set(run.listing)
    assert paths == run.app.public, diff(paths, run.app.public)


def test_images_are_page_content_not_the_navbar_logo(run: Run) -> None:
    with_logo = sorted(
        path for path, entry in run.listing.items() if LOGO in entry.images
    )
    assert not with_logo, f"the navbar logo listed as an image of {with_logo}"
    for path, images in run.app.images.items():
        assert path in run.listing, f"{path} not listed"
        assert run.listing[path].images == images, path


def test_route_options_reach_the_sitemap(run: Run) -> None:
    """The ``routes`` option holds whichever way the middleware is installed; no
    changefreq where none is configured."""
    changefreq = {path: e.changefreq for path, e in run.listing.items() if e.changefreq}
    assert changefreq == run.app.changefreq


def test_a_page_turned_private_leaves_the_sitemap(run: Run) -> None:
    """Its author makes it private; one anonymous request to it (404, or a 302 to
    the login page) takes it out. Runs last: it changes the app's data."""
    with run.server.client() as author:
        path = run.app.hide(author)
    with run.server.client() as crawler:
        expect(crawler, "GET", path, run.app.hidden_status)
    assert path in run.listing, f"{path} was never listed (see the listing test)"
    run.server.restart()
    paths = set(listed(run.server))
    expected = run.app.public - {path}
    assert paths == expected, diff(paths, expected)
