"""The contract's fixtures: each test runs on every kind of
``support.store_kinds.KINDS`` whose store has the capabilities its module names
in ``CAPABILITIES`` (runtime-checkable protocols of ``stores.base``), so that a
kind added to that list gets every contract test its store can pass, and a
capability it lacks gets none of its tests (never a skip).

A test takes ``kind`` (through ``store``, ``make_store`` or ``two_stores``), or
``shared_kind`` when it needs two store objects on one sitemap, as two
processes hold it (the kinds of ``SHARED_KINDS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.store_kinds import KINDS, ONE_OBJECT, SHARED_KINDS, Fresh, has

from sitemap_middleware import Store, open_store


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    needed = tuple(getattr(metafunc.module, "CAPABILITIES", (Store,)))
    for name, kinds in (("kind", KINDS), ("shared_kind", SHARED_KINDS)):
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, [k for k in kinds if has(k, needed)])


@pytest.fixture
def capable(request: pytest.FixtureRequest) -> Callable[[Store], Store]:
    """Check that a store opened has the module's capabilities (the probe
    that chose its kind and the store agree), and hand it back."""
    needed = getattr(request.module, "CAPABILITIES", (Store,))

    def check(store: Store) -> Store:
        missing = [c.__name__ for c in needed if not isinstance(store, c)]
        assert not missing, f"{type(store).__name__} lacks {missing}"
        return store

    return check


@pytest.fixture
def make_store(
    kind: str, fresh: Fresh, tmp_path: Path, capable: Callable[[Store], Store]
) -> Iterator[Callable[..., Store]]:
    """Open fresh stores of ``kind``: ``make_store(**uri_options)``."""
    made: list[Store] = []

    def build(**options: int) -> Store:
        made.append(capable(fresh.store(kind, tmp_path, **options)))
        return made[-1]

    yield build
    for each in made:
        each.close()


@pytest.fixture
def store(make_store: Callable[..., Store]) -> Store:
    """A fresh store of ``kind``."""
    return make_store()


@pytest.fixture
def two_stores(
    kind: str, tmp_path: Path, fresh: Fresh, capable: Callable[[Store], Store]
) -> Iterator[tuple[Store, Store]]:
    """Two store objects on one sitemap, as two processes hold them (the
    kinds of ONE_OBJECT share nothing between objects: one object twice)."""
    if kind in ONE_OBJECT:
        one = capable(fresh.store(kind, tmp_path, part_size=4))
        yield one, one
        one.close()
        return
    uri = fresh.uri(kind, tmp_path, part_size=4)
    first, second = capable(open_store(uri)), capable(open_store(uri))
    yield first, second
    first.close()
    second.close()
