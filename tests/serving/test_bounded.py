"""An answer waited on for a bounded time: given in time, or None and the call
goes on; what it raises in time is raised; a hung store holds a bounded number
of threads."""

from __future__ import annotations

import threading
import time

import pytest

from sitemap_middleware.errors import StoreError
from sitemap_middleware.serving.bounded import Bounded


def test_an_answer_in_time_is_given() -> None:
    assert Bounded(1.0).run(lambda: b"body", "/x") == b"body"


def test_a_late_answer_is_none_and_still_made() -> None:
    made = threading.Event()

    def slow() -> bytes:
        time.sleep(0.3)
        made.set()
        return b"late"

    started = time.monotonic()
    assert Bounded(0.05).run(slow, "/x") is None
    assert time.monotonic() - started < 0.25
    assert made.wait(2)  # the call went on: its answer fills a cache


def test_what_the_call_raises_in_time_is_raised() -> None:
    def failing() -> bytes:
        raise StoreError("down")

    with pytest.raises(StoreError, match="down"):
        Bounded(1.0).run(failing, "/x")


def test_a_hung_store_holds_at_most_its_threads() -> None:
    release = threading.Event()
    bounded = Bounded(0.01, most=2)
    assert bounded.run(release.wait, "/x") is None
    assert bounded.run(release.wait, "/x") is None
    started = time.monotonic()
    assert bounded.run(lambda: True, "/x") is None  # none left: no wait at all
    assert time.monotonic() - started < 0.01
    release.set()
    time.sleep(0.1)
    assert bounded.run(lambda: True, "/x") is True  # its threads came back
