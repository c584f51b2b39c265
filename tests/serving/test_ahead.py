"""A part's runs read one ahead: the same runs in the same order, what the
reading raises raised where its run would have come, and a reading stopped with
its reader."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.errors import StoreError
from sitemap_middleware.serving.ahead import ahead


@given(st.lists(st.binary(max_size=20), max_size=30))
def test_the_runs_come_as_read(runs: list[bytes]) -> None:
    assert list(ahead(iter(runs))) == runs


def test_what_the_reading_raises_comes_after_the_runs_before() -> None:
    def runs() -> Iterator[bytes]:
        yield b"a"
        yield b"b"
        raise StoreError("the store went away")

    got: list[bytes] = []
    with pytest.raises(StoreError, match="went away"):
        for run in ahead(runs()):
            got.append(run)
    assert got == [b"a", b"b"]


def test_a_reader_that_stops_stops_the_reading() -> None:
    read: list[int] = []
    done = threading.Event()

    def runs() -> Iterator[bytes]:
        try:
            for n in range(1000):
                read.append(n)
                yield b"x"
        finally:
            done.set()

    taken = ahead(runs())
    assert next(taken) == b"x"
    taken.close()
    assert done.wait(5)  # the reading ended, long before its 1,000 runs
    time.sleep(0.05)
    assert len(read) <= 4
