"""Snapshot (stores.base): reads that see one state whatever the writers do."""

from __future__ import annotations

from pathlib import Path

from support.store_kinds import Fresh
from support.stored import T0, paths

from sitemap_middleware import Entry, open_store
from sitemap_middleware.stores.contract import Snapshot

CAPABILITIES = (Snapshot,)


def test_reads_in_a_snapshot_see_one_state(
    shared_kind: str, fresh: Fresh, tmp_path: Path
) -> None:
    """Inside ``snapshot()`` the parts, their summaries and their rows stay
    as they were at its first read, whatever another writer commits; after
    it, the writes are there."""
    uri = fresh.uri(shared_kind, tmp_path, part_size=2)
    reader, writer = open_store(uri), open_store(uri)
    try:
        writer.upsert([Entry(f"/{n}", T0) for n in range(3)])
        assert isinstance(reader, Snapshot)
        with reader.snapshot():
            before = reader.parts()
            writer.upsert([Entry(f"/{n}", T0) for n in range(3, 6)])
            writer.remove(["/0"])
            assert reader.parts() == before and reader.part(3) is None
            assert paths(reader) == ["/0", "/1", "/2"]
            assert b"/0<" in b"".join(reader.fragments(1))
        assert [p.number for p in reader.parts()] == [1, 2, 3]
        assert paths(reader) == ["/1", "/2", "/3", "/4", "/5"]
    finally:
        reader.close()
        writer.close()
