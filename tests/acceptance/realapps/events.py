"""A FastAPI events site behind starlette-csrf: every response to a visitor without
the ``csrftoken`` cookie sets one (``Set-Cookie: csrftoken=...``), so every page a
crawler gets sets a cookie. Sign-up forms on the event pages, a contact form, a
session login (Starlette's ``SessionMiddleware``), an account page, the docs on.
Installed with ``add_sitemap`` after the CSRF middleware, so that the sitemap sees
the cookie being set.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.middleware.sessions import SessionMiddleware
from starlette_csrf import CSRFMiddleware

from .install import install_asgi

EVENTS = {
    "pycon": ("PyCon", True),
    "flask-meetup": ("Flask meetup", True),
    "board-meeting": ("Board meeting", False),  # members only
}
PASSWORDS = {"ada": "lovelace"}


def html(title: str, body: str, user: str | None = None) -> HTMLResponse:
    who = f"<span>Signed in as {user}</span>" if user else '<a href="/login">Log in</a>'
    return HTMLResponse(
        f"<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{title} · Events</title></head><body><nav>{who}</nav>"
        f"<main><h1>{title}</h1>{body}</main></body></html>"
    )


FORM = (
    '<form method="post" action="{action}"><input name="email">'
    "<button>Send</button></form>"
)


def create_app(test_config: Mapping[str, Any]) -> FastAPI:
    app = FastAPI()
    database = test_config["DATABASE"]
    with sqlite3.connect(database, timeout=10) as connection:
        connection.execute(
            "CREATE TABLE IF NOT EXISTS signup (event TEXT NOT NULL, email TEXT)"
        )

    def user(request: Request) -> str | None:
        name = request.session.get("user")
        return name if name in PASSWORDS else None

    @app.get("/")
    def home(request: Request) -> Response:
        links = "".join(
            f'<a href="/events/{slug}">{title}</a> '
            for slug, (title, public) in EVENTS.items()
            if public or user(request)
        )
        return html("Events", f"<p>What is on.</p>{links}", user(request))

    @app.get("/events/{slug}")
    def event(request: Request, slug: str) -> Response:
        found = EVENTS.get(slug)
        if found is None:
            raise HTTPException(404)
        title, public = found
        if not public and not user(request):
            return RedirectResponse(f"/login?next=/events/{slug}", 302)
        form = FORM.format(action=f"/events/{slug}/signup")
        return html(title, f"<p>All about {title}.</p>{form}", user(request))

    @app.post("/events/{slug}/signup")
    def signup(slug: str, email: str = Form(...)) -> Response:
        with sqlite3.connect(database, timeout=10) as connection:
            connection.execute("INSERT INTO signup VALUES (?, ?)", (slug, email))
        return RedirectResponse(f"/events/{slug}", 303)

    @app.get("/contact")
    def contact(request: Request) -> Response:
        return html("Contact", FORM.format(action="/contact"), user(request))

    @app.get("/login")
    def login_form() -> Response:
        form = (
            '<form method="post"><input name="username">'
            '<input type="password" name="password"><button>Log in</button></form>'
        )
        return html("Log in", form)

    @app.post("/login")
    def login(
        request: Request, username: str = Form(...), password: str = Form(...)
    ) -> Response:
        if PASSWORDS.get(username) != password:
            return RedirectResponse("/login", 303)
        request.session["user"] = username
        return RedirectResponse("/", 303)

    @app.get("/logout")
    def logout(request: Request) -> Response:
        request.session.clear()
        return RedirectResponse("/", 303)

    @app.get("/account")
    def account(request: Request) -> Response:
        name = user(request)
        if name is None:
            return RedirectResponse("/login?next=/account", 302)
        return html("Account", f"<p>{name}'s sign-ups.</p>", name)

    app.add_middleware(SessionMiddleware, secret_key="dev")
    app.add_middleware(CSRFMiddleware, secret="dev")
    install_asgi(app, test_config["SITEMAP"])
    return app
