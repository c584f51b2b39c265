"""Where a page falls on the site map: a bulk write's places, made for many
pages at once, are each page's own."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitemap_middleware.places import untitled, untitled_many

_SEGMENT = st.text(
    st.sampled_from(list("aZ09-_+.%2Fé ~?")) | st.characters(), max_size=8
) | st.sampled_from(["page.html", "A.PHP", "x--y", "", "%41", "a+b"])
_PATH = st.builds(
    lambda segments, end: "/" + "/".join(segments) + end,
    st.lists(_SEGMENT, max_size=3),
    st.sampled_from(["", "/", "//", "?q=1", "?a=1&b=2"]),
)


@given(st.lists(_PATH, max_size=8))
def test_untitled_many_is_each_paths_own(paths: list[str]) -> None:
    assert untitled_many(paths) == [untitled(path) for path in paths]


def test_plain_paths_take_the_joined_way() -> None:
    paths = ["/blog/my-first_post", "/a/b+c/", "/x/Ümlaut", "/"]
    assert untitled_many(paths) == ["My first post", "B c", "Ümlaut", "Home"]
