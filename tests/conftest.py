"""Fixtures shared by the suite: a wrapped app per stack, on a fresh store."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from apps import ROUTES, Site, make_routed_site, make_site

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

BASE = {"base_url": "http://localhost", "store": "memory://"}


@pytest.fixture(params=["wsgi", "asgi"])
def stack(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make(stack: str) -> Iterator[Callable[..., Site]]:
    """Build a wrapped app on ``stack``: ``make(config_overrides, robots=...)``."""
    sites: list[Site] = []

    def build(overrides: dict[str, Any] | None = None, **kwargs: Any) -> Site:
        site = make_site(stack, {**BASE, **(overrides or {})}, **kwargs)
        sites.append(site)
        return site

    yield build
    for site in sites:
        site.close()


@pytest.fixture
def site(make: Callable[..., Site]) -> Site:
    return make()


@pytest.fixture
def routed(stack: str) -> Iterator[Callable[..., Site]]:
    """Build a routed app (real route templates) on ``stack``:
    ``routed(config_overrides)``."""
    sites: list[Site] = []

    def build(overrides: dict[str, Any] | None = None) -> Site:
        site = make_routed_site(stack, {**BASE, **(overrides or {})})
        sites.append(site)
        return site

    yield build
    for site in sites:
        site.close()


@pytest.fixture(autouse=True)
def _restore_routes() -> Iterator[None]:
    """Tests add pages to the apps' shared ROUTES; each gets them back as found."""
    saved = dict(ROUTES)
    yield
    ROUTES.clear()
    ROUTES.update(saved)
