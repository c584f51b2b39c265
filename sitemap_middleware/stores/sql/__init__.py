"""What the SQLite and PostgreSQL stores share: what they do alike with the pages
(``pages.py``), one mixin per capability (a table beside the pages, its statements
written once), the dialect that spells them for each database (``dialect.py``),
and ``SideTables``, all of them as one base of each store.
"""

from __future__ import annotations

from .decisions import DecisionsMixin
from .mapped import MapMixin
from .news import NewsMixin
from .pages import PagesMixin
from .pushes import PushesMixin
from .removals import RemovalsMixin
from .shared import SharedMixin
from .visits import VisitsMixin


class SideTables(
    PagesMixin,
    SharedMixin,
    PushesMixin,
    DecisionsMixin,
    RemovalsMixin,
    VisitsMixin,
    NewsMixin,
    MapMixin,
):
    """Every capability the two databases share, and their pages' common
    part, a base of each store: a new capability's mixin is added here, once
    for both."""
