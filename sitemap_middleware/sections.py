"""Sections: which kind of page a URL is (posts, products, legal pages), from its
route template or its path, so that each sitemap part holds one kind only and a
search console reports indexing per kind. A leaf: imports nothing of the package.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

DEFAULT = ""
"""The section of a page no configured section names (stored as ``""``, so
that a store written before sections existed reads as all default)."""
DEFAULT_LABEL = "default"
"""How the default section is shown (``stats``, ``list``, the site map page):
no configured section may take this name."""
DEFAULT_HEADING = "Pages"
"""The heading of the default section's pages where people read them (the
site map page, llms.txt), unless ``section_labels`` gives one."""
# A section's name is shown in reports and metrics labels: a short word.
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}\Z")
_GLOB = frozenset("*?[")


def is_glob(pattern: str) -> bool:
    """A path glob (``/blog/*``), else a route template (``/blog/<slug>``,
    ``/blog/{slug}``), which a page's path without a route also matches."""
    return not _GLOB.isdisjoint(pattern)


@dataclass(frozen=True)
class Section:
    """One configured section: the route templates and path globs it holds."""

    name: str
    routes: frozenset[str]
    globs: tuple[str, ...]
    _match: re.Pattern[str] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Globs as fnmatch reads them: ``*`` also matches ``/``.
        if self.globs:
            joined = "|".join(fnmatch.translate(g) for g in self.globs)
            object.__setattr__(self, "_match", re.compile(joined))

    def holds(self, path: str, route: str | None) -> bool:
        """Whether the page at ``path`` (its query left out), served by
        ``route`` (``None``: unknown), is of this section."""
        if route is not None and route in self.routes:
            return True
        if route is None and path in self.routes:
            return True
        return self._match is not None and self._match.match(path) is not None


@dataclass(frozen=True)
class Sections:
    """The configured sections, in config order: the first that holds a page
    is its section; a page none holds is of :data:`DEFAULT`."""

    sections: tuple[Section, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.sections)

    @property
    def names(self) -> tuple[str, ...]:
        """Every section's name, the default's last (``""``)."""
        return (*(s.name for s in self.sections), DEFAULT)

    def of(self, path: str, route: str | None) -> str:
        """The section of the page at ``path`` (a query is ignored), served by
        ``route``: a section's name, or :data:`DEFAULT`."""
        if not self.sections:
            return DEFAULT
        path = path.partition("?")[0]
        for section in self.sections:
            if section.holds(path, route):
                return section.name
        return DEFAULT

    @classmethod
    def of_mapping(cls, mapping: Mapping[str, tuple[str, ...]]) -> Sections:
        """From ``name -> patterns`` (checked by the config)."""
        return cls(
            tuple(
                Section(
                    name,
                    frozenset(p for p in patterns if not is_glob(p)),
                    tuple(p for p in patterns if is_glob(p)),
                )
                for name, patterns in mapping.items()
            )
        )

    def spec(self) -> str:
        """A stable spelling of the sections (a change of it is a change of
        config, invariant 21)."""
        return ";".join(
            f"{s.name}=" + ",".join(sorted(s.routes) + list(s.globs))
            for s in self.sections
        )


def label(name: str) -> str:
    """A section's name as shown: the default's is :data:`DEFAULT_LABEL`."""
    return name or DEFAULT_LABEL


def heading(name: str, labels: Mapping[str, str]) -> str:
    """A section's heading in words, as the site map page and llms.txt show
    it: its label in ``labels`` (keyed by :func:`label`), else a readable
    form of its name ("blog-posts" -> "Blog posts"; the default's
    :data:`DEFAULT_HEADING`)."""
    given = labels.get(label(name))
    if given is not None:
        return given
    if name == DEFAULT:
        return DEFAULT_HEADING
    words = " ".join(name.replace("_", " ").replace("-", " ").split())
    return words[:1].upper() + words[1:]
