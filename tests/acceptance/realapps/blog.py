"""A FastAPI blog as FastAPI's security tutorial grows into one: an OAuth2 password
login whose bearer token is kept in an HttpOnly ``access_token`` cookie, posts that are
public, members-only (anonymous visitors are sent to ``/login``) or drafts only their
author sees (anonymous visitors get 404 at the same URL), a create-post form, the
interactive docs on, and Jinja2 templates without ``<main>``."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, FastAPI, Form, HTTPException, Request, status
from fastapi.responses import RedirectResponse, Response
from fastapi.security import OAuth2PasswordRequestForm
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from itsdangerous import BadSignature, URLSafeSerializer
from jinja2 import DictLoader, Environment, select_autoescape

from .install import STATIC, install_asgi

PASSWORDS = {"ada": "lovelace", "grace": "hopper"}
SCHEMA = """
CREATE TABLE IF NOT EXISTS post (
    slug TEXT PRIMARY KEY, author TEXT NOT NULL, title TEXT NOT NULL,
    visibility TEXT NOT NULL CHECK (visibility IN ('public', 'members', 'draft'))
);
"""
POSTS = [
    ("hello-fastapi", "ada", "Hello, FastAPI", "public"),
    ("async-all-the-way", "grace", "Async all the way", "public"),
    ("dependency-injection", "ada", "Dependency injection", "public"),
    ("for-subscribers", "grace", "For subscribers", "members"),
    ("secret-plans", "ada", "Secret plans", "draft"),
]

SIGNER = URLSafeSerializer("dev-secret", salt="access-token")


def current_user(request: Request) -> str | None:
    """The bearer token of the ``access_token`` cookie, as in the tutorials that
    keep FastAPI's OAuth2 token in an HttpOnly cookie."""
    scheme, _, token = request.cookies.get("access_token", "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        return None
    try:
        name: str = SIGNER.loads(token)
    except BadSignature:
        return None
    return name if name in PASSWORDS else None


User = Annotated[str | None, Depends(current_user)]


TEMPLATES = {
    # No <main>: the logo and the nav sit in the same <body> as the content.
    "base.html": """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{% block title %}{% endblock %} · FastBlog</title>
</head>
<body>
<div class="navbar"><a href="/"><img src="/static/logo.png" alt="FastBlog"></a>
{% if user %}<a href="/posts/new">Write</a> <a href="/logout">Log out {{ user }}</a>
{% else %}<a href="/login">Log in</a>{% endif %}</div>
<div class="container">{% block content %}{% endblock %}</div>
<footer><a href="/docs">API</a></footer>
</body>
</html>""",
    "index.html": """{% extends "base.html" %}{% block title %}Home{% endblock %}
{% block content %}<h1>Latest posts</h1><ul>
{% for post in posts %}<li><a href="/posts/{{ post['slug'] }}">{{ post['title'] }}</a>
{% endfor %}</ul>{% endblock %}""",
    "post.html": """{% extends "base.html" %}
{% block title %}{{ post['title'] }}{% endblock %}
{% block content %}<h1>{{ post['title'] }}</h1><p>by {{ post['author'] }}</p>
{% if post['visibility'] == 'draft' %}<p class="badge">Draft</p>{% endif %}
{% endblock %}""",
    "page.html": """{% extends "base.html" %}{% block title %}{{ title }}{% endblock %}
{% block content %}<h1>{{ title }}</h1><p>{{ text }}</p>{% endblock %}""",
    "form.html": """{% extends "base.html" %}{% block title %}{{ title }}{% endblock %}
{% block content %}<form method="post" action="{{ action }}">
{% for field in fields %}<input name="{{ field }}">{% endfor %}
<button>{{ title }}</button></form>{% endblock %}""",
}


def create_app(settings: Mapping[str, Any]) -> FastAPI:
    """``settings``: ``DATABASE``, ``SITEMAP`` (the middleware's dict) and
    ``DOCS`` (keyword arguments of ``FastAPI``, such as ``docs_url``)."""
    database = settings["DATABASE"]
    templates = Jinja2Templates(
        env=Environment(loader=DictLoader(TEMPLATES), autoescape=select_autoescape())
    )
    with sqlite3.connect(database, timeout=10) as connection:
        connection.executescript(SCHEMA)
        connection.executemany("INSERT OR IGNORE INTO post VALUES (?, ?, ?, ?)", POSTS)

    def db() -> sqlite3.Connection:
        connection = sqlite3.connect(database, timeout=10)
        connection.row_factory = sqlite3.Row
        return connection

    def to_login(request: Request) -> RedirectResponse:
        return RedirectResponse(
            f"/login?next={quote(request.url.path)}", status.HTTP_302_FOUND
        )

    def render(request: Request, name: str, user: str | None, **context: Any) -> Any:
        return templates.TemplateResponse(request, name, {"user": user, **context})

    app = FastAPI(title="FastBlog", **settings.get("DOCS", {}))
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/")
    def index(request: Request, user: User) -> Any:
        with db() as connection:
            posts = connection.execute(
                "SELECT * FROM post WHERE visibility != 'draft' ORDER BY slug"
            ).fetchall()
        return render(request, "index.html", user, posts=posts)

    @app.get("/about")
    def about(request: Request, user: User) -> Any:
        return render(request, "page.html", user, title="About", text="A blog.")

    @app.get("/login")
    def login_form(request: Request, user: User) -> Any:
        fields = ["username", "password"]
        return render(
            request, "form.html", user, title="Log in", action="/login", fields=fields
        )

    @app.post("/login")
    def login(form: Annotated[OAuth2PasswordRequestForm, Depends()]) -> Response:
        if PASSWORDS.get(form.username) != form.password:
            raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Incorrect password")
        response = RedirectResponse("/", status.HTTP_303_SEE_OTHER)
        response.set_cookie(
            "access_token",
            f"Bearer {SIGNER.dumps(form.username)}",
            httponly=True,
            samesite="lax",
        )
        return response

    @app.get("/logout")
    def logout() -> Response:
        response = RedirectResponse("/", status.HTTP_303_SEE_OTHER)
        response.delete_cookie("access_token")
        return response

    @app.get("/posts/new")
    def new_post(request: Request, user: User) -> Any:
        if user is None:
            return to_login(request)
        fields = ["slug", "title"]
        return render(
            request, "form.html", user, title="New post", action="/posts", fields=fields
        )

    @app.post("/posts")
    def create_post(
        request: Request,
        user: User,
        slug: Annotated[str, Form()],
        title: Annotated[str, Form()],
    ) -> Response:
        if user is None:
            return to_login(request)
        with db() as connection:
            connection.execute(
                "INSERT INTO post VALUES (?, ?, ?, 'draft')", (slug, user, title)
            )
        return RedirectResponse(f"/posts/{slug}", status.HTTP_303_SEE_OTHER)

    def find(slug: str, user: str | None) -> sqlite3.Row:
        with db() as connection:
            post = connection.execute(
                "SELECT * FROM post WHERE slug = ?", (slug,)
            ).fetchone()
        if post is None or (post["visibility"] == "draft" and post["author"] != user):
            raise HTTPException(status.HTTP_404_NOT_FOUND, "No such post")
        row: sqlite3.Row = post
        return row

    @app.get("/posts/{slug}")
    def show_post(request: Request, slug: str, user: User) -> Any:
        post = find(slug, user)
        if post["visibility"] == "members" and user is None:
            return to_login(request)
        return render(request, "post.html", user, post=post)

    @app.post("/posts/{slug}/visibility")
    def set_visibility(
        request: Request, slug: str, user: User, visibility: Annotated[str, Form()]
    ) -> Response:
        post = find(slug, user)
        if user != post["author"]:
            raise HTTPException(status.HTTP_403_FORBIDDEN, "Not your post")
        with db() as connection:
            connection.execute(
                "UPDATE post SET visibility = ? WHERE slug = ?", (visibility, slug)
            )
        return RedirectResponse(f"/posts/{slug}", status.HTTP_303_SEE_OTHER)

    install_asgi(app, settings["SITEMAP"])
    return app
