"""Fixtures shared by the suite: a wrapped app per stack, and fresh stores of each
kind whose server-side keys and tables go when the test ends."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest
from hypothesis import settings
from support.sites import BASE, ROUTES, Site, make_routed_site, make_site
from support.store_kinds import KINDS, Fresh

from sitemap_middleware import Store

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

# Hypothesis checks behaviour, not speed: its per-example deadline would fail a
# test on a loaded machine (speed is measured by tests/benchmarks).
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

# Markers given by rule (pyproject.toml lists them all); explicit marks cover
# the rest. A test choosing a store kind under one of these names, as a
# parameter or a parametrized fixture, needs the kind's server when it is one
# of SERVICE_KINDS.
STORE_PARAMETERS = frozenset(
    {"kind", "make_store", "shared_kind", "store", "store_uri"}
)
SERVICE_KINDS = frozenset({"redis", "postgres"})
# Fixtures that start a redis-server of the test's own.
REDIS_SERVER_FIXTURES = frozenset({"redis_server"})


class _Closable(Protocol):
    def close(self) -> None: ...


Made = TypeVar("Made", bound=_Closable)


def _closing(build: Callable[..., Made]) -> Iterator[Callable[..., Made]]:
    """Yield ``build``, keeping what it makes; close all of it after the test."""
    made: list[Made] = []

    def keep(*args: Any, **kwargs: Any) -> Made:
        made.append(build(*args, **kwargs))
        return made[-1]

    yield keep
    for each in made:
        each.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        help="run the tests marked slow too (the whole suite, as CI does)",
    )


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    _leave_slow(config, items)
    for item in items:
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        if any(params.get(name) in SERVICE_KINDS for name in STORE_PARAMETERS):
            item.add_marker(pytest.mark.services)
        if REDIS_SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.services)
            item.add_marker(pytest.mark.servers)


def _leave_slow(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the slow tests unless ``--slow`` asks for them or a ``-m``
    expression names the marker: the plain test command stays a few minutes
    long, and ``-m slow`` runs the long ones alone."""
    if config.getoption("--slow") or "slow" in (config.option.markexpr or ""):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


@pytest.fixture(params=["wsgi", "asgi"])
def stack(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make(stack: str) -> Iterator[Callable[..., Site]]:
    """Build a wrapped app on ``stack``: ``make(config_overrides, robots=...)``."""

    def build(overrides: dict[str, Any] | None = None, **kwargs: Any) -> Site:
        return make_site(stack, {**BASE, **(overrides or {})}, **kwargs)

    yield from _closing(build)


@pytest.fixture
def site(make: Callable[..., Site]) -> Site:
    return make()


@pytest.fixture
def routed(stack: str) -> Iterator[Callable[..., Site]]:
    """Build a routed app (real route templates) on ``stack``:
    ``routed(config_overrides)``."""

    def build(overrides: dict[str, Any] | None = None) -> Site:
        return make_routed_site(stack, {**BASE, **(overrides or {})})

    yield from _closing(build)


@pytest.fixture(autouse=True)
def _restore_routes() -> Iterator[None]:
    """Tests add pages to the apps' shared ROUTES; each gets them back as found."""
    saved = dict(ROUTES)
    yield
    ROUTES.clear()
    ROUTES.update(saved)


@pytest.fixture(autouse=True)
def fresh() -> Iterator[Fresh]:
    """Fresh Redis and PostgreSQL stores for the test (``fresh.uri(kind)``...).
    Autouse, so that it is set up first and deletes what they wrote last, once
    every fixture holding one of its stores has closed it."""
    stores = Fresh()
    yield stores
    stores.cleanup()


@pytest.fixture(params=KINDS)
def make_store(
    request: pytest.FixtureRequest, fresh: Fresh, tmp_path: Path
) -> Iterator[Callable[..., Store]]:
    """Open fresh stores of each kind: ``make_store(**uri_options)``."""

    def build(**options: int) -> Store:
        return fresh.store(request.param, tmp_path, **options)

    yield from _closing(build)


@pytest.fixture(params=KINDS)
def store(
    request: pytest.FixtureRequest, fresh: Fresh, tmp_path: Path
) -> Iterator[Store]:
    """A fresh store of each kind."""
    made = fresh.store(request.param, tmp_path)
    yield made
    made.close()
