"""A Wagtail site (tests/support/django_site/settings_wagtail.py): its
``wagtail.contrib.sitemaps`` view at /sitemap.xml, without a sitemaps dict, seeds
the store with its page tree; the route the middleware answers in its place is
one warning; Wagtail's admin is never listed. In processes of their own: the
project's settings are Wagtail's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.helpers import stored_paths

pytest.importorskip("wagtail")
pytestmark = pytest.mark.slow

SITE = Path(__file__).resolve().parent.parent / "support" / "django_site"
PAGES = (
    "from wagtail.models import Page\n"
    "home = Page.objects.get(depth=2)\n"
    "for slug in ('about', 'news'):\n"
    "    home.add_child(instance=Page(title=slug.title(), slug=slug))\n"
    "home.add_child(instance=Page(title='Draft', slug='draft', live=False))\n"
)


def test_a_wagtail_site_is_seeded_from_its_sitemap_view(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'sitemap.sqlite3'}"
    env = {
        **os.environ,
        "PYTHONPATH": str(SITE.parent),
        "DJANGO_SETTINGS_MODULE": "django_site.settings_wagtail",
        "DJANGO_TEST_DB": str(tmp_path / "db.sqlite3"),
        "SITEMAP_TEST_STORE": store,
    }
    manage = [sys.executable, str(SITE / "manage.py")]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*manage, *args], capture_output=True, text=True, env=env, timeout=300
        )

    assert run("migrate", "-v", "0").returncode == 0
    made = run("shell", "-c", PAGES)
    assert made.returncode == 0, made.stderr
    seeded = run("sitemap", "seed")
    assert seeded.returncode == 0, seeded.stderr
    assert stored_paths(store) == ["/", "/about/", "/news/"]
    warned = [line for line in seeded.stderr.splitlines() if "unreachable" in line]
    assert len(warned) == 1
    assert "'sitemap.xml'" in warned[0]
    admin = run("sitemap", "explain", "https://www.example.com/admin/")
    assert "listed: no" in admin.stdout
