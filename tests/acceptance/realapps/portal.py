"""A Starlette site built from mounts: public documentation under ``Mount("/docs")``,
static files (an HTML file among them) under ``/static`` and ``/downloads``, a shop
sub-app under ``/shop`` whose items an editor can make members-only, and an account
page for a visitor signed in with Starlette's cookie session. Installed as the
README's Starlette quick start says, in the app's ``middleware`` list."""

from __future__ import annotations

import html
import sqlite3
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sitemap_middleware.starlette import middleware as sitemap_middleware

from .install import DOWNLOADS, LOGO, STATIC

PASSWORDS = {"ada": "lovelace"}
DOCS = {"install": "Installing", "tutorial": "Tutorial", "faq": "Questions"}
ITEMS = [(1, "Punched cards", 0), (2, "Brass gears", 0), (3, "Difference engine", 0)]


def layout(request: Request, title: str, body: str, main: bool = True) -> HTMLResponse:
    """The site's one template; pages of the shop leave out ``<main>``."""
    user = request.session.get("user")
    who = (
        f'<a href="/account">{html.escape(user)}</a> <a href="/logout">Sign out</a>'
        if user
        else '<a href="/login">Sign in</a>'
    )
    content = f"<main>{body}</main>" if main else f'<div class="page">{body}</div>'
    return HTMLResponse(
        f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>
<body><nav><a href="/"><img src="{LOGO}" alt="Portal"></a> {who}</nav>
{content}
</body></html>"""
    )


def to_login(request: Request) -> RedirectResponse:
    return RedirectResponse(f"/login?next={quote(request.url.path)}", 302)


async def home(request: Request) -> Response:
    links = " ".join(
        f'<a href="/docs/{page}">{title}</a>' for page, title in DOCS.items()
    )
    return layout(request, "Portal", f"<h1>Portal</h1><p>{links}</p>", main=False)


async def pricing(request: Request) -> Response:
    return layout(request, "Pricing", "<h1>Pricing</h1><p>Free for everyone.</p>")


async def docs_index(request: Request) -> Response:
    return layout(request, "Documentation", "<h1>Documentation</h1>")


async def docs_page(request: Request) -> Response:
    title = DOCS.get(request.path_params["page"])
    if title is None:
        return HTMLResponse("<h1>Not found</h1>", 404)
    return layout(request, title, f"<h1>{title}</h1><p>Read on.</p>")


async def login(request: Request) -> Response:
    if request.method == "POST":
        form = await request.form()
        name = str(form.get("username", ""))
        if PASSWORDS.get(name) == form.get("password"):
            request.session["user"] = name
            return RedirectResponse(request.query_params.get("next", "/account"), 303)
    return layout(
        request,
        "Sign in",
        '<form method="post"><input name="username"><input name="password"'
        ' type="password"><button>Sign in</button></form>',
    )


async def logout(request: Request) -> Response:
    request.session.clear()
    return RedirectResponse("/", 303)


async def account(request: Request) -> Response:
    user = request.session.get("user")
    if user is None:
        return to_login(request)
    return layout(request, "Your account", f"<h1>{html.escape(user)}</h1>")


def shop_app(database: str) -> Starlette:
    """The sub-app mounted at ``/shop``: its routes know nothing of the prefix."""

    def item_row(id: int) -> Any:
        with sqlite3.connect(database, timeout=10) as connection:
            return connection.execute(
                "SELECT title, members_only FROM item WHERE id = ?", (id,)
            ).fetchone()

    async def shop(request: Request) -> Response:
        links = " ".join(f'<a href="/shop/items/{id}">{t}</a>' for id, t, _ in ITEMS)
        return layout(request, "Shop", f"<h1>Shop</h1><p>{links}</p>", main=False)

    async def item(request: Request) -> Response:
        row = item_row(request.path_params["id"])
        if row is None:
            return HTMLResponse("<h1>Not found</h1>", 404)
        if row[1] and "user" not in request.session:
            return to_login(request)
        return layout(request, row[0], f"<h1>{html.escape(row[0])}</h1>", main=False)

    async def visibility(request: Request) -> Response:
        if "user" not in request.session:
            return to_login(request)
        form = await request.form()
        with sqlite3.connect(database, timeout=10) as connection:
            connection.execute(
                "UPDATE item SET members_only = ? WHERE id = ?",
                (int(str(form["members_only"])), request.path_params["id"]),
            )
        return RedirectResponse(f"/shop/items/{request.path_params['id']}", 303)

    async def orders(request: Request) -> Response:
        user = request.session.get("user")
        if user is None:
            return to_login(request)
        return layout(request, "Your orders", f"<h1>Orders of {html.escape(user)}</h1>")

    return Starlette(
        routes=[
            Route("/", shop),
            Route("/items/{id:int}", item),
            Route("/items/{id:int}/visibility", visibility, methods=["POST"]),
            Route("/orders", orders),
        ]
    )


def create_app(settings: Mapping[str, Any]) -> Starlette:
    """``settings``: ``DATABASE`` and ``SITEMAP`` (the middleware's dict)."""
    database = settings["DATABASE"]
    with sqlite3.connect(database, timeout=10) as connection:
        connection.execute(
            "CREATE TABLE IF NOT EXISTS item"
            " (id INTEGER PRIMARY KEY, title TEXT, members_only INTEGER)"
        )
        connection.executemany("INSERT OR IGNORE INTO item VALUES (?, ?, ?)", ITEMS)
    return Starlette(
        routes=[
            Route("/", home),
            Route("/pricing", pricing),
            Mount(
                "/docs",
                routes=[Route("/", docs_index), Route("/{page}", docs_page)],
            ),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
            Mount("/downloads", StaticFiles(directory=DOWNLOADS), name="downloads"),
            Mount("/shop", app=shop_app(database)),
            Route("/login", login, methods=["GET", "POST"]),
            Route("/logout", logout),
            Route("/account", account),
        ],
        middleware=[
            # The README's Starlette quick start: the config checked at once.
            sitemap_middleware(dict(settings["SITEMAP"])),
            Middleware(SessionMiddleware, secret_key="dev-secret"),
        ],
    )
