"""Every ```python block of README.md and docs/ runs, so that the snippets a user
copies cannot rot (docs/contributing.md says how a block is marked not to run).

Each block runs on its own, in a fresh namespace, in an empty working directory
with an ``instance/`` folder. The names a snippet about a view uses without
defining them are given: ``app`` (a Flask app), ``request``, ``render_template``,
``Post``, ``is_draft`` and ``render_post``. A ``config`` dict a block leaves is
checked as the middleware checks it; a ``create_app`` it defines is called and
its robots.txt asked for; every middleware it builds is closed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(?P<indent> *)(?P<ticks>`{3,})(?P<lang>[\w+-]*)\s*$")
NO_TEST = re.compile(r"^\s*<!--\s*no-test\b.*-->\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, from 1
    lang: str
    code: str
    skipped: bool  # marked <!-- no-test: why --> on the line before

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, outermost only (a fence closes
    on a fence of at least as many backticks, as CommonMark says)."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    at = 0
    while at < len(lines):
        opening = FENCE.match(lines[at])
        if opening is None:
            at += 1
            continue
        indent, ticks = len(opening["indent"]), opening["ticks"]
        body: list[str] = []
        end = at + 1
        while end < len(lines):
            closing = FENCE.match(lines[end])
            if closing and not closing["lang"] and len(closing["ticks"]) >= len(ticks):
                break
            body.append(
                lines[end][indent:] if lines[end][:indent].isspace() else lines[end]
            )
            end += 1
        before = lines[at - 1] if at else ""
        found.append(
            Block(
                page,
                at + 1,
                opening["lang"],
                "\n".join(body) + "\n",
                bool(NO_TEST.match(before)),
            )
        )
        at = end + 1
    return found


ALL = [block for page in PAGES for block in blocks(page)]
PYTHON = [block for block in ALL if block.lang == "python"]


def test_the_pages_have_snippets() -> None:
    """The parser finds the blocks (a broken parser would pass every test)."""
    assert {block.page.name for block in PYTHON} >= {
        "README.md",
        "flask.md",
        "fastapi.md",
        "stores.md",
    }
    assert len(PYTHON) >= 15


def test_python_blocks_say_python() -> None:
    """```py would be a block nobody runs without a word why: one spelling."""
    assert [b.name for b in ALL if b.lang in ("py", "python3", "pycon")] == []


class Post:
    """What the seed snippet's ``params`` generator reads: a model with a query."""

    slug = "hello-world"

    class query:  # spelt as Flask-SQLAlchemy's
        @staticmethod
        def all() -> list[Post]:
            return [Post()]


def _close(value: Any, closed: set[int]) -> None:
    """Close the middleware ``value`` is or holds, once."""
    from flask import Flask

    from sitemap_middleware import ASGISitemapMiddleware, SitemapMiddleware

    middleware: Any = None
    if isinstance(value, (SitemapMiddleware, ASGISitemapMiddleware)):
        middleware = value
    elif isinstance(value, Flask):
        middleware = value.extensions.get("sitemap")
        if middleware is None and isinstance(value.wsgi_app, SitemapMiddleware):
            middleware = value.wsgi_app
    if middleware is not None and id(middleware) not in closed:
        closed.add(id(middleware))
        middleware.close()


def _robots(app: Any) -> str:
    """The app's /robots.txt, through its middleware."""
    from flask import Flask

    if isinstance(app, Flask):
        with app.test_client() as client:
            return client.get("/robots.txt").get_data(as_text=True)
    from starlette.testclient import TestClient

    with TestClient(app) as client:
        return client.get("/robots.txt").text


@pytest.mark.parametrize(
    "block", [pytest.param(b, id=b.name) for b in PYTHON if not b.skipped]
)
def test_snippet_runs(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flask
    from starlette.applications import Starlette

    from sitemap_middleware import Config

    monkeypatch.chdir(tmp_path)
    (tmp_path / "instance").mkdir()
    given = flask.Flask("docs_snippet", instance_path=str(tmp_path / "instance"))
    names: dict[str, Any] = {
        "__name__": "docs_snippet",
        "app": given,
        "request": flask.request,
        "render_template": flask.render_template,
        "Post": Post,
        "is_draft": lambda slug: False,
        "render_post": lambda slug: slug,
    }
    closed: set[int] = set()
    try:
        exec(compile(block.code, block.name, "exec"), names)
        config = names.get("config")
        if isinstance(config, dict):
            Config.from_mapping(config)
        built = []
        factory = names.get("create_app")
        if callable(factory):
            built.append(factory())
        app = names.get("app")
        if (
            app is not given
            and isinstance(app, Starlette)
            and all(route is not Ellipsis for route in app.routes)
        ):
            built.append(app)
        for each in built:
            robots = _robots(each)
            assert "Sitemap: https://www.example.com/sitemap.xml" in robots
            if isinstance(each, Starlette):
                from sitemap_middleware.starlette import get_sitemap

                _close(get_sitemap(each), closed)
            else:
                _close(each, closed)
    finally:
        for value in list(names.values()):
            _close(value, closed)


SETUP = {
    "demo": "python3 -m venv .venv && .venv/bin/pip install -e '.[demo]'"
    " && .venv/bin/python examples/flask_app.py",
    "test": "python3 -m venv .venv && .venv/bin/pip install -e '.[test]'"
    " && .venv/bin/python -m pytest",
}


def test_the_readme_is_short_and_keeps_the_set_up_commands() -> None:
    """At most 150 lines, with the two set-up commands word for word: the demo
    on the embedded store, and the suite (the one the contributing page gives;
    .ci/run runs it with --slow, the whole suite)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    shell = [b.code.strip() for b in ALL if b.page.name == "README.md"]
    assert SETUP["demo"] in shell
    assert SETUP["test"] in shell
    contributing = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    assert SETUP["test"] in contributing
    install = (ROOT / "docs" / "getting-started" / "install.md").read_text("utf-8")
    assert SETUP["demo"] in install
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "-e '.[test,lint,docs,release]'" in ci
    assert '\n"$py" -m pytest --slow\n' in ci


def test_the_readme_links_to_pages_that_exist() -> None:
    """The README is read on the repository host, outside the docs build that
    checks the site's links: its relative links point at files of the checkout."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if "://" not in t]
    assert "docs/index.md" in local
    assert [t for t in local if not (ROOT / t).is_file()] == []
