"""Anonymous means what a crawler sees (invariant 22), on both stacks: which cookies
make a request private, when a response varying on cookies is the anonymous
variant, which answers to an anonymous visitor take a page out, the default
excludes, and which images are a page's own. Then two apps shaped like real ones:
a Flask app that reads the session on every request, and a FastAPI app that logs
its authors in with an ``access_token`` cookie.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.requests import Request
from support.helpers import NS, asgi_exchange, asgi_scope, gunzip_once, locs, validate
from support.sites import BASE, HTML, ROUTES, Site, html, stored_entries
from werkzeug.test import EnvironBuilder

from sitemap_middleware import (
    DEFAULT_EXCLUDE,
    DEFAULT_HARMLESS_COOKIES,
    ASGISitemapMiddleware,
    Config,
    ConfigError,
    SitemapMiddleware,
)
from sitemap_middleware.watching.policy import Globs, Policy

Make = Callable[..., Site]


def serve(
    path: str, status: int = 200, body: bytes | None = None, **headers: str
) -> None:
    """Make both apps answer ``path`` (headers: ``_`` for ``-``)."""
    fields: dict[str, str] = {"Content-Type": HTML} if status == 200 else {}
    fields.update({k.replace("_", "-"): v for k, v in headers.items()})
    ROUTES[path] = (status, fields, [html(path) if body is None else body])


# -- which cookies make a request private -------------------------------------------

COOKIES = [
    # (config, Cookie header, recorded)
    ({}, "", True),
    ({}, "_ga=GA1.2.3.4", True),
    ({}, "_ga=GA1.2.3.4; _ga_ABC123=GS1.1.1; _gid=GA1.2.5; _gat_UA_1_2=1", True),
    ({}, "__utma=1.2.3; __utmz=1.2; _gcl_au=1.1.1; _fbp=fb.1.2; _fbc=fb.1.3", True),
    ({}, "_hjSessionUser_123=eyJ9; _clck=abc; _clsk=def; _pk_id.1.1fff=x", True),
    ({}, "cookieconsent_status=dismiss; OptanonConsent=isIABGlobal=false", True),
    (
        {},
        "OptanonAlertBoxClosed=2024; CookieConsent={stamp:'x'}; euconsent-v2=CP",
        True,
    ),
    ({}, "_ga=1;", True),  # an empty pair is no cookie
    ({}, "session=eyJ1c2VyX2lkIjoxfQ.Zx", False),  # Flask, Starlette
    ({}, "access_token=Bearer eyJhbGciOi", False),  # FastAPI's OAuth2 tutorials
    ({}, "remember_token=1|abc", False),  # Flask-Login
    ({}, "_ga=GA1.2.3; sessionid=abc", False),  # one is enough, anywhere
    ({}, "theme=dark", False),  # not known to be harmless
    ({}, "_GA=GA1.2.3", False),  # names are case-sensitive, as browsers send them
    ({}, "justavalue", False),  # a cookie with an empty name
    ({}, "_gaxsession=1", False),  # "_ga" is a name, not a prefix
    ({"harmless_cookies": ["theme", "ab_*"]}, "theme=dark; ab_test=b; _ga=1", True),
    ({"harmless_cookies": ["theme"]}, "theme=dark; csrftoken=x", False),
    # Named session cookies: only those (exact, case-sensitive), as before.
    ({"session_cookies": ["sid"]}, "theme=dark; csrftoken=x", True),
    ({"session_cookies": ["sid"]}, "theme=dark; sid=abc", False),
    ({"session_cookies": ["sid"]}, "SID=abc", True),
    # "*": any cookie at all, harmless or not.
    ({"session_cookies": "*"}, "_ga=GA1.2.3", False),
    ({"session_cookies": "*"}, "", True),
]


@pytest.mark.parametrize(("config", "cookie", "recorded"), COOKIES)
def test_identifying_cookies(
    make: Make, config: dict[str, Any], cookie: str, recorded: bool
) -> None:
    """By default any cookie but the known harmless ones (analytics, consent)
    makes a request private, before the app runs; ``harmless_cookies`` adds to
    them; named ``session_cookies`` keep the old exact rule; "*" any cookie."""
    site = make(config)
    headers = {"Cookie": cookie} if cookie else {}
    assert site.get("/about", headers).status == 200
    assert site.recorded() == (["/about"] if recorded else [])
    assert site.skipped() == ({} if recorded else {"session": 1})


def test_a_private_request_removes_nothing(make: Make) -> None:
    """A request with an identifying cookie is skipped before the app runs: what
    it gets (here a 404 only a signed-in visitor would see) changes nothing."""
    site = make()
    site.get("/about")
    assert site.recorded() == ["/about"]
    serve("/about", 404)
    site.get("/about", {"Cookie": "access_token=x"})
    assert site.recorded() == ["/about"]


def test_a_harmless_name_for_a_session_is_the_sites_own_choice(make: Make) -> None:
    """``harmless_cookies`` must not name a session: a site that does so (here
    its session cookie is called "_pk_session", which a default prefix covers,
    and "prefs", which it declared harmless) has its signed-in pages recorded.
    The rule cannot know better; docs/configuration.md says so."""
    site = make({"harmless_cookies": ["prefs"]})
    site.get("/about", {"Cookie": "_pk_session=alice"})
    site.get("/", {"Cookie": "prefs=alice"})
    assert sorted(site.recorded()) == ["/", "/about"]


# Cookie names as RFC 6265 allows them (tokens), without the defaults' first
# characters too often, so that most are not harmless.
NAMES = st.from_regex(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,12}", fullmatch=True)
HARMLESS = st.one_of(
    st.sampled_from([n for n in DEFAULT_HARMLESS_COOKIES if not n.endswith("*")]),
    st.builds(
        str.__add__,
        st.sampled_from([n[:-1] for n in DEFAULT_HARMLESS_COOKIES if n.endswith("*")]),
        st.from_regex(r"[0-9A-Za-z_.]{0,8}", fullmatch=True),
    ),
)
VALUES = st.from_regex(r"[ -:<-~]{0,16}", fullmatch=True)  # no ";"
SEPARATORS = st.sampled_from(["; ", ";", " ; "])


def is_harmless(name: str) -> bool:
    """The documented rule, written with fnmatch as an independent oracle."""
    return any(fnmatch.fnmatchcase(name, p) for p in DEFAULT_HARMLESS_COOKIES)


@st.composite
def cookie_headers(draw: st.DrawFn) -> tuple[str, bool]:
    """A Cookie header and whether it holds a name that is not harmless."""
    pairs = draw(
        st.lists(st.tuples(st.one_of(HARMLESS, NAMES), VALUES), min_size=1, max_size=5)
    )
    header = draw(SEPARATORS).join(f"{name}={value}" for name, value in pairs)
    return header, not all(is_harmless(name) for name, _ in pairs)


POLICY = Policy(Config.from_mapping(BASE))


# The quick loop draws 100 headers; the slow run the full 500.
@pytest.mark.parametrize("examples", [100, pytest.param(500, marks=pytest.mark.slow)])
def test_property_any_other_cookie_is_private(examples: int) -> None:
    """Any Cookie header with a name that is not harmless is skipped as a
    session; one with harmless names only is not."""

    @settings(max_examples=examples, deadline=None)
    @given(cookie_headers())
    def check(drawn: tuple[str, bool]) -> None:
        header, identifying = drawn
        reason = POLICY.request_skip("GET", "/about", "localhost", False, header)
        assert reason == ("session" if identifying else None)

    check()


def _wsgi_json(environ: Any, start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "application/json")])
    return [b"{}"]


async def _asgi_json(scope: Any, receive: Any, send: Any) -> None:
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"{}"})


@pytest.fixture(scope="module")
def both() -> Iterator[tuple[SitemapMiddleware, ASGISitemapMiddleware]]:
    wsgi = SitemapMiddleware(_wsgi_json, BASE)
    asgi = ASGISitemapMiddleware(_asgi_json, BASE)
    yield wsgi, asgi
    wsgi.close()
    asgi.close()


@settings(max_examples=60, deadline=None)
@given(drawn=cookie_headers())
def test_property_on_both_stacks(
    both: tuple[SitemapMiddleware, ASGISitemapMiddleware], drawn: tuple[str, bool]
) -> None:
    """The same through each middleware's own reading of the request: WSGI's
    ``HTTP_COOKIE``, and ASGI's header lines (one per cookie here)."""
    header, identifying = drawn
    wsgi, asgi = both
    for middleware in both:
        before = dict(middleware.stats()["skipped"])
        if middleware is wsgi:
            environ = EnvironBuilder("/about", headers={"Cookie": header}).get_environ()
            b"".join(wsgi(environ, lambda *args: None))
        else:
            lines = [(b"cookie", pair.strip().encode()) for pair in header.split(";")]
            asgi_exchange(asgi, asgi_scope("/about", [(b"host", b"localhost"), *lines]))
        after = middleware.stats()["skipped"]
        reason = "session" if identifying else "not_html"
        assert after.get(reason, 0) == before.get(reason, 0) + 1, middleware


# -- responses varying on cookies -------------------------------------------------

VARY = [
    # (config, Cookie header, Vary, recorded, reason)
    ({}, "", "Cookie", True, None),  # what Flask adds once the session is read
    ({}, "_ga=GA1.2.3", "Accept-Encoding, Cookie", True, None),
    ({}, "", "Authorization", True, None),  # requests with it are skipped before
    ({}, "", "cookie, authorization", True, None),
    ({}, "", "*", False, "vary"),  # varies on anything: no anonymous variant
    ({}, "", "Accept-Encoding, *", False, "vary"),
    ({}, "session=abc", "Cookie", False, "session"),
    ({"session_cookies": ["sid"]}, "", "Cookie", True, None),
    (
        {"session_cookies": ["sid"]},
        "_ga=1; cookieconsent_status=x",
        "Cookie",
        True,
        None,
    ),
    ({"session_cookies": ["sid"]}, "theme=dark", "Cookie", False, "vary"),
    ({"session_cookies": ["sid"]}, "theme=dark", "Accept-Encoding", True, None),
    ({"session_cookies": "*"}, "", "Cookie", True, None),
]


@pytest.mark.parametrize(("config", "cookie", "vary", "recorded", "reason"), VARY)
def test_vary_cookie_is_the_anonymous_variant(
    make: Make,
    config: dict[str, Any],
    cookie: str,
    vary: str,
    recorded: bool,
    reason: str | None,
) -> None:
    """``Vary: Cookie`` (or ``Authorization``) on the answer to a request
    without an identifying cookie is the variant a crawler gets: recorded.
    With named session cookies, a request carrying another cookie that is not
    harmless may have picked another variant: kept out as ``vary``."""
    site = make(config)
    serve("/page", Vary=vary)
    assert site.get("/page", {"Cookie": cookie} if cookie else {}).status == 200
    assert site.recorded() == (["/page"] if recorded else [])
    assert site.skipped() == ({} if reason is None else {reason: 1})


def test_vary_cookie_with_other_private_markers_still_skips(make: Make) -> None:
    """The anonymous variant is still private when the response says so too."""
    site = make({"session_cookies": ["sid"], "skip_set_cookie": True})
    serve("/a", Vary="Cookie", Set_Cookie="sid=new")
    serve("/b", Vary="Cookie", Cache_Control="private")
    site.get("/a")
    site.get("/b")
    assert site.recorded() == []
    assert site.skipped() == {"set_cookie": 1, "private": 1}


# -- responses that set a cookie ----------------------------------------------------

CSRF = "session=eyJjc3JmX3Rva2VuIjoiYWJjIn0.Zx; HttpOnly; Path=/"
SET_COOKIE = [
    # (config, Cookie header, query, recorded, reason)
    ({}, "", "", True, None),  # a form's CSRF token in a new session
    ({}, "_ga=GA1.2.3; cookieconsent_status=dismiss", "", True, None),
    ({}, "session=abc", "", False, "session"),  # a visitor's own session
    # A parameter the URL drops may pick what the page answers: not from it.
    ({}, "", "page=2", False, "set_cookie"),
    ({}, "", "utm_source=news", True, None),  # tracking parameters pick nothing
    ({}, "", "token=9f8a7c6b5d", False, "set_cookie"),  # a magic link
    ({}, "", "code=4/0AX4&state=xyz", False, "set_cookie"),  # an OAuth callback
    ({}, "", "utm_source=news&auth_key=1", False, "set_cookie"),
    ({"skip_set_cookie": True}, "", "", False, "set_cookie"),  # strict
    ({"skip_set_cookie": True}, "_ga=1", "", False, "set_cookie"),
    ({"skip_set_cookie": False}, "", "", True, None),
    # Named session cookies: another cookie that is not harmless may be what
    # the page answers (a cart, a variant, a session they do not name).
    ({"session_cookies": ["sid"]}, "", "", True, None),
    ({"session_cookies": ["sid"]}, "_ga=1", "", True, None),
    ({"session_cookies": ["sid"]}, "cart=3", "", False, "set_cookie"),
    ({"session_cookies": ["sid"]}, "sid=abc", "", False, "session"),
    ({"session_cookies": "*"}, "", "", True, None),
    ({"session_cookies": "*"}, "_ga=1", "", False, "session"),
]


@pytest.mark.parametrize(
    ("config", "cookie", "query", "recorded", "reason"), SET_COOKIE
)
def test_set_cookie_is_the_page_a_crawler_gets(
    make: Make,
    config: dict[str, Any],
    cookie: str,
    query: str,
    recorded: bool,
    reason: str | None,
) -> None:
    """``Set-Cookie`` on the answer to a request without an identifying cookie
    and without ``Authorization`` is the page a crawler gets (crawlers keep no
    cookies): recorded, unless ``skip_set_cookie``, or the query holds a
    parameter the URL drops (a credential may have signed the visitor in), or
    (named session cookies) another cookie that is not harmless came with the
    request."""
    site = make(config)
    serve("/page", Set_Cookie=CSRF, Vary="Cookie")
    target = f"/page?{query}" if query else "/page"
    assert site.get(target, {"Cookie": cookie} if cookie else {}).status == 200
    assert site.recorded() == (["/page"] if recorded else [])
    assert site.skipped() == ({} if reason is None else {reason: 1})


@pytest.mark.parametrize(
    "headers",
    [
        {"Cache_Control": "private"},
        {"Cache_Control": "no-store"},
        {"X_Robots_Tag": "noindex"},
        {"Vary": "*"},
        {"Content_Disposition": "attachment"},
    ],
)
def test_set_cookie_leaves_the_other_rules_in_force(
    make: Make, headers: dict[str, str]
) -> None:
    """Whichever comes first, the cookie or the header that keeps a page out."""
    site = make()
    serve("/page", Set_Cookie=CSRF, **headers)
    site.get("/page")
    assert site.recorded() == []


def test_set_cookie_on_excluded_secret_and_redirecting_pages(make: Make) -> None:
    """The GETs that set a cookie and are no public page: a login or OAuth
    callback (default excludes), a magic link (a secret segment), an "add to
    cart" link (excluded, and a redirect)."""
    site = make()
    serve("/auth/callback", Set_Cookie=CSRF)
    serve("/magic/eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjoiYWRhIn0.sig", Set_Cookie=CSRF)
    serve("/cart/add/5", 302, Location="/cart", Set_Cookie="cart=5")
    serve("/shop/add", 303, Location="/shop", Set_Cookie="cart=5")
    for path in (
        "/auth/callback?code=4/0AX4&state=xyz",
        "/magic/eyJhbGciOiJIUzI1NiJ9.eyJ1c2VyIjoiYWRhIn0.sig",
        "/cart/add/5",
        "/shop/add",
    ):
        assert site.get(path).status in (200, 302, 303)
    assert site.recorded() == []
    assert site.skipped() == {"excluded": 2, "secret": 1, "status": 1}


def test_a_cookie_set_for_a_dropped_parameter_lists_nothing(make: Make) -> None:
    """A GET that sets a cookie while its query carries a parameter the URL
    drops answers what the parameter did (django-sesame's ?sesame=, a CAS
    ?ticket=): the URL without it is not recorded from that answer; without
    the parameter, or with tracking parameters only, the page is public."""
    site = make()
    serve("/welcome", body=html("Welcome back, ada"), Set_Cookie="session=ada")
    serve("/sso/return", body=html("Hello ada"), Set_Cookie="session=ada")
    site.get("/welcome?sesame=AAAABBBBCCCC")
    site.get("/sso/return?ticket=ST-1234-abcd")
    site.get("/welcom%65?sesame=DDDDEEEEFFFF")  # however the path is spelt
    assert site.recorded() == []
    assert site.skipped() == {"set_cookie": 3}
    serve("/welcome", body=html("Welcome"), Set_Cookie="csrf=x")
    site.get("/welcome?utm_source=news")
    assert site.recorded() == ["/welcome"]


def test_an_ab_assignment_lists_the_variant_a_crawler_got(make: Make) -> None:
    """A page that assigns a variant with a cookie is public at its URL: the
    first anonymous answer is recorded; a visitor who sends the assignment
    back carries a cookie that is not harmless, so is not recorded."""
    site = make()
    serve("/pricing", body=html("Plan B"), Set_Cookie="ab=B; Path=/")
    site.get("/pricing")
    site.get("/pricing", {"Cookie": "ab=B"})
    assert site.recorded() == ["/pricing"]
    assert site.skipped() == {"session": 1}


# -- answers that take a page out -----------------------------------------------------

LOGIN = "/auth/login?next=%2Fmembers"
REDIRECTS = [
    # (status, Location, removed)
    (302, LOGIN, True),
    (303, LOGIN, True),
    (307, LOGIN, True),
    (302, "http://localhost/users/sign_in", True),  # absolute, the site's origin
    (302, "login?next=/docs/members", True),  # relative: /docs/login
    (302, "../account/", True),
    (302, "/_auth", True),  # root-anchored defaults count too
    (302, "/", False),  # outside an include list or not: no login page
    (302, "https://evil.example/login", False),  # another origin
    (302, "//evil.example/auth/login", False),
    (302, "http://localhost:8080/login", False),  # another port, another origin
    (302, "/maintenance", False),  # a passing redirect
    (302, "?page=2", False),
    (302, "/docs/members", False),  # itself
    (307, "/login-tips", False),  # another segment
    (301, "/elsewhere", True),  # moved for good (as before)
    (401, None, True),  # wants credentials now
    (403, None, False),  # a firewall may answer it to a client it blocks
    (429, None, False),  # so may a rate limiter
    (503, None, False),
]


@pytest.mark.parametrize(("status", "location", "removed"), REDIRECTS)
def test_a_page_that_stops_answering_200_leaves(
    make: Make, status: int, location: str | None, removed: bool
) -> None:
    """A temporary redirect removes when it sends the anonymous visitor to a
    path the config never records (a login page); 401 removes; 403 and 429
    never do, since a hostile client could provoke them."""
    site = make()
    path = "/docs/members"
    serve(path)
    site.get(path)
    assert site.recorded() == [path]
    headers = {} if location is None else {"Location": location}
    serve(path, status, b"", **headers)
    assert site.get(path).status == status
    assert site.recorded() == ([] if removed else [path])
    assert site.middleware.stats()["removed"] == int(removed)
    if not removed:
        assert site.skipped() == {"status": 1}


def test_a_redirect_outside_include_is_no_login(make: Make) -> None:
    """Only an excluded target counts: with ``include``, a page redirected home
    (outside it) stays; redirected to the login page, it leaves."""
    site = make({"include": ["/docs/*"]})
    for location, removed in (("/", False), ("/auth/login", True)):
        serve("/docs/members")
        site.get("/docs/members")
        assert site.recorded() == ["/docs/members"]
        serve("/docs/members", 302, b"", Location=location)
        site.get("/docs/members")
        assert site.recorded() == ([] if removed else ["/docs/members"])


@pytest.mark.parametrize(
    "spelling",
    ["/docs/members?x=1", "/docs/x/../members", "/docs/members;jsessionid=1"],
)
def test_only_the_page_itself_redirects_itself_out(make: Make, spelling: str) -> None:
    """Invariant 19 holds for these removals too: another spelling of the URL
    answered with a redirect to the login page removes nothing."""
    site = make()
    serve("/docs/members")
    site.get("/docs/members")
    serve("/docs/members", 302, b"", Location=LOGIN)
    ROUTES[spelling.partition("?")[0]] = ROUTES["/docs/members"]
    assert site.fetch(spelling) == 302
    assert site.recorded() == ["/docs/members"]
    assert site.skipped() == {"not_exact": 1}


# -- default excludes ------------------------------------------------------------------

EXCLUDED = [
    "/admin",
    "/admin/users",
    "/auth/login",
    "/auth/login/",
    "/auth/register",
    "/users/sign_in",
    "/users/sign-up",
    "/users/password/new",
    "/en/account/settings",
    "/de/accounts",
    "/shop/cart",
    "/basket/add/5",
    "/en/wishlist/add/7",
    "/shop/checkout/step-1",
    "/oauth/callback",
    "/logout",
    "/signout",
    "/api/posts",
    "/api",
    "/static/app.css",
    "/_debug",
    "/.well-known/security.txt",
]
RECORDED = [
    "/login-tips",
    "/blogin",
    "/blog/the-admin-guide",
    "/administrators",
    "/docs/api/intro",
    "/author/jane",
    "/cartoons",
    "/wishlists-for-charities",
    "/Admin",  # paths are case-sensitive; an app that folds case serves /admin
]


@pytest.mark.parametrize("path", EXCLUDED + RECORDED)
def test_default_excludes_are_whole_segments_anywhere(make: Make, path: str) -> None:
    """The auth and admin words are excluded as whole segments anywhere in the
    path; api, static, _ and .well-known only at the root."""
    site = make()
    serve(path.rstrip("/") or "/")
    serve(path)
    site.get(path)
    excluded = path in EXCLUDED
    assert site.recorded() == ([] if excluded else [path])
    assert site.skipped() == ({"excluded": 1} if excluded else {})


def test_default_exclude_turns_defaults_off(make: Make) -> None:
    """``default_exclude`` keeps a subset of the defaults (or none); ``exclude``
    adds to what it keeps."""
    for path in ("/admin", "/auth/login", "/api/posts", "/drafts/x"):
        serve(path)
    kept = [p for p in DEFAULT_EXCLUDE if p != "*/admin/*"]
    site = make({"default_exclude": kept, "exclude": ["/drafts/*"]})
    for path in ("/admin", "/auth/login", "/api/posts", "/drafts/x"):
        site.get(path)
    assert site.recorded() == ["/admin"]
    bare = make({"default_exclude": []})
    for path in ("/admin", "/auth/login", "/api/posts", "/drafts/x"):
        bare.get(path)
    assert sorted(bare.recorded()) == [
        "/admin",
        "/api/posts",
        "/auth/login",
        "/drafts/x",
    ]


def test_exclude_takes_the_defaults_segment_form(make: Make) -> None:
    """A pattern of ``exclude`` in the defaults' ``*/word/*`` form excludes
    the segment anywhere, as the defaults do (it was refused); any other
    pattern not starting with '/' still is."""
    paths = ("/drafts", "/en/drafts/x", "/drafts-guide", "/blog/drafting")
    for path in paths:
        serve(path)
    site = make({"exclude": ["*/drafts/*"]})
    for path in paths:
        site.get(path)
    assert sorted(site.recorded()) == ["/blog/drafting", "/drafts-guide"]
    with pytest.raises(ConfigError, match="start with '/'"):
        Config.from_mapping({**BASE, "exclude": ["*drafts"]})


def test_default_exclude_refuses_patterns_of_its_own() -> None:
    with pytest.raises(ConfigError, match="put patterns of your own in 'exclude'"):
        Config.from_mapping({**BASE, "default_exclude": ["/login/*"]})


def test_segment_globs_are_one_search() -> None:
    """Every ``*/word/*`` is one precompiled search; the defaults need no other
    regex; other globs still work as before."""
    globs = Globs(DEFAULT_EXCLUDE)
    assert globs._segments is not None and globs._regex is None
    custom = Globs(["*/a.b/*", "*.php", "/x/*"])
    assert custom.match("/q/a.b") and not custom.match("/q/aXb")
    assert custom.match("/index.php") and custom.match("/x") and custom.match("/x/y")
    assert not custom.match("/a.bc") and not custom.match("/xy")


# -- images ----------------------------------------------------------------------------

CHROME = (
    b"<!doctype html><html><head><title>t</title></head><body>"
    b'<nav><a href="/"><img src="/static/logo.svg"></a></nav>'
)


def images(site: Site) -> dict[str, list[str]]:
    """Each served <loc>'s <image:loc>s (the documents validated)."""
    site.recorded()
    found: dict[str, list[str]] = {}
    index = site.get("/sitemap.xml")
    for part in locs(validate(index.body)):
        root = validate(gunzip_once(site.get(urlsplit(part).path).body))
        for url in root.iterfind("sm:url", NS):
            loc = url.findtext("sm:loc", namespaces=NS)
            found[urlsplit(loc).path] = [
                image.text for image in url.iterfind(".//image:loc", NS)
            ]
    return found


def test_images_are_page_content_only(make: Make) -> None:
    """Images come from <main>, else from the <article> elements; a page with
    neither lists none: the navbar logo is no image of every URL."""
    serve("/main", body=CHROME + b"<main><img src=/m.png></main><img src=/f.png>")
    serve(
        "/articles",
        body=CHROME + b"<article><img src=/a.png></article>"
        b"<aside><img src=/ad.png></aside><article><img src=/b.png></article>",
    )
    serve("/plain", body=CHROME + b"<div><img src=/p.png></div></body></html>")
    site = make()
    for path in ("/main", "/articles", "/plain"):
        site.get(path)
    assert images(site) == {
        "/main": ["http://localhost/m.png"],
        "/articles": ["http://localhost/a.png", "http://localhost/b.png"],
        "/plain": [],
    }


def test_images_off(make: Make) -> None:
    serve("/main", body=CHROME + b"<main><img src=/m.png></main>")
    site = make({"images": False})
    site.get("/main")
    assert images(site) == {"/main": []}


# -- apps shaped like real ones --------------------------------------------------------


def flask_blog(config: dict[str, Any]) -> Any:
    """A Flask blog that reads the session before every request (so Flask adds
    ``Vary: Cookie`` to every response), with a login blueprint under /auth and
    drafts only their author may read."""
    from flask import Blueprint, Flask, g, redirect, request, session, url_for

    app = Flask(__name__)
    app.secret_key = "test"
    state = {"hello": "public", "plans": "draft"}

    @app.before_request
    def load_user() -> None:
        g.user = session.get("user_id")

    @app.after_request
    def vary(response: Any) -> Any:
        # Flask 2.3 and newer add it for every request that read the session;
        # 2.2 left it out while the session was empty. Every Flask version
        # here sends it, as the app this stands for does.
        response.vary.add("Cookie")
        return response

    @app.route("/")
    def index() -> bytes:
        return html("Home")

    @app.route("/posts/<slug>")
    def post(slug: str) -> Any:
        if state.get(slug) == "draft" and g.user is None:
            return redirect(url_for("auth.login", next=request.path))
        return html(f"{slug} {'(edit)' if g.user else ''}")

    auth = Blueprint("auth", __name__, url_prefix="/auth")

    @auth.route("/login", methods=["GET", "POST"])
    def login() -> Any:
        if request.method == "POST":
            session["user_id"] = 1
            return redirect("/")
        return html("Sign in")

    app.register_blueprint(auth)
    app.wsgi_app = SitemapMiddleware(app.wsgi_app, config)  # type: ignore[method-assign]
    app.state = state  # type: ignore[attr-defined]
    return app


@pytest.fixture
def blog() -> Iterator[Any]:
    app = flask_blog(dict(BASE))
    yield app
    app.wsgi_app.close()


def stored(middleware: Any) -> list[str]:
    return sorted(stored_entries(middleware))


def test_flask_session_app(blog: Any) -> None:
    """Anonymous visits are recorded although every response has Vary: Cookie;
    the signed-in author's are not; the login page is excluded under /auth; a
    post that turns into a draft redirects anonymous visitors to the login page
    and leaves the sitemap."""
    middleware = blog.wsgi_app
    visitor = blog.test_client()
    for path in ("/", "/posts/hello", "/posts/plans", "/auth/login"):
        response = visitor.get(path, buffered=True)
        assert response.status_code in (200, 302)
        assert "Cookie" in response.headers.get("Vary", "")
    assert stored(middleware) == ["/", "/posts/hello"]

    author = blog.test_client()
    signed_in = author.post("/auth/login", buffered=True)
    assert "session=" in signed_in.headers.get("Set-Cookie", "")
    for path in ("/", "/posts/plans", "/posts/hello"):
        assert author.get(path, buffered=True).status_code == 200
    assert stored(middleware) == ["/", "/posts/hello"]
    assert middleware.stats()["skipped"]["session"] == 3

    blog.state["hello"] = "draft"
    assert visitor.get("/posts/hello", buffered=True).status_code == 302
    assert stored(middleware) == ["/"]


def fastapi_blog(config: dict[str, Any]) -> Any:
    """A FastAPI blog that logs its authors in with an ``access_token`` cookie
    (an OAuth2 bearer token kept in a cookie), with drafts and a create-post
    form only signed-in authors see, and templates without <main>."""
    fastapi = pytest.importorskip("fastapi")
    from fastapi.responses import HTMLResponse, RedirectResponse

    app = fastapi.FastAPI()
    state = {"hello": "public", "plans": "draft"}

    def page(title: str) -> HTMLResponse:
        body = CHROME + f"<article><h1>{title}</h1><img src=/{title}.png>".encode()
        return HTMLResponse(body + b"</article></body></html>")

    def author(request: Any) -> str | None:
        token = request.cookies.get("access_token", "")
        return "alice" if token == "Bearer alice-token" else None

    @app.post("/auth/token")
    def token() -> Any:
        response = RedirectResponse("/", status_code=303)
        response.set_cookie("access_token", "Bearer alice-token", httponly=True)
        return response

    @app.get("/posts/new")
    def new_post(request: Request) -> Any:
        if author(request) is None:
            return RedirectResponse("/auth/login?next=/posts/new", status_code=302)
        return page("new")

    @app.get("/posts/{slug}")
    def post(slug: str, request: Request) -> Any:
        if state.get(slug) == "draft" and author(request) is None:
            return RedirectResponse(
                str(request.url_for("login")) + f"?next=/posts/{slug}", status_code=302
            )
        return page(slug)

    @app.get("/auth/login")
    def login() -> Any:
        return page("login")

    app.add_middleware(ASGISitemapMiddleware, config=config)
    app.state.posts = state
    return app


def test_fastapi_cookie_login_app() -> None:
    """The author's requests carry ``access_token``: private, so no draft and
    no create-post form is listed; a post made a draft leaves the sitemap (its
    302 goes to the login page, absolute on the site's origin); images are the
    article's, not the logo."""
    from starlette.testclient import TestClient

    from sitemap_middleware.starlette import get_sitemap

    app = fastapi_blog(dict(BASE))
    with TestClient(app, base_url="http://localhost") as client:
        # Set here: older Starlette's TestClient takes no such argument.
        client.follow_redirects = False
        middleware = get_sitemap(app)
        try:
            for path in ("/posts/hello", "/posts/plans", "/posts/new", "/auth/login"):
                assert client.get(path).status_code in (200, 302)
            assert stored(middleware) == ["/posts/hello"]

            client.post("/auth/token")
            assert client.cookies.get("access_token")
            for path in ("/posts/plans", "/posts/new", "/posts/hello"):
                assert client.get(path).status_code == 200
            assert stored(middleware) == ["/posts/hello"]
            assert middleware.stats()["skipped"]["session"] == 3
            sitemap = client.get("/sitemap-1.xml.gz").content
            assert b"/hello.png</image:loc>" in gunzip_once(sitemap)
            assert b"logo" not in gunzip_once(sitemap)

            client.cookies.clear()
            app.state.posts["hello"] = "draft"
            reply = client.get("/posts/hello")
            assert reply.status_code == 302
            assert reply.headers["location"].startswith("http://localhost/auth/login")
            assert stored(middleware) == []
        finally:
            middleware.close()
