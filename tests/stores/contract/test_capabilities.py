"""Every kind's store has the capabilities it should (cachelib's interface
uniformity): a capability a refactor drops from a store fails here, by name,
rather than silently taking that store out of its contract tests."""

from __future__ import annotations

import inspect

from support.store_kinds import KINDS

from sitemap_middleware import Store
from sitemap_middleware.stores import abroad, contract
from sitemap_middleware.stores.abroad import Clusters
from sitemap_middleware.stores.contract import (
    Adds,
    Checked,
    Decisions,
    Epoch,
    Hreflang,
    Listing,
    Mapped,
    News,
    Placed,
    Present,
    Pushes,
    Pushing,
    Removals,
    Shared,
    Snapshot,
    Visits,
    Withdrawing,
)

# What every store of the suite has, the example third-party store of
# tests/support/example_store.py (built from the exported base only) included.
COMMON = {Store, Shared, Decisions, Pushes, Pushing, Hreflang, Epoch, Removals}
COMMON |= {Visits, News, Withdrawing}

# Each kind: the capabilities its store has, and no other.
# The package's stores can tell whether they hold a sitemap (Present); the
# example, a third-party store, cannot: it is taken to hold one.
PACKAGED = COMMON | {Adds, Clusters, Mapped, Present}
EXPECTED: dict[str, set[type]] = {
    "example": COMMON,
    "memory": PACKAGED,
    "postgres": PACKAGED | {Snapshot, Listing},
    "redis": PACKAGED | {Listing},
    "sqlite": PACKAGED | {Snapshot, Checked, Placed, Listing},
}
TABLED = set().union(*EXPECTED.values())


def test_every_store_has_its_capabilities_and_no_other(kind: str, store: Store) -> None:
    held = {capability for capability in TABLED if isinstance(store, capability)}
    assert names(held) == names(EXPECTED[kind])


def names(capabilities: set[type]) -> list[str]:
    return sorted(capability.__name__ for capability in capabilities)


def runtime_protocols(module: object) -> set[type]:
    """The runtime-checkable protocols a module defines (not those it imports)."""
    return {
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and getattr(value, "_is_runtime_protocol", False)
        and value.__module__ == getattr(module, "__name__", None)
    }


def test_the_table_names_every_capability_the_stores_define() -> None:
    """A capability added to stores.contract (or abroad) must be added to the
    table, on the kinds that have it."""
    defined = runtime_protocols(contract) | runtime_protocols(abroad)
    assert names(TABLED) == names(defined)


def test_every_kind_has_a_row() -> None:
    assert sorted(EXPECTED) == sorted(KINDS)
