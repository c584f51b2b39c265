"""The PostgreSQL store's array dumper: the bytes psycopg's own dumper sends,
and the values the server reads back."""

from __future__ import annotations

from typing import Any

import pytest
from psycopg.adapt import PyFormat, Transformer
from psycopg.types.array import ListBinaryDumper
from support.services import require_postgres

from sitemap_middleware.stores.postgres import _FlatListDumper

CASES: list[list[Any]] = [
    ["a", "bé", ""],
    [1, 2, 3],
    [5, 2**40],
    [b"x\x00y", b""],
    [None, "b"],
    ["a", None],
    [[1, 2], [3, 4]],
    [True, False],
]


@pytest.mark.parametrize("values", CASES)
def test_flat_lists_dump_as_psycopg_dumps_them(values: list[Any]) -> None:
    import psycopg

    with psycopg.connect(require_postgres()) as conn:
        dumped = []
        for dumper in (ListBinaryDumper, _FlatListDumper):
            conn.adapters.register_dumper(list, dumper)
            found = Transformer(conn).get_dumper(values, PyFormat.BINARY)
            found = found.upgrade(values, PyFormat.BINARY)
            assert isinstance(found, dumper)
            dumped.append((found.oid, bytes(found.dump(values) or b"")))
        assert dumped[0] == dumped[1]
        (back,) = conn.execute("SELECT %b", (values,)).fetchone() or (None,)
        assert back == values
