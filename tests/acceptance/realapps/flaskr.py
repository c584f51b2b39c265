"""Flask's tutorial app, flaskr, grown a little: an app factory, an ``auth`` blueprint
under ``/auth`` with a form login kept in the session, a blog whose drafts only their
author sees, and a ``before_request`` that reads the session on every request, so
Flask sends ``Vary: Cookie`` on every response. Installed with the Flask extension
(``create_app``) or the plain WSGI wrapper (``create_wrapped_app``)."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any

from flask import (
    Blueprint,
    Flask,
    abort,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from werkzeug.security import check_password_hash, generate_password_hash

from sitemap_middleware import SitemapMiddleware
from sitemap_middleware.flask import Sitemap

from .flask_common import flask_app, seed

SCHEMA = """
CREATE TABLE IF NOT EXISTS user (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    username TEXT UNIQUE NOT NULL,
    password TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS post (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    author_id INTEGER NOT NULL REFERENCES user (id),
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    published INTEGER NOT NULL DEFAULT 1
);
"""
# A cheap hash: the seed runs in every worker at start-up.
HASH = "pbkdf2:sha256:1000"
USERS = {1: ("ada", "lovelace"), 2: ("grace", "hopper")}
POSTS = [
    (1, 1, "Hello, world", "The first post.", 1),
    (2, 1, "Notes on the engine", "Numbers and more.", 1),
    (3, 2, "Compilers", "A story of bugs.", 1),
    (4, 1, "Unfinished thoughts", "A draft of Ada's.", 0),
]

TEMPLATES = {
    # flaskr's base template: no <main>, the logo in the <nav>.
    "base.html": """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{% block title %}{% endblock %} - Flaskr</title>
<link rel="stylesheet" href="{{ url_for('static', filename='style.css') }}"></head>
<body>
<nav>
  <a href="{{ url_for('blog.index') }}"><img src="{{ url_for('static',
     filename='logo.png') }}" alt="Flaskr"></a>
  <ul>
  {% if g.user %}
    <li><span>{{ g.user['username'] }}</span>
    <li><a href="{{ url_for('blog.create') }}">New</a>
    <li><a href="{{ url_for('auth.logout') }}">Log Out</a>
  {% else %}
    <li><a href="{{ url_for('auth.register') }}">Register</a>
    <li><a href="{{ url_for('auth.login') }}">Log In</a>
  {% endif %}
  </ul>
</nav>
<section class="content">
  <header>{% block header %}{% endblock %}</header>
  {% for message in get_flashed_messages() %}<div class="flash">{{ message }}</div>
  {% endfor %}
  {% block content %}{% endblock %}
</section>
</body>
</html>""",
    "auth/form.html": """{% extends 'base.html' %}
{% block header %}<h1>{% block title %}{{ heading }}{% endblock %}</h1>{% endblock %}
{% block content %}
<form method="post">
  <label for="username">Username</label><input name="username" id="username">
  <label for="password">Password</label>
  <input type="password" name="password" id="password">
  <input type="submit" value="{{ heading }}">
</form>
{% endblock %}""",
    "blog/index.html": """{% extends 'base.html' %}
{% block header %}<h1>{% block title %}Posts{% endblock %}</h1>{% endblock %}
{% block content %}
{% for post in posts %}
<article class="post">
  <header><h1><a href="{{ url_for('blog.post', id=post['id']) }}">
    {{ post['title'] }}</a>
  {% if not post['published'] %}(draft){% endif %}</h1>
  <div class="about">by {{ post['username'] }}</div></header>
  <p class="body">{{ post['body'] }}</p>
</article>
{% endfor %}
{% endblock %}""",
    "blog/post.html": """{% extends 'base.html' %}
{% block header %}<h1>{% block title %}{{ post['title'] }}{% endblock %}</h1>
{% endblock %}
{% block content %}
<article class="post">
  <img src="{{ url_for('static', filename='cover.png') }}" alt="">
  <p class="body">{{ post['body'] }}</p>
  {% if g.user and g.user['id'] == post['author_id'] %}
  <a href="{{ url_for('blog.update', id=post['id']) }}">Edit</a>{% endif %}
</article>
{% endblock %}""",
    "blog/form.html": """{% extends 'base.html' %}
{% block header %}<h1>{% block title %}{{ heading }}{% endblock %}</h1>{% endblock %}
{% block content %}
<form method="post">
  <input name="title" value="{{ post['title'] if post else '' }}">
  <textarea name="body">{{ post['body'] if post else '' }}</textarea>
  <label><input type="checkbox" name="published"
    {% if post and post['published'] %}checked{% endif %}> Published</label>
  <input type="submit" value="Save">
</form>
{% endblock %}""",
    # A page of its own layout, with a <main>.
    "about.html": """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>About - Flaskr</title></head>
<body>
<nav><a href="/"><img src="{{ url_for('static', filename='logo.png') }}" alt="Flaskr">
</a></nav>
<main><h1>About</h1><p>A blog of the Flask tutorial.</p></main>
</body></html>""",
}


def get_db() -> sqlite3.Connection:
    if "db" not in g:
        g.db = sqlite3.connect(current_app.config["DATABASE"], timeout=10)
        g.db.row_factory = sqlite3.Row
    db: sqlite3.Connection = g.db
    return db


def close_db(error: BaseException | None = None) -> None:
    db = g.pop("db", None)
    if db is not None:
        db.close()


def init_db(path: str) -> None:
    hashed = [
        (id, name, generate_password_hash(password, HASH))
        for id, (name, password) in USERS.items()
    ]
    seed(path, SCHEMA, user=hashed, post=POSTS)


auth = Blueprint("auth", __name__, url_prefix="/auth")


@auth.before_app_request
def load_logged_in_user() -> None:
    user_id = session.get("user_id")
    g.user = (
        None
        if user_id is None
        else get_db().execute("SELECT * FROM user WHERE id = ?", (user_id,)).fetchone()
    )


def login_required(view: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(view)
    def wrapped_view(**kwargs: Any) -> Any:
        if g.user is None:
            return redirect(url_for("auth.login", next=request.path))
        return view(**kwargs)

    return wrapped_view


@auth.route("/register", methods=("GET", "POST"))
def register() -> Any:
    if request.method == "POST":
        db = get_db()
        try:
            db.execute(
                "INSERT INTO user (username, password) VALUES (?, ?)",
                (
                    request.form["username"],
                    generate_password_hash(request.form["password"], HASH),
                ),
            )
            db.commit()
        except db.IntegrityError:
            flash("User is already registered.")
        else:
            return redirect(url_for("auth.login"))
    return render_template("auth/form.html", heading="Register")


@auth.route("/login", methods=("GET", "POST"))
def login() -> Any:
    if request.method == "POST":
        user = (
            get_db()
            .execute(
                "SELECT * FROM user WHERE username = ?", (request.form["username"],)
            )
            .fetchone()
        )
        if user is None or not check_password_hash(
            user["password"], request.form["password"]
        ):
            flash("Incorrect username or password.")
        else:
            session.clear()
            session["user_id"] = user["id"]
            return redirect(request.args.get("next") or url_for("blog.index"))
    return render_template("auth/form.html", heading="Log In")


@auth.route("/logout")
def logout() -> Any:
    session.clear()
    return redirect(url_for("blog.index"))


blog = Blueprint("blog", __name__)


def get_post(id: int, check_author: bool = False) -> sqlite3.Row:
    post = (
        get_db()
        .execute(
            "SELECT p.*, u.username FROM post p JOIN user u ON p.author_id = u.id"
            " WHERE p.id = ?",
            (id,),
        )
        .fetchone()
    )
    is_author = (
        g.user is not None and post is not None and post["author_id"] == g.user["id"]
    )
    if post is None or (not post["published"] and not is_author):
        abort(404)
    if check_author and not is_author:
        abort(403)
    row: sqlite3.Row = post
    return row


@blog.route("/")
def index() -> Any:
    user_id = g.user["id"] if g.user else None
    posts = (
        get_db()
        .execute(
            "SELECT p.*, u.username FROM post p JOIN user u ON p.author_id = u.id"
            " WHERE p.published OR p.author_id = ? ORDER BY p.id DESC",
            (user_id,),
        )
        .fetchall()
    )
    return render_template("blog/index.html", posts=posts)


@blog.route("/<int:id>")
def post(id: int) -> Any:
    return render_template("blog/post.html", post=get_post(id))


@blog.route("/about")
def about() -> Any:
    return render_template("about.html")


@blog.route("/create", methods=("GET", "POST"))
@login_required
def create() -> Any:
    if request.method == "POST":
        db = get_db()
        cursor = db.execute(
            "INSERT INTO post (title, body, author_id, published) VALUES (?, ?, ?, ?)",
            (
                request.form["title"],
                request.form["body"],
                g.user["id"],
                int("published" in request.form),
            ),
        )
        db.commit()
        return redirect(url_for("blog.post", id=cursor.lastrowid))
    return render_template("blog/form.html", heading="New Post", post=None)


@blog.route("/<int:id>/update", methods=("GET", "POST"))
@login_required
def update(id: int) -> Any:
    post = get_post(id, check_author=True)
    if request.method == "POST":
        db = get_db()
        db.execute(
            "UPDATE post SET title = ?, body = ?, published = ? WHERE id = ?",
            (
                request.form["title"],
                request.form["body"],
                int("published" in request.form),
                id,
            ),
        )
        db.commit()
        return redirect(url_for("blog.index"))
    return render_template("blog/form.html", heading=f"Edit {post['title']}", post=post)


def _build(test_config: Mapping[str, Any]) -> Flask:
    app = flask_app(__name__, test_config, TEMPLATES)
    init_db(app.config["DATABASE"])
    app.teardown_appcontext(close_db)
    app.register_blueprint(auth)
    app.register_blueprint(blog)
    return app


def create_app(test_config: Mapping[str, Any]) -> Flask:
    """The Flask extension's quick start: the dict in ``app.config["SITEMAP"]``."""
    app = _build(test_config)
    Sitemap(app)
    return app


def create_wrapped_app(test_config: Mapping[str, Any]) -> Flask:
    """The README's first Flask snippet: the plain wrapper around ``app.wsgi_app``."""
    app = _build(test_config)
    app.wsgi_app = SitemapMiddleware(app.wsgi_app, app.config["SITEMAP"])  # type: ignore[method-assign]
    return app
