"""The writer's parts on their own: the breaker it shares with the IndexNow pusher,
the digest's one verdict on a page written lately, and a store with no optional
feature (each one asked with ``isinstance`` on its protocol)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sitemap_middleware.config import Config
from sitemap_middleware.errors import StoreError
from sitemap_middleware.model import Entry, PartInfo
from sitemap_middleware.reasons import RECORD
from sitemap_middleware.recording.breaker import Breaker
from sitemap_middleware.recording.clusters import Alternates
from sitemap_middleware.recording.digest import Unchanged, Upsert, digest
from sitemap_middleware.recording.observation import Observation, Observed
from sitemap_middleware.recording.recorder import Recorder
from sitemap_middleware.routes import Routes
from sitemap_middleware.stores import open_store
from sitemap_middleware.stores.contract import (
    Decisions,
    Epoch,
    Hreflang,
    Pushes,
    Pushing,
    Removals,
    Shared,
)
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.watching.policy import Policy

CONFIG = Config.from_mapping(
    {"base_url": "https://www.example.com", "store": "memory://"}
)
LOGGER = "sitemap_middleware"


def observed(path: str) -> Observation:
    body = [f"<html><head><title>{path}</title></head><body>hi</body></html>".encode()]
    return Observed(
        action=RECORD,
        key=path,
        path=path,
        query="",
        raw=False,
        route=Routes(CONFIG).unknown,
        headers=[("Content-Type", "text/html; charset=utf-8")],
        body=body,
        size=len(body[0]),
        seen=time.time(),
    )


def breaker() -> Breaker:
    return Breaker(
        "paused: %(detail)s, retried in %(delay).0f s",
        "again: %(detail)s",
        "resumed after %(seconds).1f s",
        1.0,
        8.0,
    )


# -- the breaker -------------------------------------------------------------


def test_the_backoff_doubles_to_its_maximum_and_a_retry_after_is_capped() -> None:
    """1, 2, 4, 8, 8 seconds; an asked delay is taken as it is up to the
    maximum (the backoff doubles beneath it); a success starts again at 1."""
    tripped = breaker()
    assert tripped.allows()
    assert [tripped.back_off() for _ in range(5)] == [1.0, 2.0, 4.0, 8.0, 8.0]
    assert not tripped.allows()
    tripped.reset()
    assert tripped.back_off(3.0) == 3.0
    assert tripped.back_off(3600.0) == 8.0
    assert tripped.back_off() == 4.0  # 1 and 2 were spent under the asked ones
    tripped.reset()
    assert tripped.back_off() == 1.0


def test_one_warning_an_outage_and_one_line_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first failure warns with its detail and delay; the next ones are
    DEBUG lines (an exception's traceback with them); the first success says
    how long the outage lasted, once."""
    tripped = breaker()
    with caplog.at_level(logging.DEBUG, LOGGER):
        tripped.trip(StoreError("connection refused"))
        tripped.trip(StoreError("still refused"))
        tripped.reset()
        tripped.reset()
        tripped.trip("the endpoint answered 503", asked=120.0)
    lines = [(r.levelno, r.getMessage(), r.exc_info) for r in caplog.records]
    assert [(level, message) for level, message, _ in lines] == [
        (logging.WARNING, "paused: connection refused, retried in 1 s"),
        (logging.DEBUG, "again: still refused"),
        (logging.INFO, "resumed after 0.0 s"),
        (logging.WARNING, "paused: the endpoint answered 503, retried in 8 s"),
    ]
    assert lines[1][2] is not None and lines[1][2][0] is StoreError


# -- the digest decides once ------------------------------------------------------


@pytest.mark.parametrize("held", [True, False])
def test_a_hit_is_unchanged_only_while_the_store_holds_the_page_as_written(
    held: bool,
) -> None:
    """The same bytes again: ``Unchanged`` if the writer says the store holds
    the page as written, else the page read in full, an upsert of a known
    URL. The same content in other bytes: the writer is asked with the
    alternates the head declares."""
    rules = Policy(CONFIG)
    observation = observed("/a")
    first = digest(observation, CONFIG, rules, None)
    assert type(first) is Upsert and not first.known
    asked: list[tuple[str, Alternates | None]] = []

    def written(path: str, alternates: Alternates | None) -> bool:
        asked.append((path, alternates))
        return held

    again = digest(observation, CONFIG, rules, first.prints, written)
    if held:
        assert again == Unchanged("/a", "/a", first.prints, None)
        assert asked == [("/a", None)]
    else:
        assert again == first._replace(known=True)
        assert [path for path, _ in asked] == ["/a", "/a"]
    asked.clear()
    noisy = first.prints._replace(raw="other bytes")
    outcome = digest(observation, CONFIG, rules, noisy, written)
    assert type(outcome) is (Unchanged if held else Upsert)
    assert [path for path, _ in asked] == ["/a"]


# -- a store with no optional feature ----------------------------------------------


class Bare:
    """Only the :class:`~sitemap_middleware.stores.contract.Store` protocol, over a
    memory store: no counters, settings, log, epoch, hreflang word or pushes."""

    part_size = 50_000
    part_bytes = 50 * 1024 * 1024

    def __init__(self) -> None:
        self._inner = MemoryStore()

    def upsert(self, entries: Iterable[Entry]) -> int:
        return self._inner.upsert(entries)

    def remove(self, paths: Iterable[str]) -> int:
        return self._inner.remove(paths)

    def count(self, route: str | None = None) -> int:
        return self._inner.count(route)

    def known(self, paths: Iterable[str]) -> set[str]:
        return self._inner.known(paths)

    def parts(self) -> list[PartInfo]:
        return self._inner.parts()

    def part(self, number: int) -> PartInfo | None:
        return self._inner.part(number)

    def fragments(self, number: int) -> Iterator[bytes]:
        return self._inner.fragments(number)

    def entries(self, number: int) -> Iterator[Entry]:
        return self._inner.entries(number)

    def close(self) -> None:
        self._inner.close()


FEATURES: list[Any] = [Shared, Decisions, Epoch, Hreflang, Pushes, Pushing, Removals]


def test_every_package_store_has_every_feature_and_a_bare_one_none() -> None:
    assert all(isinstance(MemoryStore(), feature) for feature in FEATURES)
    assert not any(isinstance(Bare(), feature) for feature in FEATURES)


def test_a_store_without_optional_features_records_and_counts() -> None:
    """The writer asks each feature once and goes without it: pages are
    written, unchanged ones seen as such, the counts stay this process's."""
    store = Bare()
    recorder = Recorder(CONFIG, Policy(CONFIG), store)
    try:
        for path in ("/a", "/b", "/a"):
            recorder.submit(observed(path))
            assert recorder.flush(5.0)
        stats = recorder.site_stats()
    finally:
        recorder.close()
    assert sorted(entry.path for entry in store.entries(1)) == ["/a", "/b"]
    assert stats["recorded"] == 2 and stats["urls"] == 2
    assert stats["seen"] == {"unchanged": 1}


def test_a_writer_with_nothing_to_write_opens_nothing(tmp_path: Path) -> None:
    """A recorder flushed and closed with nothing queued (a command's app
    loaded, asked nothing of its middleware) leaves a store that is not
    there as it is: no file. A page then is written, the store made."""
    path = tmp_path / "s.sqlite3"
    config = Config.from_mapping(
        {"base_url": "https://www.example.com", "store": f"sqlite:///{path}"}
    )
    recorder = Recorder(config, Policy(config), open_store(config.store))
    assert recorder.flush(5.0)
    assert recorder.flush(5.0)
    assert not path.exists()
    recorder.close()
    assert not path.exists()
    again = Recorder(config, Policy(config), open_store(config.store))
    try:
        assert again.flush(5.0)
        again.submit(observed("/a"))
        assert again.flush(5.0)
        assert path.exists()
        assert again.site_stats()["urls"] == 1
    finally:
        again.close()
