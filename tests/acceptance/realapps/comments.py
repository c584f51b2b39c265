"""A Flask blog whose public posts carry a Flask-WTF comment form: the form's CSRF
token lives in the session, so every anonymous visit to a post answers ``200`` with
``Vary: Cookie`` and ``Set-Cookie: session=...`` holding only that token. Around it,
the GETs that set a cookie and are no public page: a form login under ``/auth``, a
magic link that signs in from ``?token=``, an OAuth callback, an "add to cart" link
(a redirect), and an A/B test on the pricing page. Installed with ``Sitemap(app)``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from typing import Any

from flask import Flask, abort, redirect, render_template, request, session, url_for
from flask_wtf import CSRFProtect, FlaskForm
from wtforms import PasswordField, StringField, TextAreaField
from wtforms.validators import DataRequired

from sitemap_middleware.flask import Sitemap

from .flask_common import PAGE, db, flask_app, page, seed

SCHEMA = """
CREATE TABLE IF NOT EXISTS post (
    id INTEGER PRIMARY KEY, title TEXT NOT NULL, published INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS comment (
    id INTEGER PRIMARY KEY, post INTEGER NOT NULL, body TEXT NOT NULL
);
"""
POSTS = [(1, "Hello, world", 1), (2, "Forms and tokens", 1), (3, "Unfinished", 0)]
PASSWORDS = {"ada": "lovelace"}
# The magic link a mail would carry: it signs ada in.
MAGIC = {"c2lnbmVkLWluLWFz": "ada"}

TEMPLATES = {
    "base.html": """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{% block title %}{% endblock %} · Comments</title>
</head>
<body>
<nav><a href="/"><img src="/static/logo.png" alt="Comments"></a>
{% if session.user %}<span>Signed in as {{ session.user }}</span>
<a href="{{ url_for('logout') }}">Sign out</a>
{% else %}<a href="{{ url_for('login') }}">Sign in</a>{% endif %}</nav>
<main>{% block main %}{% endblock %}</main>
</body>
</html>""",
    "page.html": PAGE,
    "post.html": """{% extends 'base.html' %}
{% block title %}{{ post.title }}{% endblock %}
{% block main %}<article><h1>{{ post.title }}</h1><p>Words about
{{ post.title }}.</p></article>
<section><h2>Comments</h2>{% for c in comments %}<p>{{ c.body }}</p>{% endfor %}
<form method="post">{{ form.hidden_tag() }}{{ form.body() }}<button>Send</button>
</form></section>{% endblock %}""",
    "form.html": """{% extends 'base.html' %}{% block title %}{{ title }}{% endblock %}
{% block main %}<h1>{{ title }}</h1><form method="post">{{ form.hidden_tag() }}
{% for field in form if field.name != 'csrf_token' %}{{ field() }}{% endfor %}
<button>Send</button></form>{% endblock %}""",
}


class CommentForm(FlaskForm):
    body = TextAreaField("Comment", validators=[DataRequired()])


class NewsletterForm(FlaskForm):
    email = StringField("Email", validators=[DataRequired()])


class LoginForm(FlaskForm):
    username = StringField("Username", validators=[DataRequired()])
    password = PasswordField("Password", validators=[DataRequired()])


def create_app(test_config: Mapping[str, Any]) -> Flask:
    if "LOGGING" in test_config:  # as a deployment configures its logs
        logging.basicConfig(format=test_config["LOGGING"])
    app = flask_app(__name__, test_config, TEMPLATES)
    seed(app.config["DATABASE"], SCHEMA, post=POSTS)
    CSRFProtect(app)

    @app.route("/")
    def home() -> str:
        with db() as connection:
            rows = connection.execute(
                "SELECT * FROM post WHERE published ORDER BY id"
            ).fetchall()
        links = [(url_for("post", id=row["id"]), row["title"]) for row in rows]
        return page("Comments", "A blog with comments.", links)

    @app.route("/about")
    def about() -> str:
        return page("About", "Who writes here.")

    @app.route("/post/<int:id>", methods=["GET", "POST"])
    def post(id: int) -> Any:
        with db() as connection:
            row = connection.execute(
                "SELECT * FROM post WHERE id = ? AND (published OR ?)",
                (id, bool(session.get("user"))),
            ).fetchone()
            if row is None:
                abort(404)
            form = CommentForm()
            if form.validate_on_submit():
                connection.execute(
                    "INSERT INTO comment (post, body) VALUES (?, ?)",
                    (id, form.body.data),
                )
                return redirect(url_for("post", id=id))
            comments = connection.execute(
                "SELECT * FROM comment WHERE post = ? ORDER BY id", (id,)
            ).fetchall()
        return render_template("post.html", post=row, comments=comments, form=form)

    @app.route("/newsletter", methods=["GET", "POST"])
    def newsletter() -> Any:
        form = NewsletterForm()
        if form.validate_on_submit():
            return redirect(url_for("home"))
        return render_template("form.html", title="Newsletter", form=form)

    @app.route("/pricing")
    def pricing() -> Any:
        # An A/B test: each new visitor is assigned a variant, kept in a cookie.
        variant = request.cookies.get("ab") or random.choice("AB")
        response = app.make_response(page("Pricing", f"Plan {variant}: ten a month."))
        response.set_cookie("ab", variant)
        return response

    @app.route("/cart/add/<int:id>")
    def add_to_cart(id: int) -> Any:
        response = redirect(url_for("home"))
        response.set_cookie("cart", str(id))
        return response

    @app.route("/magic")
    def magic() -> Any:
        # A magic link that signs in and shows the signed-in page at once.
        user = MAGIC.get(request.args.get("token", ""))
        if user is None:
            abort(400)
        session["user"] = user
        return page(f"Welcome back, {user}", "You are signed in.")

    @app.route("/oauth/callback")
    def oauth_callback() -> Any:
        session["user"] = "ada"
        return page("Signed in", "Welcome back, ada.")

    @app.route("/auth/login", methods=["GET", "POST"])
    def login() -> Any:
        form = LoginForm()
        if form.validate_on_submit():
            name = form.username.data or ""
            if PASSWORDS.get(name) == form.password.data:
                session["user"] = name
                return redirect(url_for("home"))
        return render_template("form.html", title="Sign in", form=form)

    @app.route("/auth/logout")
    def logout() -> Any:
        session.pop("user", None)
        return redirect(url_for("home"))

    @app.route("/drafts")
    def drafts() -> Any:
        if not session.get("user"):
            return redirect(url_for("login", next=request.path))
        return page("Drafts", "Unfinished.", [(url_for("post", id=3), "Unfinished")])

    Sitemap(app)
    return app
