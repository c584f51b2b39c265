"""Fixtures shared by the suite: a wrapped app per stack, on a fresh store."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from support.sites import ROUTES, Site, make_routed_site, make_site

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

# Hypothesis checks behaviour, not speed: its per-example deadline would fail a
# test on a loaded machine (speed is measured by tests/benchmarks).
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

BASE = {"base_url": "http://localhost", "store": "memory://"}

# Markers given by rule (pyproject.toml lists them all); explicit marks cover
# the rest. A test choosing a store kind under one of these names, as a
# parameter or a parametrized fixture, needs the kind's server when it is one
# of SERVICE_KINDS.
STORE_PARAMETERS = frozenset({"kind", "make_store", "store_uri"})
SERVICE_KINDS = frozenset({"redis", "postgres"})
# Fixtures that start a redis-server of the test's own.
REDIS_SERVER_FIXTURES = frozenset({"redis_server"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        if any(params.get(name) in SERVICE_KINDS for name in STORE_PARAMETERS):
            item.add_marker(pytest.mark.services)
        if REDIS_SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.services)
            item.add_marker(pytest.mark.servers)


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
