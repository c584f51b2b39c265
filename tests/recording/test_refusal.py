"""One refusal rule (``recording.refusal.refuse``) and its three callers: recording
(``digest.locate``), the re-check of stored pages (``ConfigJudge.refuse``, invariant
21) and the words of ``sitemap-middleware explain`` (``cli.verdict``) agree on every
URL, and every reason the rule gives has words."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from sitemap_middleware.cli.verdict import NOT_REFUSED, WORDS, Refused, refusal, why
from sitemap_middleware.config import Config
from sitemap_middleware.model import Entry
from sitemap_middleware.reasons import RECORD, REMOVE, Seen, Skipped
from sitemap_middleware.recording.digest import Skip, Target, locate
from sitemap_middleware.recording.observation import Observation, Observed
from sitemap_middleware.recording.recheck import ConfigJudge
from sitemap_middleware.recording.refusal import (
    REASONS,
    Query,
    Refusal,
    refusals,
    refuse,
)
from sitemap_middleware.routes import Route, Routes
from sitemap_middleware.urls import normalise_path, strip_secrets
from sitemap_middleware.watching.policy import Policy

BASE_URL = "https://www.example.com"
HTML = [("Content-Type", "text/html; charset=utf-8")]
TOKEN = "9f8a7c6b5d4e3f2a1b0c9d8e"
LONG = "z" * 1100  # a word, however long: two make a URL too long


def observe(path: str, query: str, route: Route, action: str = RECORD) -> Observation:
    """A response to exactly ``path?query`` (the raw wire form)."""
    return Observed(action, path, path, query, True, route, HTML, [], 0, 0.0)


def judge(config: Config, route: Route) -> ConfigJudge:
    """The re-check's judge, the route of every stored page being ``route``."""
    return ConfigJudge(config, Policy(config), lambda template, view: route)


def route_of(
    config: Config,
    *,
    exclude: bool = False,
    framework: bool = False,
    public_ids: bool = False,
    query: Iterable[str] = (),
) -> Route:
    """A route of ``config`` with these options (it keeps ``query`` besides
    the config's own parameters)."""
    kept = Routes(config).unknown.query | frozenset(query)
    return Route("/t/<x>", None, None, exclude, None, kept, public_ids, framework)


CONFIG = Config.from_mapping(
    {
        "base_url": BASE_URL,
        "store": "memory://",
        "exclude": ["/drafts/*"],
        "query": ["page", "sort"],
    }
)
INCLUDED = Config.from_mapping(
    {"base_url": BASE_URL, "store": "memory://", "include": ["/blog/*"]}
)


@pytest.mark.parametrize(
    ("config", "target", "options", "expected"),
    [
        (CONFIG, "/a//b", {}, Refusal(Skipped.BAD_PATH)),
        (CONFIG, f"/invite/{TOKEN}", {}, Refusal(Skipped.SECRET)),
        # Recording's order: a secret in the path before the path rules.
        (CONFIG, f"/admin/{TOKEN}", {}, Refusal(Skipped.SECRET)),
        (CONFIG, f"/invite/{TOKEN}", {"public_ids": True}, None),
        (CONFIG, "/sitemap.xml", {}, Refusal(Skipped.OWN_ENDPOINT)),
        (CONFIG, "/en/admin/x", {}, Refusal(Skipped.EXCLUDED, "*/admin/*")),
        (CONFIG, "/drafts/x", {}, Refusal(Skipped.EXCLUDED, "/drafts/*")),
        # A stored spelling holds no credential matrix parameter: recording
        # stores the path without it (/a), or refuses that (/drafts excluded).
        (CONFIG, "/a;jsessionid=1", {}, Refusal(Skipped.SECRET, "/a")),
        (CONFIG, "/drafts;jsessionid=1", {}, Refusal(Skipped.SECRET, "/drafts")),
        (CONFIG, "/a;v=1", {}, None),
        (INCLUDED, "/about", {}, Refusal(Skipped.NOT_INCLUDED)),
        (INCLUDED, "/blog/x", {}, None),
        # Recording's order: a framework page before an excluded route.
        (
            CONFIG,
            "/docs",
            {"framework": True, "exclude": True},
            Refusal(Skipped.FRAMEWORK, "/t/<x>"),
        ),
        (CONFIG, "/x", {"exclude": True}, Refusal(Skipped.ROUTE_EXCLUDED, "/t/<x>")),
        (CONFIG, "/a?api_key=1&page=2", {}, Refusal(Query.SECRET, "api_key")),
        (CONFIG, "/a?q=x&api_key=1", {}, Refusal(Query.UNKEPT, "q")),
        (CONFIG, "/a?q=x", {"query": ["q"]}, None),
        (CONFIG, "/a?sort=1&page=2", {}, Refusal(Query.FORM)),
        (CONFIG, "/a?page=2&sort=1", {}, None),
        (CONFIG, f"/{LONG}/{LONG}", {}, Refusal(Skipped.TOO_LONG)),
        (CONFIG, f"/{LONG}", {}, None),
    ],
)
def test_the_rule_names_each_reason_and_the_callers_follow_it(
    config: Config, target: str, options: dict[str, Any], expected: Refusal | None
) -> None:
    """Each reason the rule gives, with what it names; recording skips for it
    (or keeps the parameters it may), the re-check refuses for it and explain
    words it, by the same code."""
    route = route_of(config, **options)
    path, _, query = target.partition("?")
    policy = Policy(config)
    assert refuse(policy, config.base_url, path, query, route) == expected
    reason = None if expected is None else expected.reason
    recorded = locate(observe(path, query, route), config, policy)
    if reason is None:
        assert recorded == Target(target, True, None)
    elif reason in (Query.SECRET, Query.UNKEPT, Query.FORM):
        assert isinstance(recorded, Target) and recorded.path != target
    elif expected is not None and expected.detail and reason == Skipped.SECRET:
        # Recording judges the path without its credential matrix parameter,
        # and stores it so (another spelling) if at all.
        stripped = locate(observe(expected.detail, query, route), config, policy)
        if isinstance(stripped, Target):
            assert recorded == Target(stripped.path, False, Seen.OTHER_SPELLING)
        else:
            assert recorded == stripped
    else:
        assert recorded == Skip(reason)
    assert judge(config, route).refuse(Entry(target, route=route.template)) == reason
    words = refusal(config, target, route)
    assert (words is None) == (expected is None)
    if expected is not None:
        assert words and words == why(config, target, route) != NOT_REFUSED
        if expected.detail is not None:
            assert repr(expected.detail) in words


def test_every_reason_has_words() -> None:
    """explain has words for every reason code the rule may give, and for no
    other: a rule added without its words fails here."""
    assert set(WORDS) == REASONS


def test_the_words_are_those_explain_printed() -> None:
    config = Config.from_mapping({"base_url": BASE_URL, "exclude": ["/admin/*"]})
    assert refusal(config, "/admin/x") == (
        "excluded by exclude pattern '*/admin/*' (from default_exclude)"
    )
    assert refusal(config, "/search?q=x") == (
        "the query parameter 'q' is not kept (query: none); "
        "the page is listed as /search if at all"
    )
    assert refusal(config, "/about") is None
    assert why(config, "/about") == NOT_REFUSED


def test_a_removal_is_judged_without_the_route_rules() -> None:
    """A page going away is removed even from an excluded route (it may have
    been recorded before); the re-check refuses the stored page all the same."""
    route = route_of(CONFIG, exclude=True)
    removal = locate(observe("/x", "", route, REMOVE), CONFIG, Policy(CONFIG))
    assert removal == Target("/x", True, None)
    assert locate(observe("/x", "", route), CONFIG, Policy(CONFIG)) == Skip(
        Skipped.ROUTE_EXCLUDED
    )
    assert judge(CONFIG, route).refuse(Entry("/x")) == Skipped.ROUTE_EXCLUDED


# The generated URLs: segments that hit every rule, and query parameters kept,
# not kept, secret and tracking, in any order.
SEGMENTS = st.sampled_from(
    [
        "a",
        "blog",
        "admin",
        "drafts",
        "en",
        "sitemap.xml",
        "robots.txt",
        "x;v=1",
        "x;jsessionid=1",
        "",
        TOKEN,
        "6f1c2a8e-1b2c-4d3e-8f9a-0b1c2d3e4f5a",
        LONG,
        "caf%C3%A9",
        "site-map",
    ]
)
NAMES = st.sampled_from(["page", "sort", "q", "token", "api_key", "utm_source"])
KEEPABLE = st.sampled_from(["page", "sort", "q", "utm_source"])
VALUES = st.sampled_from(["1", "x", "a b", "", "%"])
PATTERNS = st.sampled_from(["/drafts/*", "/en/*", "/a", "/blog*", "/x*"])


@st.composite
def configs(draw: st.DrawFn) -> Config:
    mapping: dict[str, object] = {
        "base_url": draw(st.sampled_from([BASE_URL, f"{BASE_URL}/shop"])),
        "store": "memory://",
        "exclude": draw(st.lists(PATTERNS, max_size=2, unique=True)),
        "query": draw(st.lists(KEEPABLE, max_size=3, unique=True)),
    }
    if draw(st.integers(0, 3)) == 0:  # most sites list every path
        mapping["include"] = draw(st.lists(PATTERNS, min_size=1, max_size=2))
    if draw(st.booleans()):
        mapping["default_exclude"] = []
    if draw(st.booleans()):
        mapping["html_sitemap"] = "/site-map"
    return Config.from_mapping(mapping)


@st.composite
def routes(draw: st.DrawFn, config: Config) -> Route:
    if draw(st.booleans()):
        return Routes(config).unknown
    return route_of(
        config,
        exclude=draw(st.booleans()),
        framework=draw(st.booleans()),
        public_ids=draw(st.booleans()),
        query=draw(st.lists(KEEPABLE, max_size=2)),
    )


@st.composite
def queries(draw: st.DrawFn) -> str:
    pairs = draw(st.lists(st.tuples(NAMES, VALUES), max_size=3))
    return "&".join(f"{name}={quote(value)}" for name, value in pairs)


@settings(max_examples=400)
@given(data=st.data())
def test_recording_the_recheck_and_explain_agree(data: st.DataObject) -> None:
    """For any normalised path, query, route and config: recording skips the
    URL, or stores it under another query, iff the re-check refuses it as
    stored iff explain gives the words of a rule; for the same reason when
    recording skips it (a length aside: recording measures the kept query)."""
    config = data.draw(configs())
    route = data.draw(routes(config))
    path = normalise_path("/" + "/".join(data.draw(st.lists(SEGMENTS, max_size=3))))
    assert path is not None
    query = data.draw(queries())
    target = f"{path}?{query}" if query else path

    recorded = locate(observe(path, query, route), config, Policy(config))
    refused = judge(config, route).refuse(Entry(target, route=route.template))
    words = refusal(config, target, route)
    event(f"refused: {refused}")

    stored = strip_secrets(path, route.public_ids)
    if "//" not in path and stored is not None and stored != path:
        # A credential matrix parameter: recording judges the path without
        # it, and a spelling that holds one is never stored.
        assert refused == Skipped.SECRET
    elif isinstance(recorded, Skip) and recorded.reason != Skipped.TOO_LONG:
        assert refused == recorded.reason
    skipped = isinstance(recorded, Skip) or recorded.path != target
    assert skipped == (refused is not None) == (words is not None)
    found = refuse(Policy(config), config.base_url, path, query, route)
    assert (found is None) == (refused is None)
    if found is not None:
        assert found.reason == refused and refused in REASONS
        assert words == WORDS[found.reason](Refused(found, config, path, route))


# Exclude patterns of every form Globs reads: exact, a prefix, a segment
# anywhere, a glob only fnmatch reads.
BATCH_PATTERNS = st.sampled_from(
    ["/drafts/*", "/en/*", "/a", "/blog*", "*/admin/*", "/x?z*", "*/x.pdf", "/", "/*"]
)


@settings(max_examples=300)
@given(data=st.data())
def test_a_batch_is_refused_as_each_of_its_paths(data: st.DataObject) -> None:
    """refusals() of a batch gives exactly what refuse() gives each path of
    it, in order, whatever the config, the route and the paths."""
    mapping: dict[str, object] = {
        "base_url": data.draw(st.sampled_from([BASE_URL, f"{BASE_URL}/shop"])),
        "store": "memory://",
        "exclude": data.draw(st.lists(BATCH_PATTERNS, max_size=3, unique=True)),
        "query": data.draw(st.lists(KEEPABLE, max_size=2, unique=True)),
    }
    if data.draw(st.integers(0, 3)) == 0:
        mapping["include"] = data.draw(st.lists(PATTERNS, min_size=1, max_size=2))
    if data.draw(st.booleans()):
        mapping["html_sitemap"] = "/site-map"
    config = Config.from_mapping(mapping)
    route = data.draw(routes(config))
    paths = []
    for _ in range(data.draw(st.integers(0, 12))):
        segments = data.draw(st.lists(SEGMENTS, max_size=3))
        path = normalise_path("/" + "/".join(segments))
        assert path is not None
        query = data.draw(queries())
        paths.append(f"{path}?{query}" if query else path)
    policy, base = Policy(config), config.base_url
    expected = []
    for index, target in enumerate(paths):
        path, _, query = target.partition("?")
        found = refuse(policy, base, path, query, route)
        if found is not None:
            expected.append((index, found))
    assert list(refusals(policy, base, paths, route)) == expected


def test_every_response_rule_has_words() -> None:
    """explain names each reason the watcher gives a response (the step the
    hints call the second) in words of its own."""
    from sitemap_middleware.cli.verdict import ANSWERS
    from sitemap_middleware.recording.hints import _STEP2

    assert set(ANSWERS) == _STEP2
