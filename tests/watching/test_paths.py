"""The policy's own paths as a bulk import asks them (``Policy.is_own_path``,
``Policy.path_skip``): the paths the documents' table claims, no other."""

from __future__ import annotations

import fnmatch

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitemap_middleware.config import Config
from sitemap_middleware.reasons import Skipped
from sitemap_middleware.watching.policy import Policy

SEGMENTS = st.sampled_from(
    ["", "a", "admin", "login", "blog", "blogs", "drafts", "xyz", "x.pdf", "_x"]
)
PATHS = st.lists(SEGMENTS, max_size=4).map(lambda segments: "/" + "/".join(segments))


OWN = st.sampled_from(
    [
        "/sitemap.xml",
        "/sitemap-1.xml.gz",
        "/sitemap-01.xml.gz",
        "/sitemap.txt",
        "/robots.txt",
        "/site-map",
        "/llms.txt",
        "/sitemap",
        "/s",
        "/",
    ]
)


@given(
    st.one_of(OWN, PATHS),
    st.sampled_from([{}, {"html_sitemap": "/site-map"}, {"html_sitemap": "/s"}]),
)
def test_an_own_path_is_the_one_the_documents_claim(
    path: str, options: dict[str, str]
) -> None:
    config = Config.from_mapping(
        {"base_url": "https://www.example.com", "store": "memory://", **options}
    )
    policy = Policy(config)
    claimed = config.documents.claim(path) is not None
    assert policy.is_own_path(path) == claimed
    assert (policy.path_skip(path) == Skipped.OWN_ENDPOINT) == claimed


# Pieces of patterns and paths: letters that share a first character ("/pages",
# "/password"), the greatest character (where a range of prefixes ends), globs.
_PIECES = ["/", "p", "pa", "pas", "a", "\U0010ffff", "%", "."]
_PATTERN = st.builds(
    lambda start, rest: start + "".join(rest),
    st.sampled_from(["/", "*/"]),
    st.lists(st.sampled_from([*_PIECES, "*", "?", "/*"]), max_size=5),
)
_PATH = st.lists(st.sampled_from(_PIECES), max_size=6).map(lambda p: "/" + "".join(p))


@settings(max_examples=200)
@given(st.lists(_PATTERN, max_size=5), st.lists(_PATH, min_size=1, max_size=20))
# A glob ending "/*" matches what comes before it, as a glob: "*/" matches "/".
@example(["*//*", "/p?/*"], ["/", "/pa", "/p"])
def test_excludes_match_as_their_globs_say(
    patterns: list[str], paths: list[str]
) -> None:
    """The exclude patterns, however the policy files them (plain paths,
    prefixes by the character after "/" and their range, segment words, a
    regex for the rest), match what fnmatch matches (``*`` matching "/" too;
    ``/x/*`` matching ``/x``), on the request path and on the writer's."""
    config = Config.from_mapping(
        {"base_url": "https://example.com", "store": "memory://", "exclude": patterns}
    )
    policy = Policy(config)
    for path in paths:
        expected = any(
            fnmatch.fnmatchcase(path, pattern)
            or (pattern.endswith("/*") and fnmatch.fnmatchcase(path, pattern[:-2]))
            for pattern in config.exclude  # the defaults with them
        )
        assert policy._excluded.match(path) is expected, (config.exclude, path)
        asked = policy.request_skip("GET", path, "example.com", False, "")
        assert (asked == Skipped.EXCLUDED) is policy._excluded.anchored(path)


@given(
    st.sampled_from([[], ["/*.pdf"]]),
    st.sampled_from([[], ["/blog/*"], ["/blog/*", "/x.pdf"]]),
    PATHS,
)
def test_the_rare_rules_are_asked_when_a_config_has_them(
    exclude: list[str], include: list[str], path: str
) -> None:
    """An exclude pattern that only a regex matches and ``include`` are asked
    on the request path whenever a config has either (the exclude words past
    the first segment are the writer's)."""
    config = Config.from_mapping(
        {
            "base_url": "https://example.com",
            "store": "memory://",
            "exclude": exclude,
            "include": include,
        }
    )
    policy = Policy(config)
    if policy._excluded.anchored(path):
        expected: str | None = Skipped.EXCLUDED
    elif include and not policy._included.match(path):
        expected = Skipped.NOT_INCLUDED
    else:
        expected = None
    asked = policy.request_skip("GET", path, "example.com", False, "")
    assert asked == expected, (exclude, include, path)
