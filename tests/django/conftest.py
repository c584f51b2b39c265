"""The Django project of tests/support/django_site, set up once per process:
its settings, its in-memory database migrated; each test gets a fresh
middleware on a store of its own (settings.SITEMAP overridden)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SUPPORT = Path(__file__).resolve().parent.parent / "support"
if str(SUPPORT) not in sys.path:
    sys.path.insert(0, str(SUPPORT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "django_site.settings")

django = pytest.importorskip("django")


@pytest.fixture(scope="session")
def django_project() -> Iterator[None]:
    from django.core.management import call_command
    from django.test.utils import setup_test_environment, teardown_test_environment

    django.setup()
    setup_test_environment()
    call_command("migrate", verbosity=0, interactive=False)
    yield
    teardown_test_environment()


@pytest.fixture
def sitemap_settings(django_project: None, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """settings.SITEMAP with an SQLite store of the test's own."""
    from django.test import override_settings

    config = {
        "base_url": "https://www.example.com",
        "store": f"sqlite:///{tmp_path / 'sitemap.sqlite3'}",
    }
    with override_settings(SITEMAP=config):
        yield config
