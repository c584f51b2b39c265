"""The policy's path rules as a bulk import asks them (``Policy.path_skip``,
``Globs.match``): the same verdicts as the parts they are made of."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.config import Config
from sitemap_middleware.reasons import Skipped
from sitemap_middleware.watching.policy import Globs, Policy

PATTERNS = st.sampled_from(
    [
        "/drafts/*",
        "/a",
        "/blog*",
        "*/admin/*",
        "*/login/*",
        "/x?z*",
        "*/x.pdf",
        "/",
        "/*",
        "*",
        "/_*",
    ]
)
SEGMENTS = st.sampled_from(
    ["", "a", "admin", "login", "blog", "blogs", "drafts", "xyz", "x.pdf", "_x"]
)
PATHS = st.lists(SEGMENTS, max_size=4).map(lambda segments: "/" + "/".join(segments))


@given(st.lists(PATTERNS, max_size=4), PATHS)
def test_a_glob_matches_as_its_anchored_and_deeper_parts(
    patterns: list[str], path: str
) -> None:
    globs = Globs(patterns)
    assert globs.match(path) == (globs.anchored(path) or globs.deeper(path))


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
