"""What a hit of the recent-pages cache spares, and for how long: a page seen
again as this process wrote it is neither read nor written again while the hit
holds all that the store keeps of it (its bytes, its content, the title and
description it shows), and for ``recheck_interval`` after the write only:
another worker may have written the page since (invariant 20)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.store_kinds import Fresh

from sitemap_middleware.config import Config
from sitemap_middleware.model import Entry
from sitemap_middleware.reasons import RECORD, RECORDED, Seen
from sitemap_middleware.recording.digest import Unchanged, Upsert, digest
from sitemap_middleware.recording.observation import Observed
from sitemap_middleware.recording.recorder import Recorder
from sitemap_middleware.routes import Routes
from sitemap_middleware.stores import open_store
from sitemap_middleware.stores.contract import Store
from sitemap_middleware.stores.memory import MemoryStore
from sitemap_middleware.watching.policy import Policy

BASE_URL = "https://www.example.com"
CONFIG = Config.from_mapping(
    {"base_url": BASE_URL, "store": "memory://", "new_urls_per_minute": None}
)
INTERVAL = CONFIG.recheck_interval
ROUTE = Routes(CONFIG).unknown
HTML = [("Content-Type", "text/html; charset=utf-8")]
# Served long enough ago that every time of these tests is in the past.
T0 = time.time() - 10 * INTERVAL
CLUSTER = "".join(
    f'<link rel="alternate" hreflang="{lang}" href="{BASE_URL}{path}">'
    for lang, path in (("en", "/p"), ("de", "/de/p"))
)


def page(
    path: str, title: str, text: str, head: str = "", at: float | None = None
) -> Observed:
    """``path`` served at ``at`` (now if not given): ``text`` its content."""
    body = (
        f"<html><head><title>{title}</title>{head}</head>"
        f"<body><main><p>{text}</p></main></body></html>"
    ).encode()
    seen = time.time() if at is None else at
    return Observed(RECORD, path, path, "", False, ROUTE, HTML, [body], len(body), seen)


def described(words: str) -> str:
    return f'<meta name="description" content="{words}">'


def stored(store: Store) -> dict[str, Entry]:
    return {e.path: e for p in store.parts() for e in store.entries(p.number)}


def seen_by(recorder: Recorder, *observations: Observed) -> None:
    """Each observation digested and written in turn, as requests a second
    apart are."""
    for observation in observations:
        recorder.submit(observation)
        assert recorder.flush(5.0)


@pytest.fixture(params=["memory", "sqlite", "redis", "postgres"])
def workers(
    request: pytest.FixtureRequest, fresh: Fresh, tmp_path: Path
) -> Iterator[tuple[Recorder, Recorder]]:
    """Two workers' recorders on one store (two objects on one URI are two
    processes' view of it; a memory store is one object)."""
    kind = request.param
    if kind == "memory":
        shared = MemoryStore()
        stores: list[Store] = [shared, shared]
    else:
        uri = fresh.uri(kind, tmp_path)
        stores = [open_store(uri), open_store(uri)]
    recorders = [Recorder(CONFIG, Policy(CONFIG), store) for store in stores]
    try:
        yield recorders[0], recorders[1]
    finally:
        for recorder in recorders:
            recorder.close()
        for store in stores:
            store.close()


# -- what the page shows ----------------------------------------------------------


def test_a_new_title_or_description_alone_is_written_and_moves_nothing_else(
    workers: tuple[Recorder, Recorder],
) -> None:
    """docs/recording.md#titles: a page whose <title> or meta description
    alone changes, seen by a worker that remembers it, is written: the new
    title and description stored, its fingerprint, lastmod and part version
    as they were (sitemaps carry neither). The same bytes again write nothing."""
    recorder, _ = workers
    store = recorder._writer._store
    seen_by(recorder, page("/a", "Old title", "Words.", described("Old words")))
    first, part = stored(store)["/a"], store.part(1)
    assert part is not None
    seen_by(recorder, page("/a", "New title", "Words.", described("Old words")))
    retitled = stored(store)["/a"]
    assert (retitled.title, retitled.description) == ("New title", "Old words")
    seen_by(recorder, page("/a", "New title", "Words.", described("New words")))
    last = stored(store)["/a"]
    assert (last.title, last.description) == ("New title", "New words")
    for entry in (retitled, last):
        assert (entry.fingerprint, entry.lastmod) == (first.fingerprint, first.lastmod)
    assert store.part(1) == part
    seen_by(recorder, page("/a", "New title", "Words.", described("New words")))
    stats = recorder.stats()
    assert stats[RECORDED] == 3 and stats["seen"] == {Seen.UNCHANGED: 1}


# -- how long a hit is trusted ------------------------------------------------------


def test_a_hit_is_trusted_for_recheck_interval_from_the_write() -> None:
    """The same bytes within ``recheck_interval`` of the response written are
    unchanged, nothing to read or write; from then on (or served before it: a
    clock set back) the page is read and written again, counted unchanged,
    and its hit trusted again from that response."""
    rules = Policy(CONFIG)
    first = digest(page("/a", "A", "Words.", at=T0), CONFIG, rules, None)
    assert type(first) is Upsert and first.noted == RECORDED
    hit = first.prints
    within = page("/a", "A", "Words.", at=T0 + INTERVAL - 1)
    assert digest(within, CONFIG, rules, hit) == Unchanged("/a", "/a", hit, None)
    for at in (T0 + INTERVAL, T0 - 1):
        again = digest(page("/a", "A", "Words.", at=at), CONFIG, rules, hit)
        assert type(again) is Upsert and again.known
        assert again.noted == Seen.UNCHANGED and again.prints.written == at
        assert again.entry.fingerprint == first.entry.fingerprint


def test_a_page_changed_back_is_written_again_by_the_worker_that_wrote_it_first(
    workers: tuple[Recorder, Recorder],
) -> None:
    """Invariant 20: worker 0 records v1, worker 1 records v2, the edit is
    reverted and worker 0 serves v1 again. Within ``recheck_interval`` of its
    write its hit stands (the bound docs/recording.md gives); after it, v1 is
    written again, dated by the change seen, as one worker would have it."""
    one, two = workers
    store = one._writer._store
    seen_by(one, page("/p", "First", "one", at=T0))
    v1 = stored(store)["/p"]
    seen_by(two, page("/p", "Second", "two", at=T0 + 10))
    assert stored(store)["/p"].title == "Second"
    seen_by(one, page("/p", "First", "one", at=T0 + 20))
    assert stored(store)["/p"].title == "Second"  # within the bound
    seen_by(one, page("/p", "First", "one", at=T0 + INTERVAL))
    back = stored(store)["/p"]
    assert (back.title, back.fingerprint) == ("First", v1.fingerprint)
    assert back.lastmod is not None and back.lastmod.timestamp() == int(T0 + INTERVAL)
    assert one.stats()["seen"] == {Seen.UNCHANGED: 2}


def test_alternates_a_page_no_longer_declares_are_not_listed(
    workers: tuple[Recorder, Recorder],
) -> None:
    """Worker 0 records /p without alternates, worker 1 with an hreflang
    cluster (a deploy, rolled back), worker 0 serves /p without them again,
    then /de/p, which declares the cluster, is recorded: once worker 0's hit
    is older than ``recheck_interval``, /p is written declaring none, and the
    cluster is not listed (one worker lists no alternates either)."""
    one, two = workers
    store = one._writer._store
    seen_by(one, page("/p", "P", "p", at=T0))
    seen_by(two, page("/p", "P", "p", CLUSTER, at=T0 + 10))
    seen_by(one, page("/p", "P", "p", at=T0 + INTERVAL))
    seen_by(one, page("/de/p", "P de", "de", CLUSTER, at=T0 + INTERVAL))
    assert sorted(stored(store)) == ["/de/p", "/p"]
    listed = b"".join(b"".join(store.fragments(p.number)) for p in store.parts())
    assert b"hreflang" not in listed


def test_the_cache_holds_nothing_the_garbage_collector_walks() -> None:
    """A crawler's first pass fills the cache: what it holds of each page is
    strings and numbers the collector stops tracking, and a page's own key
    is no spelling kept beside it, so full collections do not walk it."""
    import gc

    from sitemap_middleware.recording.digest import Prints
    from sitemap_middleware.recording.recent import Recent

    recent = Recent(INTERVAL, size=100)
    for n in range(150):
        recent.remember(f"/p/{n}", Prints(f"raw{n}", f"content{n}", n, T0))
    recent.remember("/p/149?utm_source=x", Prints("raw", "content"), "/p/149")
    gc.collect()
    held = list(recent._pages.values())
    assert len(held) == 100 and not any(map(gc.is_tracked, held))
    assert recent._keys == {"/p/149": {"/p/149?utm_source=x"}}
    assert recent.get("/p/148") == Prints("raw148", "content148", 148, T0)
