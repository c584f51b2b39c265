"""The policy's own paths as a bulk import asks them (``Policy.is_own_path``,
``Policy.path_skip``): the paths the documents' table claims, no other."""

from __future__ import annotations

from hypothesis import given
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
