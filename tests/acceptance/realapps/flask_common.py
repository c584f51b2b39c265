"""What the Flask apps share: the start of their factory (the test's config over a
dev secret key, templates from a dict, the assets folder, the tables seeded), the
database a view opens, and a plain page of a title, a text and links."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from flask import Flask, current_app, render_template
from jinja2 import DictLoader

from .install import STATIC

# The plain page's template, under "page.html" beside an app's own "base.html".
PAGE = """{% extends 'base.html' %}{% block title %}{{ title }}{% endblock %}
{% block main %}<h1>{{ title }}</h1><p>{{ text }}</p>
{% for href, label in links %}<a href="{{ href }}">{{ label }}</a> {% endfor %}
{% endblock %}"""


def flask_app(
    name: str, test_config: Mapping[str, Any], templates: Mapping[str, str]
) -> Flask:
    """The app of module ``name``, as flaskr's factory starts one."""
    app = Flask(name, static_folder=str(STATIC))
    app.config.from_mapping(SECRET_KEY="dev")
    app.config.update(test_config)
    app.jinja_loader = DictLoader(dict(templates))
    return app


def seed(database: str, schema: str, **rows: list[tuple[Any, ...]]) -> None:
    """Make the tables of ``schema`` and put in each table's rows; what is there
    already stays (every worker seeds as it starts)."""
    with sqlite3.connect(database, timeout=10) as connection:
        connection.executescript(schema)
        for table, values in rows.items():
            marks = ", ".join("?" * len(values[0]))
            connection.executemany(
                f"INSERT OR IGNORE INTO {table} VALUES ({marks})", values
            )


def db() -> sqlite3.Connection:
    """A connection to the app's database, its rows read by column name."""
    connection = sqlite3.connect(current_app.config["DATABASE"], timeout=10)
    connection.row_factory = sqlite3.Row
    return connection


def page(title: str, text: str, links: list[tuple[str, str]] | None = None) -> str:
    return render_template("page.html", title=title, text=text, links=links or [])
