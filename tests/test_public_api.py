"""The public names: sorted, complete, importable, typed."""

from __future__ import annotations

from pathlib import Path

import sitemap_middleware


def test_all_is_sorted_and_complete() -> None:
    public = sorted(
        name
        for name, value in vars(sitemap_middleware).items()
        if not name.startswith("_")
        and getattr(value, "__module__", "").startswith("sitemap_middleware")
    )
    assert sitemap_middleware.__all__ == sorted(sitemap_middleware.__all__)
    assert set(public) <= set(sitemap_middleware.__all__)
    for name in sitemap_middleware.__all__:
        assert hasattr(sitemap_middleware, name)


def test_contract_names() -> None:
    """The names the documentation promises."""
    from sitemap_middleware.flask import Sitemap  # noqa: F401
    from sitemap_middleware.starlette import get_sitemap  # noqa: F401

    assert issubclass(sitemap_middleware.ConfigError, ValueError)
    for cls in (
        sitemap_middleware.SitemapMiddleware,
        sitemap_middleware.ASGISitemapMiddleware,
    ):
        for method in ("flush", "stats", "close"):
            assert callable(getattr(cls, method))


def test_typed_marker_shipped() -> None:
    assert (Path(sitemap_middleware.__file__).parent / "py.typed").exists()


def test_core_imports_no_framework() -> None:
    """Only the adapters' helpers (and the command line's loading and replay,
    which run the app in process, and the reading of Django's URLconf) may
    touch a framework, and only lazily; the Django adapter's folder is
    Django's, loaded by Django."""
    package = Path(sitemap_middleware.__file__).parent
    helpers = {
        package / "flask.py",
        package / "starlette.py",
        package / "cli" / "replay.py",
        package / "cli" / "loading.py",
        package / "apps" / "django.py",
    }
    for path in package.rglob("*.py"):
        if (package / "django") in path.parents:
            continue
        text = path.read_text()
        for framework in ("flask", "starlette", "fastapi", "django"):
            for line in text.splitlines():
                stripped = line.strip()
                if path in helpers and stripped != line:
                    continue  # inside a function or a TYPE_CHECKING block
                if stripped.startswith(("import ", "from ")):
                    assert not stripped.split()[1].startswith(framework), (path, line)
