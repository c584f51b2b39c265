"""What the writer has digested and not yet written: the pages to write, those to
remove and the new URLs waiting for admission, kept across store failures.
"""

from __future__ import annotations

from ..reasons import RECORDED
from .digest import Removal, Upsert


class Pending:
    """Digested, not yet written; kept across store failures."""

    __slots__ = ("candidates", "removals", "upserts")

    def __init__(self) -> None:
        self.upserts: dict[str, Upsert] = {}
        self.removals: dict[str, Removal] = {}
        # Pages at paths this process has not written lately, waiting for
        # admission: maybe new URLs, which the caps and the rate admit.
        self.candidates: dict[str, Upsert] = {}

    def __len__(self) -> int:
        return len(self.upserts) + len(self.removals) + len(self.candidates)

    def __bool__(self) -> bool:
        return bool(self.upserts or self.removals or self.candidates)

    def adding(self) -> bool:
        """Whether pages wait to be written (new or changed), removals aside."""
        return bool(self.upserts or self.candidates)

    def upsert(self, upsert: Upsert) -> str | None:
        """Take a page to write: the last one for a path wins, a new URL waits
        for admission. Returns the reason to count now: why it is refused, or
        ``unchanged`` for a page written again as it was (each response seen
        unchanged counts, written or not; a write counts as recorded)."""
        path = upsert.entry.path
        if upsert.stand_in is not None:
            # Another spelling of the URL: it may add the page, never change
            # it or cancel its removal (invariant 19).
            if path in self.upserts or path in self.removals or path in self.candidates:
                return upsert.stand_in
            self.candidates[path] = upsert
            return None
        self.removals.pop(path, None)
        if upsert.known or path in self.upserts:
            self.candidates.pop(path, None)
            self.upserts[path] = upsert
        else:
            self.candidates[path] = upsert
        return None if upsert.noted == RECORDED else upsert.noted

    def recorded(self) -> int:
        """The pages to write that count as recorded once written: not those
        written again as they were, counted as seen (:meth:`upsert`)."""
        return sum(upsert.noted == RECORDED for upsert in self.upserts.values())

    def remove(self, removal: Removal) -> None:
        """Take a page to remove, in place of any write waiting for it."""
        path = removal.path
        self.removals[path] = removal
        self.upserts.pop(path, None)
        self.candidates.pop(path, None)

    def clear(self) -> None:
        self.upserts.clear()
        self.removals.clear()
        self.candidates.clear()

    def drop_oldest(self) -> None:
        pending = self.candidates or self.upserts or self.removals
        del pending[next(iter(pending))]
