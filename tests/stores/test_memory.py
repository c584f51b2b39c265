"""The memory store's own promises: an object is its data, kept until the object
goes, whole under a writer and readers on threads; a forked child starts its own;
a process ends cleanly under its writers."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from support.stored import T0, paths

from sitemap_middleware import Entry, open_store
from sitemap_middleware.stores.memory import MemoryStore


def test_each_object_is_a_listing_of_its_own_and_close_keeps_it() -> None:
    first, second = open_store("memory://"), open_store("memory://")
    first.upsert([Entry("/a", T0)])
    first.close()  # nothing to release: the data is the object's
    assert first.known(["/a"]) == {"/a"} and first.count() == 1
    assert second.known(["/a"]) == set() and second.parts() == []


def test_readers_on_threads_see_whole_parts_while_a_writer_writes() -> None:
    """Request threads read while the writer thread writes batch after batch:
    every read answers, a full part's fragments hold its URLs, and nothing is
    lost."""
    store = MemoryStore(part_size=50)
    done = threading.Event()
    errors: list[BaseException] = []
    seen: list[int] = []

    def write() -> None:
        try:
            for start in range(0, 2_000, 100):
                store.upsert(Entry(f"/p{n}", T0) for n in range(start, start + 100))
        except BaseException as exc:  # reported by the test
            errors.append(exc)
        finally:
            done.set()

    def read() -> None:
        try:
            while not done.is_set():
                counted = store.count()
                seen.append(counted)
                for info in store.parts():
                    if info.number < counted // 50:  # full before this read
                        run = b"".join(store.fragments(info.number))
                        assert run.count(b"<url>") == 50
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=write)]
    threads += [threading.Thread(target=read) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors
    # A batch is one transaction: never seen half written, nor undone.
    assert seen == sorted(seen) and all(n % 100 == 0 for n in seen)
    assert store.count() == 2_000 and len(store.parts()) == 40
    assert paths(store)[:3] == ["/p0", "/p1", "/p2"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # fork with threads
def test_a_forked_child_starts_an_empty_store_of_its_own() -> None:
    """Nothing is shared between processes: the child writes and reads a
    store of its own, empty at first and under another epoch; the parent's
    is as it was."""
    store = MemoryStore()
    store.upsert([Entry("/parent", T0)])
    epoch = store.epoch()
    pid = os.fork()
    if pid == 0:  # the child: report by exit status only
        ok = False
        try:
            ok = store.count() == 0 and store.epoch() not in ("", epoch)
            store.upsert([Entry("/child", T0)])
            ok = ok and store.known(["/parent", "/child"]) == {"/child"}
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.known(["/parent", "/child"]) == {"/parent"}
    assert store.epoch() == epoch


# Stores written by daemon threads when the interpreter exits under them.
_EXIT_WHILE_WRITING = """
import threading, time
from datetime import datetime, timezone
from sitemap_middleware import Entry
from sitemap_middleware.stores.memory import MemoryStore

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)

def write(store):
    n = 0
    while True:
        store.upsert([Entry(f"/p{n + i}", T0) for i in range(200)])
        store.count()
        n += 200

for store in [MemoryStore() for _ in range(4)]:
    threading.Thread(target=write, args=(store,), daemon=True).start()
time.sleep(0.3)
"""


def test_the_process_exits_cleanly_while_writer_threads_write() -> None:
    """A process ending while daemon writer threads are inside statements
    exits with 0: its stores' connections are not closed under them (closing
    them at exit crashed the interpreter most times)."""
    for _ in range(4):
        done = subprocess.run(
            [sys.executable, "-c", _EXIT_WHILE_WRITING],
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()[-2000:]
