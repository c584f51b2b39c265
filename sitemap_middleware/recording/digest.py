"""The digest: one observation and the config to what the store must do, pure.

An observation becomes an :class:`Upsert` (a validated entry), a
:class:`Removal`, an :class:`Unchanged` (nothing to write) or a counted
:class:`Skip`. Every entry is checked here against what a sitemap may hold, so
that a bad value from a page is a skip, never an error in a store's upsert
(invariant 18).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ..config import Config
from ..model import UNDATED, Entry
from ..reasons import RECORD, RECORDED, Seen, Skipped
from ..render import fragment
from ..routes import Route
from ..sitemaps import news_language
from ..stores.contract import Article
from ..tracking import untracked
from ..urls import (
    carries_secret,
    filter_query,
    has_dot_segment,
    names_itself,
    normalise_path,
    strip_secrets,
    wsgi_path,
)
from .clusters import Alternates, declared
from .observation import Headers, Observation, location
from .refusal import Rules as Rules
from .refusal import refuse

if TYPE_CHECKING:
    from ..page.head import Head


class Prints(NamedTuple):
    """What this process last wrote of a page: its raw bytes' digest (the same
    bytes again: nothing to read), its content fingerprint and what it shows
    (the same content and head with other noise: nothing to write), and when
    the response written was served, which bounds how long a hit is trusted."""

    raw: str
    content: str
    shown: int = 0
    """A hash of the title and description the page shows (docs/recording.md
    #titles): a change of either alone is written, as the store's title-only
    update (``stores.layout.retitled``), though it moves no lastmod."""
    written: float = 0.0
    """When the response last written to the store was served (the
    observation's ``seen``; 0: never). Another worker may write the page after
    it, so a hit is trusted for ``recheck_interval`` from then only
    (invariant 20)."""


class Story(NamedTuple):
    """A news article as its page says it (the ``news`` key names its page)."""

    article: Article
    """Its published time is the one the page declares, else when it was
    seen (``declared`` false); its title the page's, before the site's affix
    is taken out."""
    declared: bool


class Upsert(NamedTuple):
    """A page to write."""

    entry: Entry
    key: str
    """The recent-pages cache key to remember once it is written."""
    prints: Prints
    route: Route
    known: bool
    """Written by this process lately: no new URL, not subject to admission."""
    stand_in: str | None = None
    """Set when the request's target was another spelling of the URL, to the
    reason counted if the store holds the page already: a stand-in may add a
    page, never change one (``None``: the stored spelling)."""
    story: Story | None = None
    """The page is a news article (``None``: not one, or the ``news`` key is
    not set)."""
    noted: str = RECORDED
    """What the counters and the decisions log say of the write: ``recorded``,
    or ``unchanged`` for the page as this process last wrote it, written
    again because the hit is no longer trusted (the store writes nothing when
    it holds the same, and another worker's version when it does not)."""


class Removal(NamedTuple):
    """A page to take out of the store."""

    path: str
    key: str
    reason: str | None
    """Why a page served to record is removed instead (``noindex``,
    ``canonical_other``, counted as skipped); ``None`` for a plain removal."""


class Written(Protocol):
    """The writer's word on a page it wrote lately, which a hit alone cannot
    give: whether the store still holds it as written."""

    def __call__(self, path: str, alternates: Alternates | None) -> bool:
        """``False`` when a removal waits for ``path``, or when its cluster does
        not hold the ``alternates`` it declares (``None``: not read)."""


class Unchanged(NamedTuple):
    """A page the recent-pages cache already holds as it is, and the store as
    the writer wrote it within ``recheck_interval``: nothing to write."""

    path: str
    key: str
    prints: Prints
    alternates: Alternates | None
    """The alternates declared, when the head was read (same content); ``None``
    when the bytes were the same."""


class Target(NamedTuple):
    """Where an observation lands: the stored spelling of its URL, and what a
    response to the request's spelling of it may do (invariant 19)."""

    path: str
    """The stored spelling: normalised path and kept query."""
    exact: bool
    """The target was exactly ``path``: a removal from it counts."""
    no_change: str | None
    """Why a page served to it may not change the stored one, only add it when
    it is not stored (``seen.other_spelling``, ``seen.query_dropped``);
    ``None`` when the target was ``path`` but for tracking parameters."""


class Skip(NamedTuple):
    """Nothing to do, for a reason counted in ``stats()``."""

    reason: str
    path: str | None = None
    """The stored spelling the decision is about, when the writer noted one
    (the decisions log): never set for a path refused before (a secret, a
    rule of the config)."""


Digest = Upsert | Removal | Unchanged | Skip


def digest(
    observation: Observation,
    config: Config,
    rules: Rules,
    hit: Prints | None,
    written: Written | None = None,
) -> Digest:
    """What ``observation`` asks of the store. ``hit`` is what the recent-pages
    cache holds for its key (``None``: read it as new); ``rules`` gives the
    path rules of the config; ``written`` says whether the store still holds a
    page as the writer wrote it (``None``: it does), so that a hit is
    ``Unchanged`` only then, and otherwise an ``Upsert`` read in full. A hit
    older than ``recheck_interval`` is not trusted either: the page is read
    and written again (:func:`_trusted`)."""
    target = locate(observation, config, rules)
    if isinstance(target, Skip):
        return target
    path, key = target.path, observation.key
    if observation.action != RECORD:
        if not target.exact:
            return Skip(Skipped.NOT_EXACT, path)
        where = location(observation.headers)
        if where is not None and names_itself(
            where, config.base_url, path, observation.route.query
        ):
            # A redirect to the page itself (from http to https, from another
            # host to base_url's): the way to it, not its removal.
            return Skip(Skipped.STATUS, path)
        return Removal(path, key, None)
    body, headers, route = observation.body, observation.headers, observation.route
    raw = _sha1(body)
    stand_in = target.no_change
    if _drops(observation.query, path) and _sets_cookie(headers):
        # A GET that sets a cookie while its query carries a parameter the
        # stored URL drops (a magic link's ?token= or ?sesame=, an OAuth
        # ?code=, a CAS ?ticket=, an add-to-basket ?item=) may answer what
        # that parameter did, such as a signed-in page: the URL without it
        # must not stand for that, however the path was spelt.
        return Skip(Skipped.SET_COOKIE, path)
    if stand_in is not None and carries_secret(observation.query):
        # A credential in the query (a magic link's ?token=, a signed URL's
        # ?signature=) may open what the URL without it never shows (an
        # invoice, a shared file): the answer stands for no public page.
        return Skip(Skipped.SECRET, path)
    if stand_in is not None and hit is not None:
        # Seen by this process: another spelling has nothing to add.
        return Skip(Seen.UNCHANGED if hit.raw == raw else stand_in, path)
    trusted = hit is not None and _trusted(hit, observation.seen, config)
    if (
        hit is not None
        and hit.raw == raw
        and trusted
        and (written is None or written(path, None))
    ):
        return Unchanged(path, key, hit, None)
    # The page readers (html.parser, the head's handlers) load with the first
    # page read, in the writer thread, not with the app.
    from ..page.facts import read_content, read_head
    from ..page.titles import clean, describe, heading

    head, reason = read_head(config, path, route.query, body, headers)
    if reason is not None:
        if not target.exact:
            return Skip(Skipped.NOT_EXACT, path)
        if reason == Skipped.CANONICAL_OTHER and all(
            names_itself(href, config.base_url, path, route.query)
            for href in head.canonicals
        ):
            # The page names itself as a request in the other scheme spells
            # it (url_for(_external=True)): no other page, nor this entry.
            return Skip(reason, path)
        return Removal(path, key, reason)
    facts = read_content(config, path, body, headers, head, observation.seen)
    # As written: the writer takes out the affix the site repeats.
    title = clean(head.title) or heading(body, head.encoding)
    description = describe(head.description)
    shown = hash((title, description))
    prints = Prints(raw, facts.fingerprint, shown, observation.seen)
    alternates = declared(
        head.alternates, config.base_url, path, route.query, config.abroad()
    )
    noted = RECORDED
    if (
        hit is not None
        and hit.content == facts.fingerprint
        and hit.shown == shown
        and facts.lastmod is None
        and (written is None or written(path, alternates))
    ):
        if trusted:
            # Only per-request noise changed (a CSRF token, a nonce).
            return Unchanged(
                path, key, prints._replace(written=hit.written), alternates
            )
        # The page as this process wrote it, long enough ago that another
        # worker may have written another version since (one that changed
        # back, or dropped its alternates): written again, counted unchanged.
        noted = Seen.UNCHANGED
    # The store decides with the stored row (layout.merge): a date the page
    # declares is taken if newer; without one, the time the page was seen
    # becomes its lastmod when its content is seen to change, and a page seen
    # the first time has none. "first-seen" (the releases before) dates a new
    # page with the time it is first seen, and moves it with the fingerprint.
    seen = int(observation.seen)
    served = datetime.fromtimestamp(seen, timezone.utc)
    when: datetime = facts.lastmod or UNDATED
    at: datetime | None = served
    if config.lastmod_source == "first-seen":
        when, at = served, None
    # The route's options (or the defaults) are written into the entry, so the
    # stored fragment is final (pages re-recorded later pick up a new config).
    entry = Entry(
        path,
        when,
        facts.fingerprint,
        route.changefreq,
        route.priority,
        route.template,
        # As declared: the store lists them once the cluster is complete.
        alternates=alternates,
        images=facts.images,
        title=title,
        seen=at,
        # Decided here, in the writer, never on the request path.
        section=config.sections.of(path, route.template),
        description=description,
    )
    if not is_storable(entry, seen):
        return Skip(Skipped.UNSTORABLE, path)
    news = config.news
    story = None
    if news is not None and news.holds(config.sections, path, route.template):
        story = _story(path, head, entry.title, seen)
    known = hit is not None
    return Upsert(entry, key, prints, route, known, stand_in, story, noted)


def _trusted(hit: Prints, seen: float, config: Config) -> bool:
    """Whether ``hit`` may stand for what the store holds for a response
    served at ``seen``: within ``recheck_interval`` of the response this
    process wrote (not before it: a clock set back). Another worker may have
    written the page since (a version this page changed back from, alternates
    it no longer declares) and nothing but a write tells, so no worker leaves
    another's version in the store past its first visit that long after its
    own write (invariant 20, docs/recording.md#several-workers)."""
    return 0.0 <= seen - hit.written < config.recheck_interval


def _story(path: str, head: Head, title: str | None, seen: int) -> Story:
    """The article a news page is: when it was published (as it declares,
    else when seen), its title, language and site name as it says them."""
    from ..page.facts import published_date
    from ..page.titles import clean

    published = published_date(head, seen)
    language = news_language(head.lang) if head.lang else None
    article = Article(
        path,
        seen if published is None else int(published.timestamp()),
        title or "",
        language or "",
        clean(head.site_name) or "",
    )
    return Story(article, published is not None)


def locate(observation: Observation, config: Config, rules: Rules) -> Target | Skip:
    """The stored spelling of the observed URL (path and kept query) and how
    the request spelled it, or why it has none (:func:`refusal.refuse`).

    Only a page can remove itself (invariant 19): a response speaks for the
    stored URL only when the request's target was exactly its spelling, with
    nothing normalised (percent-encoding), stripped (matrix parameters) or
    dropped (query parameters) on the way; a page served to a target with
    dot segments is no page's at all (``bad_path``). The path is compared
    as the app saw it: WSGI's ``PATH_INFO`` is already percent-decoded, ASGI's
    ``raw_path`` is not.
    """
    wire = observation.path if observation.raw else wsgi_path(observation.path)
    path = normalise_path(wire)
    if path is None:
        return Skip(Skipped.BAD_PATH)
    route = observation.route
    query = filter_query(observation.query, route.query)
    removal = observation.action != RECORD
    # Judged as it would be stored: without its credential matrix parameters.
    stored = strip_secrets(path, route.public_ids)
    asked = path if stored is None else stored
    refused = refuse(rules, config.base_url, asked, query, route, removal=removal)
    if refused is not None:
        return Skip(refused.reason)
    assert stored is not None  # else refused: a secret
    spelling = f"{stored}?{query}" if query else stored
    if wire != stored:
        if not removal and has_dot_segment(wire):
            # The app routed the path as sent (a catch-all route answers
            # /docs/../anything): its answer is not the URL's, not even one
            # to add.
            return Skip(Skipped.BAD_PATH)
        return Target(spelling, False, Seen.OTHER_SPELLING)
    if observation.query == query:
        return Target(spelling, True, None)
    # A dropped parameter makes another page (?q=x, ?page=999); tracking
    # parameters alone do not, but an answer to them may print them (a share
    # link built from the request: a client would date the page at will), so
    # they too may add the page, never change it nor remove it.
    return Target(spelling, False, Seen.QUERY_DROPPED)


def is_storable(entry: Entry, now: int) -> bool:
    """Whether every value of ``entry`` fits a sitemap: its ``<url>`` fragment
    renders (the one a store writes, but for the lastmod it settles on)."""
    lastmod = entry.lastmod
    try:
        if lastmod is not None:
            if lastmod.tzinfo is None:
                return False
            now = min(int(lastmod.timestamp()), now)
        fragment(entry, now)
    except (ValueError, OverflowError, OSError):
        return False
    return True


def _drops(query: str, stored: str) -> bool:
    """Whether a request's raw ``query`` holds more than the ``stored``
    spelling keeps, tracking parameters aside (as ``locate`` tells
    ``seen.query_dropped``)."""
    return bool(query) and untracked(query) != stored.partition("?")[2]


def _sets_cookie(headers: Headers) -> bool:
    return any(
        (name if isinstance(name, str) else name.decode("latin-1")).lower()
        == "set-cookie"
        for name, _ in headers
    )


def _sha1(chunks: list[bytes]) -> str:
    """A fast digest of the bytes (SHA-1: hardware-accelerated, not for security)."""
    raw = hashlib.sha1(usedforsecurity=False)
    for chunk in chunks:
        raw.update(chunk)
    return raw.hexdigest()
