"""A page write's rows as the write script takes them (``scripts.WRITE``): cut
into runs and each run packed into three strings; and the per-route counts a
write moves. A bulk load's hot loop, worked a run at a time: C-level getters
mapped over it, one encode.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from json.encoder import encode_basestring_ascii
from operator import attrgetter, itemgetter

from ...sitemaps import RUN
from .. import layout
from ..records import Change, Stored

# A change's fields, read by C-level getters mapped over a run (a Python
# loop touching each costs a bulk load about a microsecond a row more).
_part = itemgetter(1)
_new = itemgetter(3)
_route = attrgetter("row.route")
_declared = attrgetter("row.declared")
_fragment = attrgetter("row.fragment")


def runs(
    changes: Sequence[Change], stored: Mapping[str, Stored]
) -> Iterator[tuple[int | None, Sequence[Change]]]:
    """A plan's rows in the write script's runs of at most RUN: the updates
    (part ``None``), then the new rows of one part at a time, in the plan's
    order (they take the next seqs in it). An update of the title or
    description alone is left out: its row and fragment stay as stored."""
    if not all(map(_new, changes)):
        updates = [
            change
            for change in changes
            if not change.new
            and not (
                (prior := stored.get(change.path)) is not None
                and layout.retitled(prior.row, change.row)
            )
        ]
        for start in range(0, len(updates), RUN):
            yield None, updates[start : start + RUN]
        changes = [change for change in changes if change.new]
    for part, group in groupby(changes, _part):
        rows = list(group)
        for start in range(0, len(rows), RUN):
            yield part, rows[start : start + RUN]


def packed(rows: Sequence[Change]) -> list[bytes]:
    """A run's arguments to the write script: each path and its row (JSON
    ``[part, lastmod, fingerprint, route, declared]``), each ending in NUL;
    the fragments' lengths, space-separated; the fragments joined (they hold
    NULs themselves). Formatted as text and encoded once a run: JSON of
    ``encode_basestring_ascii`` is ASCII, and UTF-8 encodes a join as the join
    of its pieces' encodings."""
    routes = {route: _json(route) for route in set(map(_route, rows))}
    declared = {value: _json(value) for value in set(map(_declared, rows))}
    texts = [
        f"{path}\0[{number},{row.lastmod},{_json(row.fingerprint)},"
        f"{routes[row.route]},{declared[row.declared]}]"
        for path, number, row, _ in rows
    ]
    fragments = list(map(_fragment, rows))
    return [
        ("\0".join(texts) + "\0").encode(),
        " ".join(map(str, map(len, fragments))).encode(),
        b"".join(fragments),
    ]


def routes_moved(
    changes: Sequence[Change], stored: Mapping[str, Stored]
) -> dict[str, int]:
    """Per-route counts a plan moves: a new row adds to its route, an update
    that changes the route moves it (a moved row keeps its route)."""
    if not stored:  # none stored before: every change adds to its route
        counted: Counter[str | None] = Counter(map(_route, changes))
        return {route: n for route, n in counted.items() if route is not None}
    routes: dict[str, int] = {}
    for change in changes:
        prior = stored.get(change.path)
        if prior is not None:
            if prior.row.route == change.row.route:
                continue
            tally(routes, prior.row.route, -1)
        tally(routes, change.row.route, 1)
    return routes


def tally(routes: dict[str, int], route: str | None, delta: int) -> None:
    if route is not None:
        routes[route] = routes.get(route, 0) + delta


def _json(value: str | None) -> str:
    return "null" if value is None else encode_basestring_ascii(value)
