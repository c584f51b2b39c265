"""A notes app on Flask-Login: sign-in under ``/users`` with "remember me" (the
``remember_token`` cookie signs a visitor in again without a session), private notes
and a dashboard behind ``@login_required``, public guides that a signed-in editor can
make members-only. Installed with ``Sitemap().init_app(app)``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Flask, abort, redirect, render_template, request, url_for
from flask_login import (
    LoginManager,
    UserMixin,
    current_user,
    login_required,
    login_user,
    logout_user,
)

from sitemap_middleware.flask import Sitemap

from .flask_common import PAGE, db, flask_app, page, seed

SCHEMA = """
CREATE TABLE IF NOT EXISTS guide (
    slug TEXT PRIMARY KEY, title TEXT NOT NULL, members_only INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS note (
    id INTEGER PRIMARY KEY, owner TEXT NOT NULL, text TEXT NOT NULL
);
"""
GUIDES = [
    ("getting-started", "Getting started", 0),
    ("keyboard-shortcuts", "Keyboard shortcuts", 0),
    ("team-billing", "Team billing", 1),
]
NOTES = [(1, "ada", "Buy more punched cards"), (2, "ada", "Call Charles")]
PASSWORDS = {"ada": "lovelace"}

TEMPLATES = {
    "base.html": """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{% block title %}{% endblock %} | Notebook</title>
</head>
<body>
<header class="navbar">
  <a class="brand" href="{{ url_for('site.home') }}"><img src="{{ url_for('static',
    filename='logo.png') }}" alt="Notebook"></a>
  {% if current_user.is_authenticated %}
  <a href="{{ url_for('notes.dashboard') }}">{{ current_user.id }}</a>
  <a href="{{ url_for('users.sign_out') }}">Sign out</a>
  {% else %}<a href="{{ url_for('users.sign_in') }}">Sign in</a>{% endif %}
</header>
<main>{% block main %}{% endblock %}</main>
</body>
</html>""",
    "page.html": PAGE,
    "sign_in.html": """{% extends 'base.html' %}{% block title %}Sign in{% endblock %}
{% block main %}<form method="post">
<input name="username"><input type="password" name="password">
<label><input type="checkbox" name="remember"> Remember me</label>
<button>Sign in</button></form>{% endblock %}""",
}


class User(UserMixin):
    def __init__(self, name: str) -> None:
        self.id = name


login_manager = LoginManager()
login_manager.login_view = "users.sign_in"


@login_manager.user_loader
def load_user(user_id: str) -> User | None:
    return User(user_id) if user_id in PASSWORDS else None


site = Blueprint("site", __name__)


@site.route("/")
def home() -> str:
    with db() as connection:
        guides = connection.execute("SELECT * FROM guide ORDER BY slug").fetchall()
    links = [(url_for("site.guide", slug=g["slug"]), g["title"]) for g in guides]
    if current_user.is_authenticated:
        return page(f"Welcome back, {current_user.id}", "Your notes await.", links)
    return page("Notebook", "Notes for everyone.", links)


@site.route("/features")
def features() -> str:
    return page("Features", "Sync, search, share.")


@site.route("/guides/<slug>")
def guide(slug: str) -> Any:
    with db() as connection:
        row = connection.execute(
            "SELECT * FROM guide WHERE slug = ?", (slug,)
        ).fetchone()
    if row is None:
        abort(404)
    if row["members_only"] and not current_user.is_authenticated:
        return login_manager.unauthorized()
    return page(row["title"], f"How to: {row['title'].lower()}.")


@site.route("/guides/<slug>/visibility", methods=["POST"])
@login_required
def visibility(slug: str) -> Any:
    with db() as connection:
        connection.execute(
            "UPDATE guide SET members_only = ? WHERE slug = ?",
            (int(request.form["members_only"]), slug),
        )
    return redirect(url_for("site.guide", slug=slug))


users = Blueprint("users", __name__, url_prefix="/users")


@users.route("/sign_in", methods=["GET", "POST"])
def sign_in() -> Any:
    if request.method == "POST":
        name = request.form["username"]
        if PASSWORDS.get(name) == request.form["password"]:
            login_user(User(name), remember="remember" in request.form)
            return redirect(request.args.get("next") or url_for("notes.dashboard"))
    return render_template("sign_in.html")


@users.route("/sign_up")
def sign_up() -> str:
    return page("Sign up", "Pick a username.")


@users.route("/sign_out")
def sign_out() -> Any:
    logout_user()
    return redirect(url_for("site.home"))


notes = Blueprint("notes", __name__)


@notes.route("/dashboard")
@login_required
def dashboard() -> str:
    with db() as connection:
        rows = connection.execute(
            "SELECT * FROM note WHERE owner = ?", (current_user.id,)
        ).fetchall()
    links = [(url_for("notes.note", id=row["id"]), row["text"]) for row in rows]
    return page("Dashboard", f"{len(rows)} notes.", links)


@notes.route("/notes/<int:id>")
@login_required
def note(id: int) -> str:
    with db() as connection:
        row = connection.execute(
            "SELECT * FROM note WHERE id = ? AND owner = ?", (id, current_user.id)
        ).fetchone()
    if row is None:
        abort(404)
    return page(f"Note {id}", row["text"])


@notes.route("/settings")
@login_required
def settings() -> str:
    return page("Settings", f"Signed in as {current_user.id}.")


def create_app(test_config: Mapping[str, Any]) -> Flask:
    app = flask_app(__name__, test_config, TEMPLATES)
    seed(app.config["DATABASE"], SCHEMA, guide=GUIDES, note=NOTES)
    login_manager.init_app(app)
    for blueprint in (site, users, notes):
        app.register_blueprint(blueprint)
    sitemap = Sitemap()
    sitemap.init_app(app)
    return app
