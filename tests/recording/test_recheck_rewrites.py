"""What the config re-check writes again (``recheck.Recheck``), on every store
kind that can say what a stored page declares: a page restyled or moved to
its section keeps what the store holds of it beside its fragment, so that a
change of config changes nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.store_kinds import KINDS, Fresh, has
from support.stored import clustered, member, sections_of

from sitemap_middleware import Entry, Store
from sitemap_middleware.recording.recheck import Recheck, Style
from sitemap_middleware.sections import DEFAULT
from sitemap_middleware.stores.abroad import Clusters

# A cluster of three pages, each declaring all three.
MEMBERS = (("de", "/de/x"), ("en", "/en/x"), ("fr", "/fr/x"))


class Judge:
    """A config that keeps every page: written ``changefreq``, the pages
    under ``/en/`` in the section ``english`` when ``moved``."""

    max_urls = None

    def __init__(self, changefreq: str | None, moved: bool) -> None:
        self._changefreq = changefreq
        self._moved = moved

    def refuse(self, entry: Entry) -> str | None:
        return None

    def cap(self, entry: Entry) -> int | None:
        return None

    def style(self, entry: Entry) -> Style:
        return self._changefreq, None

    def section(self, entry: Entry) -> str:
        english = self._moved and entry.path.startswith("/en/")
        return "english" if english else DEFAULT


@pytest.fixture(params=[k for k in KINDS if has(k, (Clusters,))])
def store(
    request: pytest.FixtureRequest, fresh: Fresh, tmp_path: Path
) -> Iterator[Store]:
    made = fresh.store(request.param, tmp_path)
    yield made
    made.close()


@pytest.mark.parametrize(
    ("changefreq", "moved"), [("daily", False), (None, True)], ids=["restyled", "moved"]
)
def test_a_rewritten_page_keeps_the_alternates_it_declares(
    store: Store, changefreq: str | None, moved: bool
) -> None:
    """Two members of a cluster stored, the third not yet: their fragments
    list no alternates. Rewritten by the re-check, they still declare them,
    so the cluster is listed on every member once the third is stored."""
    store.upsert([member("/en/x", MEMBERS), member("/de/x", MEMBERS)])
    assert clustered(store) == {"/en/x": frozenset(), "/de/x": frozenset()}
    recheck = Recheck(store, Judge(changefreq, moved), "new config")
    while not recheck.done:
        recheck.step()
    # The re-check did write them again.
    if moved:
        assert [s for _, s, _ in sections_of(store)] == ["", "english"]
    else:
        assert all(b"<changefreq>daily" in f for f in store.fragments(1))
    store.upsert([member("/fr/x", MEMBERS)])
    full = frozenset(MEMBERS)
    assert clustered(store) == dict.fromkeys(("/en/x", "/de/x", "/fr/x"), full)
