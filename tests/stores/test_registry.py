"""How stores are found: by scheme, registered (the example third-party store) or
through the ``sitemap_middleware.stores`` entry points of an installed
distribution (a real one, on sys.path in tmp_path); a missing driver names its
extra."""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.example_store import ShelfStore

from sitemap_middleware import ConfigError, Store, open_store, register_store
from sitemap_middleware import stores as stores_module
from sitemap_middleware.stores.memory import MemoryStore


@pytest.fixture
def distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Install ``fake-store-pkg`` in tmp_path: scheme ``fakestore`` -> a memory
    store recording the URIs it was built for; ``brokenstore`` does not load."""
    package = tmp_path / "fake_store_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            from sitemap_middleware.stores.memory import MemoryStore

            made = []

            def make(uri):
                made.append(uri)
                return MemoryStore()
            """
        )
    )
    info = tmp_path / "fake_store_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-store-pkg\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[sitemap_middleware.stores]\n"
        "fakestore = fake_store_pkg:make\n"
        "brokenstore = fake_store_pkg:missing\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    # What the lookup caches goes with the test.
    monkeypatch.setattr(stores_module, "_REGISTRY", dict(stores_module._REGISTRY))
    yield tmp_path
    sys.modules.pop("fake_store_pkg", None)


def test_entry_point_store_is_found_and_cached(distribution: Path) -> None:
    store = open_store("fakestore://x")
    assert isinstance(store, MemoryStore)
    import fake_store_pkg  # type: ignore[import-not-found]

    assert fake_store_pkg.made == ["fakestore://x"]
    assert stores_module._REGISTRY["fakestore"] is fake_store_pkg.make
    # Schemes are case-insensitive, like the built-in ones.
    assert isinstance(open_store("FakeStore://y"), MemoryStore)
    assert fake_store_pkg.made == ["fakestore://x", "FakeStore://y"]


def test_unknown_scheme_lists_entry_point_schemes(distribution: Path) -> None:
    with pytest.raises(ConfigError, match="unknown store scheme 'nope'") as info:
        open_store("nope://x")
    assert "fakestore" in str(info.value) and "sqlite" in str(info.value)


def test_entry_point_that_does_not_load(distribution: Path) -> None:
    with pytest.raises(ConfigError, match="fake_store_pkg:missing"):
        open_store("brokenstore://x")
    assert "brokenstore" not in stores_module._REGISTRY


def test_no_entry_point_without_the_distribution() -> None:
    with pytest.raises(ConfigError, match="unknown store scheme 'fakestore'"):
        open_store("fakestore://x")


def test_example_store_is_a_third_party_store(tmp_path: Path) -> None:
    """The example store is built on the exported base and found by scheme."""
    with open_store(f"example:///{tmp_path}/shelf?part_size=2") as store:
        assert isinstance(store, ShelfStore) and isinstance(store, Store)
        assert store.part_size == 2


@pytest.mark.parametrize(
    ("module", "uri", "extra"),
    [
        ("redis", "redis://127.0.0.1/0", "redis"),
        ("redis", "rediss://127.0.0.1/0", "redis"),
        ("psycopg", "postgresql://127.0.0.1/test", "postgres"),
        ("psycopg_pool", "postgres://127.0.0.1/test", "postgres"),
    ],
)
def test_missing_driver_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, uri: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # type: ignore[arg-type]
    for name in ("redis", "postgres"):  # forget our modules, so they import again
        monkeypatch.delitem(sys.modules, f"sitemap_middleware.stores.{name}", False)
    hint = f'pip install "sitemap-middleware[{extra}]"'
    with pytest.raises(ConfigError, match=re.escape(hint)):
        open_store(uri)


def test_registry(tmp_path: Path) -> None:
    """Third-party stores plug in by scheme."""
    made: list[str] = []

    def factory(uri: str) -> Store:
        made.append(uri)
        return MemoryStore()

    register_store("custom+test", factory)
    assert isinstance(open_store("custom+test://x"), MemoryStore)
    assert made == ["custom+test://x"]
    ready = MemoryStore()
    assert open_store(ready) is ready
    with pytest.raises(ConfigError, match="unknown store scheme 'nope'"):
        open_store("nope://x")
