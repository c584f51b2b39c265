"""The URL normaliser (RFC 3986 §6.2.2): canonical, ASCII, idempotent."""

from __future__ import annotations

import base64
import random
import uuid
from urllib.parse import quote, unquote_to_bytes

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitemap_middleware.urls import (
    TRACKING_PARAMETERS,
    TRACKING_PREFIXES,
    canonical_target,
    filter_query,
    is_secret_name,
    is_tracking,
    names_itself,
    normalise_path,
    only_tracking,
    redacted,
    remove_dot_segments,
    strip_secrets,
    wsgi_path,
)

PCHAR = set(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/%"
)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("/", "/"),
        ("", "/"),
        ("/A%7eB", "/A~B"),
        ("/A~B", "/A~B"),
        ("/%61bout", "/about"),
        ("/a%2fb", "/a%2Fb"),  # reserved stays encoded, hex upper-cased
        ("/a/./b/../c", "/a/c"),
        ("/a/b/..", "/a/"),
        ("/../../a", "/a"),
        ("/%2E%2E/a", "/a"),
        ("/caf\xc3\xa9", "/caf%C3%A9"),  # raw UTF-8 bytes as latin-1
        ("/caf€", "/caf%E2%82%AC"),  # beyond latin-1: taken as text, UTF-8
        ("/caf%c3%a9", "/caf%C3%A9"),
        ("/a b", "/a%20b"),
        ("/\"q'/", "/%22q'/"),
        ("/<x>", "/%3Cx%3E"),
        ("/100%", "/100%25"),
        ("/%zz", "/%25zz"),
        ("/a&b", "/a&b"),
        ("/p;jsessionid=1", "/p;jsessionid=1"),
    ],
)
def test_canonical_forms(raw: str, canonical: str) -> None:
    assert normalise_path(raw) == canonical


@pytest.mark.parametrize(
    "raw",
    [
        "/%00",
        "/a%0Bb",
        "/%1F",
        "/%7F",
        "/a\tb",
        "/%C0%AF",
        "/%ED%A0%80",
        "/%FF",
        "/caf\xe9",
    ],
)
def test_rejected(raw: str) -> None:
    """Control characters and bytes that are not UTF-8 are refused."""
    assert normalise_path(raw) is None


def test_wsgi_path_keeps_bytes_apart_from_escapes() -> None:
    """A literal '%' in a decoded PATH_INFO is data, not an escape."""
    assert normalise_path(wsgi_path("/100%")) == "/100%25"
    assert normalise_path(wsgi_path("/caf\xc3\xa9")) == "/caf%C3%A9"
    assert normalise_path(wsgi_path("/a%2Fb")) == "/a%252Fb"


def test_remove_dot_segments_rfc_examples() -> None:
    """RFC 3986 §5.2.4's own examples."""
    assert remove_dot_segments("/a/b/c/./../../g") == "/a/g"
    assert remove_dot_segments("/mid/content=5/../6") == "/mid/6"


def test_filter_query() -> None:
    allowed = frozenset({"page", "lang"})
    assert filter_query("q=x&page=2&lang=de", allowed) == "lang=de&page=2"
    assert filter_query("page=a b&page=1", allowed) == "page=1&page=a%20b"
    assert filter_query("q=1", allowed) == ""
    assert filter_query("page=1", frozenset()) == ""


@given(st.text())
def test_idempotent_ascii_text(raw: str) -> None:
    """Any text: the result is ASCII pchar, and normalising it again changes nothing."""
    path = normalise_path(raw)
    if path is not None:
        assert path.isascii() and set(path) <= PCHAR
        assert path.startswith("/")
        assert normalise_path(path) == path


PLAIN = (
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/"
)


@given(
    st.lists(st.sampled_from([*PLAIN, "/./", "/../", "//", "/."])).map("".join),
    st.randoms(use_true_random=False),
)
def test_plain_paths_take_the_short_way_to_the_same_spelling(
    text: str, rng: random.Random
) -> None:
    """A path of pchar only (no escape) is canonical but for dot segments,
    which the normaliser tells with one match: spelled with some unreserved
    characters escaped, it walks the whole way, and ends at the same path."""
    raw = "/" + text
    escaped = "".join(
        f"%{ord(ch):02x}" if ch.isalnum() and rng.random() < 0.3 else ch for ch in raw
    )
    assert normalise_path(raw) == normalise_path(escaped) == remove_dot_segments(raw)


@given(st.binary())
def test_idempotent_on_wire_bytes(data: bytes) -> None:
    """Any bytes on the wire: ASCII fixed point or a rejection, never an error."""
    path = normalise_path("/" + data.decode("latin-1"))
    if path is not None:
        assert path.isascii()
        assert normalise_path(path) == path
        unquote_to_bytes(path).decode("utf-8")  # valid UTF-8 underneath


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"])))
def test_equivalent_spellings(text: str) -> None:
    """A path sent as raw UTF-8 bytes or percent-encoded gives one canonical form."""
    text = "/" + text.replace("%", "")
    raw = text.encode("utf-8").decode("latin-1")
    encoded = quote(text, safe="/!$&'()*+,;=:@")  # sub-delims are not equivalent
    assert normalise_path(raw) == normalise_path(encoded)


@pytest.mark.parametrize(
    "name",
    ["token", "access_token", "api_key", "apiKey", "X-Amz-Signature", "sig",
     "jsessionid", "PHPSESSID", "reset_code", "password", "auth"],
)  # fmt: skip
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["page", "q", "lang", "monkey", "sort", "category"])
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


SLUG = "/blog/a-very-long-slug-made-of-many-lower-case-words"
UUID = "/product/123e4567-e89b-12d3-a456-426614174000"


@pytest.mark.parametrize(
    ("path", "kept"),
    [
        ("/p;jsessionid=1A2B", "/p"),
        ("/p;color=red;sid=9", "/p;color=red"),
        (SLUG, SLUG),
        ("/invite/0123456789abcdef0123456789abcdef", None),
        ("/verify/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-123", None),
        ("/reset/Zx8Kq2LmN4pR7sT1vW3yA6bC9dE0fGh5", None),
        (UUID, None),  # a random id is a secret unless its route says otherwise
    ],
)  # fmt: skip
def test_strip_secrets(path: str, kept: str | None) -> None:
    assert strip_secrets(path) == kept


def test_public_ids_keep_a_uuid() -> None:
    assert strip_secrets(UUID, public_ids=True) == UUID


def test_secret_query_parameters_dropped_even_if_allowed() -> None:
    assert filter_query("id=5&token=abc", frozenset({"id", "token"})) == "id=5"


@pytest.mark.parametrize(
    ("href", "target"),
    [
        ("/shop/about", "/about"),
        ("/about", None),  # outside the prefix
        ("about", "/blog/about"),
        ("https://www.example.com/shop/x?page=2&utm=1", "/x?page=2"),
        ("HTTPS://WWW.EXAMPLE.COM/shop/%7Ex", "/~x"),
        ("https://evil.example/shop/x", None),
        ("http://www.example.com/shop/x", None),  # other scheme: other origin
        ("https://www.example.com/elsewhere", None),  # outside the prefix
        ("/shop/café", "/caf%C3%A9"),
    ],
)
def test_canonical_target(href: str, target: str | None) -> None:
    base = "https://www.example.com/shop"
    assert canonical_target(href, base, "/blog/post", frozenset({"page"})) == target


# -- hostile hrefs: no value, never an exception (invariant 18) -------------------

HOSTILE_HREFS = [
    "http://[::1",  # an IPv6 literal never closed: urllib raises ValueError
    "http://[x",
    "http://[x]/a",  # closed, but no address
    "https://www.example.com\uff0fshop/a",  # a host NFKC changes ("/")
    "https://www.exa\u2100mple.com/shop/a",  # "a/c" under NFKC
    "//www.example.com\uff03/shop/a",
    "https://www.example.com:99999/shop/a",  # no such port
    "https://www.example.com:0/shop/a",
    "https://www.example.com:x/shop/a",
    "https://user@www.example.com/shop/a",  # a user part names no page
    "https://@www.example.com/shop/a",
    "https://exa mple.com/shop/a",
    "https://" + "a" * 64 + ".com/shop/a",  # a label too long for IDNA
    "https://www..example.com/shop/a",
    "/shop/\ud800",  # a lone surrogate (a WSGI header that was never bytes)
    "/shop/" + "a" * 2100,  # too long for a <loc>
    "/shop/../admin",  # outside the prefix once dot segments are gone
]


@pytest.mark.parametrize("href", HOSTILE_HREFS)
def test_unreadable_hrefs_name_no_page(href: str) -> None:
    base = "https://www.example.com/shop"
    assert canonical_target(href, base, "/a", frozenset({"page"})) is None


@given(st.text(max_size=60), st.sampled_from(["", "http://", "https://", "//"]))
def test_canonical_target_never_raises(text: str, scheme: str) -> None:
    target = canonical_target(scheme + text, "https://www.example.com", "/a", ALL)
    if target is not None:
        assert target.startswith("/") and target.isascii()


# Pieces of a link that change how urllib reads it, and a few plain ones;
# mostly after a "/", as the links read without urllib are.
_LINK_PIECES = ["/", ".", "..", "?", "#", ";", "%2e", "%2F", "a", "\\", ":", "@"]
_LINK_TEXT = st.lists(
    st.sampled_from([*_LINK_PIECES, "=", "&", "é", "~", " ", "\t", "\n"]),
    max_size=10,
).map("".join)
_LINKS = st.one_of(_LINK_TEXT.map("/".__add__), _LINK_TEXT)
_ORIGINS = st.sampled_from(
    [
        "https://www.example.com",
        "https://WWW.example.com",
        "http://www.example.com",
        "https://www.example.com:443",
        "https://www.example.com.evil",
        "//www.example.com",
    ]
)


@settings(max_examples=500)
@given(st.one_of(st.just(""), _ORIGINS), _LINKS)
@example("", "/a/%2e/../b")  # urljoin takes ".." to undo "%2e", not "a"
@example("https://www.example.com", "/a;?q=1")  # an empty ";" part goes
def test_a_plain_link_reads_as_urllib_reads_it(origin: str, rest: str) -> None:
    """A link of this origin that urljoin would leave as written is read
    without it: the same target as the same link that urllib alone reads
    (a tab inside, which urlsplit drops, sends a link to urllib)."""
    base = "https://www.example.com"
    through_urllib = origin + rest[:1] + "\t" + rest[1:]
    assert canonical_target(origin + rest, base, "/a/b", ALL) == canonical_target(
        through_urllib, base, "/a/b", ALL
    )


ALL = frozenset({"page", "q"})


@pytest.mark.parametrize(
    "href",
    [
        "https://www.example.com:443/a",  # the default port
        "HTTPS://WWW.Example.COM/a",  # case
        "https://www.example.com:443/%61",
        "//www.example.com:443/a",
        "/a#section",
    ],
)
def test_equivalent_origins_name_the_same_page(href: str) -> None:
    assert canonical_target(href, "https://www.example.com", "/a", ALL) == "/a"


def test_a_base_url_not_in_canonical_form_names_no_page() -> None:
    # A checked base URL is; canonical_target compares origins canonical.
    assert canonical_target("/a", "https://WWW.example.com", "/b", ALL) is None
    assert canonical_target("/a", "https://www.example.com", "/b", ALL) == "/a"


def test_idna_hosts_compare_encoded() -> None:
    base = "https://xn--bcher-kva.example"
    assert canonical_target("https://Bücher.example:443/a", base, "/b", ALL) == "/a"
    assert canonical_target("http://[::1]:80/a", "http://[::1]", "/b", ALL) == "/a"
    assert canonical_target("http://[0:0::1]/a", "http://[::1]", "/b", ALL) == "/a"
    assert canonical_target("https://www.example.com:8443/a", base, "/b", ALL) is None


def test_an_unreadable_parameter_is_dropped() -> None:
    base = "https://www.example.com/shop"
    assert canonical_target("/shop/a?page=\udc80", base, "/b", ALL) == "/a"


def test_empty_path_is_the_root() -> None:
    base = "https://www.example.com"
    assert canonical_target("https://www.example.com", base, "/b", ALL) == "/"


# -- secret links: random identifiers in a segment ----------------------------------

HEX32 = "9f86d081884c7d659a2feaa0c55ad015"
SECRET_PATHS = [
    "/invite/550e8400-e29b-41d4-a716-446655440000",  # UUID
    "/invite/550E8400-E29B-41D4-A716-446655440000",
    "/share/tok_" + HEX32,  # prefixed hex
    "/share/tok_" + "ab" * 16,  # hex without a digit is still no word
    "/files/" + HEX32 + ".pdf",  # with an extension
    "/files/report-550e8400-e29b-41d4-a716-446655440000.pdf",
    "/d/" + "9f86d081884c7d65",  # 16 hex: 64 bits
    "/keys/sk-live-4eC39HqLyjWDarjtT1zdp7dc",  # base62 with a prefix
    "/gh/ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "/reset/Zx8Kq2LmN4pR7sT1vW3yA6bC9dE0fGh5",  # base62
    "/s/01ARZ3NDEKTSV4RRFFQ69G5FAV",  # ULID (Crockford base32)
    "/s/JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",  # base32
    "/s/mfrggzdfmztwq2lknnwg23tpobyxe43u",  # base32, lower case
    "/s/k5xj2mz4q7wd8r3n",  # base36, 16 characters
    "/t/Pq3-x_Z9aB7kLm2Nw5R-tY8uV1cX",  # base64url broken by "-" and "_"
    "/t/dGhpcyBpcyBhIHNlY3JldA",  # base64url of text
    "/verify/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-123",  # JWT
    "/a/b/c/9F86D081884C7D659A2FEAA0C55AD015/d",  # in any segment
]
PUBLIC_PATHS = [
    "/blog/how-to-bake-bread-in-2024",
    "/blog/a-very-long-slug-made-of-many-lower-case-words",
    "/products/sku-12345",
    "/products/iphone-15-pro-max-256gb",
    "/products/samsunggalaxys24ultra",  # a word with a number
    "/2024/01/15/happy-new-year",
    "/archive/20240115",
    "/u/12345678901234567890",  # numbers are ids, not secrets
    "/v/dQw4w9WgXcQ",  # short ids (11 characters)
    "/p/8f3a9c2",
    "/how-to-x-3f2a9c1d8e7b",  # 12 hex of a slug suffix
    "/wiki/List_of_Boeing_747_operators",
    "/wiki/Python_(programming_language)",
    "/wiki/Internationalization_And_Localization",
    "/HowToBakeBreadAtHome",
    "/XMLHttpRequest-Guide-2024",
    "/The-ABCs-Of-HTML5-And-CSS3",
    "/Harry_Potter_and_the_Deathly_Hallows_Part_2",
    "/docs/v1.2.3/install.html",
    "/caf%C3%A9-au-lait-%C3%A0-paris-2024",
    "/images/photo-2024-01-15-1200x800.jpg",
    "/p;color=red",
]


@pytest.mark.parametrize("path", SECRET_PATHS)
def test_random_identifiers_are_secrets(path: str) -> None:
    assert strip_secrets(path) is None


@pytest.mark.parametrize("path", PUBLIC_PATHS)
def test_slugs_dates_and_short_ids_are_pages(path: str) -> None:
    assert strip_secrets(path) == path
    assert strip_secrets(path, public_ids=True) == path


@pytest.mark.parametrize("path", SECRET_PATHS)
def test_public_ids_list_random_ids_but_never_a_token(path: str) -> None:
    expected = None if "/eyJ" in path else path
    assert strip_secrets(path, public_ids=True) == expected


def test_public_ids_still_strip_credential_parameters() -> None:
    path = "/o/550e8400-e29b-41d4-a716-446655440000;jsessionid=1"
    assert strip_secrets(path, public_ids=True) == path.partition(";")[0]


@given(st.integers(0, 2**64), st.integers(16, 32))
def test_random_bytes_in_hex_uuid_and_base32_are_secrets(seed: int, size: int) -> None:
    """Random ids as apps make them (secrets.token_hex, uuid4, base32 of
    random bytes) are never listed."""
    data = random.Random(seed).randbytes(size)
    assert strip_secrets("/x/" + data.hex()) is None
    assert strip_secrets("/x/" + str(uuid.UUID(bytes=data[:16]))) is None
    assert strip_secrets("/x/" + base64.b32encode(data).decode().rstrip("=")) is None


def token_urlsafe(rng: random.Random, size: int) -> str:
    """What secrets.token_urlsafe(size) returns, from a seeded generator."""
    return base64.urlsafe_b64encode(rng.randbytes(size)).rstrip(b"=").decode()


@pytest.mark.parametrize(("size", "most"), [(16, 70), (32, 4)])
def test_base64url_tokens_are_caught(size: int, most: int) -> None:
    """Of 2,000 tokens like secrets.token_urlsafe(size), at most ``most``
    pass: those of letters only whose capitals fall as words put them
    (2.4 % at 16 bytes, 0.06 % at 32, measured over 20,000)."""
    rng = random.Random(size)
    missed = sum(
        strip_secrets("/x/" + token_urlsafe(rng, size)) is not None for _ in range(2000)
    )
    assert missed <= most


# -- tracking parameters ------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["utm_source", "UTM_Medium", "utm_campaign", "utm_id", "gclid", "dclid",
     "gbraid", "wbraid", "fbclid", "msclkid", "mc_cid", "mc_eid", "_ga", "_gl",
     "yclid", "igshid", "ref_src", "mtm_source", "pk_campaign", "_hsenc"],
)  # fmt: skip
def test_tracking_names(name: str) -> None:
    assert is_tracking(name)


@pytest.mark.parametrize(
    "name", ["page", "q", "lang", "ref", "utm", "source", "id", "sort", "gclidx"]
)
def test_page_names_are_not_tracking(name: str) -> None:
    assert not is_tracking(name)


@pytest.mark.parametrize(
    ("query", "tracking"),
    [
        ("", True),
        ("utm_source=x", True),
        ("utm_source=x&utm_medium=email&gclid=abc", True),
        ("utm%5Fsource=x", True),  # names are compared decoded
        ("fbclid", True),  # no value
        ("&&", True),
        ("page=2", False),
        ("utm_source=x&page=2", False),
        ("=x", False),
        ("lang=de&fbclid=1", False),
    ],
)
def test_only_tracking(query: str, tracking: bool) -> None:
    assert only_tracking(query) is tracking


def test_tracking_list_is_documented_and_frozen() -> None:
    assert isinstance(TRACKING_PARAMETERS, frozenset)
    assert all(name == name.lower() for name in TRACKING_PARAMETERS)
    assert "utm_" in TRACKING_PREFIXES


# -- redacted: a store URI as it may be shown -------------------------------------


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        ("redis://:secret@cache:6379/0", "redis://:***@cache:6379/0"),
        ("rediss://app:secret@cache/0", "rediss://app:***@cache/0"),
        (
            "postgresql://u:pw@db/site?password=x&sslmode=require",
            "postgresql://u:***@db/site?password=***&sslmode=require",
        ),
        ("postgresql://db/site?sslpassword=x", "postgresql://db/site?sslpassword=***"),
        ("memory://?part_size=5;token=abc", "memory://?part_size=5;token=***"),
        ("redis://u:p@ss@cache/0", "redis://u:***@cache/0"),  # "@" in a password
        ("redis://u:pw@cache/0?x=1#pw", "redis://u:***@cache/0?x=1#pw"),
    ],
)
def test_redacted_masks_the_password_and_credential_parameters(
    uri: str, shown: str
) -> None:
    assert redacted(uri) == shown


@pytest.mark.parametrize(
    "uri",
    [
        "redis://cache:6379/0",
        "redis://user@cache:6379/0",  # a user name alone is no secret
        "postgresql://db/site?sslmode=require&connect_timeout=3",
        "memory://",
        "sqlite:///instance/sitemap.sqlite3?part_size=50000",
        "sqlite:////srv/a:b@c.sqlite3",  # a path that looks like user info
        "not a uri at all",
    ],
)
def test_redacted_leaves_a_uri_without_secrets_as_given(uri: str) -> None:
    assert redacted(uri) == uri


@given(
    st.text(
        alphabet=st.characters(
            exclude_categories=["Cc", "Cs", "Zl", "Zp"], exclude_characters="/?#@"
        ),
        min_size=4,
    )
)
def test_redacted_never_shows_a_password(password: str) -> None:
    # Equal: the host kept, and nothing of the password left (a password
    # such as "host" is in the rest of the URI, not shown itself).
    assert redacted(f"redis://user:{password}@host:6379/0") == (
        "redis://user:***@host:6379/0"
    )


_PIECES = st.sampled_from(
    [
        "blog",
        "post-12",
        "a" * 15,
        "b" * 16,
        "how-to-bake-bread-in-2024",
        "0123456789abcdef",
        "9f8a7c6b5d4e3f2a1b0c9d8e",
        "Zx8Kq2LmN4pR7sT1vW3yA6bC9dE0fGh5",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc",
        ";sid=1",
        ";color=red",
        ";",
        "",
        "x",
    ]
)


@given(
    st.lists(st.lists(_PIECES, max_size=3).map("".join), max_size=5),
    st.booleans(),
)
def test_strip_secrets_gives_what_each_segment_in_turn_gives(
    segments: list[str], public_ids: bool
) -> None:
    """Its short cut for a path of short segments without parameters gives
    the verdict of the segment-by-segment reading, for any path (a last
    segment ";", which that reading keeps as it is and checks no further,
    sends a path past the short cut)."""
    path = "/" + "/".join(segments)
    read = strip_secrets(path + "/;", public_ids)
    by_segment = None if read is None else read.removesuffix("/;")
    assert strip_secrets(path, public_ids) == by_segment


def test_an_origin_is_the_same_however_many_hosts_pages_name() -> None:
    # Origins are worked out once each, in a bounded cache: past its bound,
    # every host still gets its own, in any order.
    from urllib.parse import urlsplit

    from sitemap_middleware.urls import canonical_origin

    hosts = [f"Host{i}.Example.COM" for i in range(600)]
    for order in (hosts, hosts[::-1], hosts):
        for host in order:
            origin = canonical_origin(urlsplit(f"HTTPS://{host}:443/a"))
            assert origin == f"https://{host.lower()}"
        assert canonical_origin(urlsplit("https://user@host0.example.com/")) is None
        assert canonical_origin(urlsplit("https://host0.example.com:8443/")) == (
            "https://host0.example.com:8443"
        )


@pytest.mark.parametrize(
    ("url", "itself"),
    [
        ("https://www.example.com/about", True),
        ("http://www.example.com/about", True),  # the other scheme
        ("http://www.example.com:80/about", True),
        ("/about", True),
        ("https://www.example.com/about/", False),  # another path
        ("https://example.com/about", False),  # another host
        ("http://www.example.com:8080/about", False),  # another port
        ("ftp://www.example.com/about", False),
        ("https://www.example.com/about?page=2", True),  # a query not kept: none
    ],
)
def test_names_itself(url: str, itself: bool) -> None:
    """A URL names the page itself on base_url in its scheme or the other
    one (as a request in the other scheme builds it), nothing else."""
    assert names_itself(url, "https://www.example.com", "/about", frozenset()) is itself
