"""``python manage.py sitemap ...`` and ``sitemap-middleware --app`` on a
Django project: the same commands, the store and base URL from the settings;
seeding from the URL patterns, @sitemap's params and the project's
django.contrib.sitemaps."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.helpers import stored_paths

SITE = Path(__file__).resolve().parent.parent / "support" / "django_site"
SEEDED = [
    "/",
    "/about/",
    "/archive/",
    "/blog/hello-world/",
    "/blog/old-post/",
    "/blog/second-post/",
    "/contact/",
    "/live/",
    "/news/",
    "/stream/",
]


def run(args: list[str], store: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SITEMAP_TEST_STORE": store,
        "PYTHONPATH": str(SITE.parent),
        "DJANGO_SETTINGS_MODULE": "django_site.settings",
    }
    return subprocess.run(
        args, capture_output=True, text=True, env=env, cwd=SITE.parent, timeout=120
    )


def test_manage_py_sitemap_seeds_from_the_urlconf_and_the_old_sitemaps(
    tmp_path: Path,
) -> None:
    """Every route without parameters, the blog's posts from @sitemap's params,
    and the post only the project's Sitemap class lists; never the admin, the
    login page or the login_required page."""
    store = f"sqlite:///{tmp_path / 'sitemap.sqlite3'}"
    done = run([sys.executable, str(SITE / "manage.py"), "sitemap", "seed"], store)
    assert done.returncode == 0, done.stderr
    assert stored_paths(store) == SEEDED
    listed = run([sys.executable, str(SITE / "manage.py"), "sitemap", "list"], store)
    assert listed.returncode == 0, listed.stderr
    assert "https://www.example.com/blog/old-post/" in listed.stdout


@pytest.mark.slow
def test_manage_py_sitemap_explains_a_page(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'sitemap.sqlite3'}"
    manage = [sys.executable, str(SITE / "manage.py"), "sitemap"]
    assert run([*manage, "seed"], store).returncode == 0
    done = run([*manage, "explain", "https://www.example.com/archive/"], store)
    assert done.returncode == 0, done.stderr
    assert "listed: yes" in done.stdout
    assert "route: archive/" in done.stdout
    done = run([*manage, "explain", "https://www.example.com/admin/login/"], store)
    assert done.returncode == 1, done.stderr  # not listed
    assert "listed: no" in done.stdout


@pytest.mark.parametrize("spec", ["django_site.wsgi", "django_site.settings"])
def test_the_command_line_takes_the_project(spec: str, tmp_path: Path) -> None:
    """Its wsgi module (the ``application``) or its settings module."""
    store = f"sqlite:///{tmp_path / 'sitemap.sqlite3'}"
    command = [sys.executable, "-m", "sitemap_middleware"]
    done = run([*command, "seed", "--app", spec], store)
    assert done.returncode == 0, done.stderr
    assert stored_paths(store) == SEEDED


def test_a_project_without_the_middleware_is_one_line_exit_5(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'sitemap.sqlite3'}"
    command = [sys.executable, "-m", "sitemap_middleware"]
    done = run([*command, "seed", "--app", "django_site.settings_bare"], store)
    assert done.returncode == 5
    assert done.stderr.count("\n") == 1, done.stderr
    assert "MIDDLEWARE" in done.stderr


@pytest.mark.parametrize("args", [["--help"], ["seed", "--help"]])
def test_manage_py_sitemap_has_click_s_help(args: list[str], tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'sitemap.sqlite3'}"
    done = run([sys.executable, str(SITE / "manage.py"), "sitemap", *args], store)
    assert done.returncode == 0, done.stderr
    assert "--app " not in done.stdout
    assert "Usage: manage.py sitemap" in done.stdout
