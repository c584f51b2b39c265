"""The Django middleware, through Django's test client: the public pages of a
project browsed anonymously are listed, nothing of a signed-in visitor's, the
admin and auth pages never; sync and async views, streaming responses passed
on as they stream; the sitemap served; config errors at start-up, naming the
key; routes from the URLconf (each language's under i18n_patterns, learned
again when a test overrides SITEMAP), @sitemap on function and class-based
views."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from support.helpers import locs, validate

pytestmark = pytest.mark.usefixtures("sitemap_settings")

PUBLIC = ["/", "/about/", "/blog/hello-world/", "/archive/", "/contact/", "/news/"]


def client(**extra: Any) -> Any:
    from django.test import Client

    return Client(HTTP_HOST="www.example.com", **extra)


def read(response: Any) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)
    return bytes(response.content)


def listed() -> list[str]:
    from sitemap_middleware.django import get_sitemap

    sitemap = get_sitemap()
    assert sitemap.flush(5.0)
    found = []
    for part in sitemap.store.parts():
        for entry in sitemap.store.entries(part.number):
            found.append(entry.path)
    return sorted(found)


def browse(visitor: Any, paths: list[str]) -> dict[str, int]:
    codes = {}
    for path in paths:
        response = visitor.get(path, secure=True)
        read(response)
        response.close()
        codes[path] = response.status_code
    return codes


EVERY = [
    *PUBLIC,
    "/stream/",
    "/account/",
    "/members/",
    "/accounts/login/",
    "/admin/",
    "/admin/login/",
    "/old-sitemap.xml",
]


def test_an_anonymous_visitor_lists_the_public_pages_only() -> None:
    codes = browse(client(), EVERY)
    assert codes["/account/"] == codes["/members/"] == 302  # login_required
    assert codes["/admin/login/"] == 200
    assert listed() == sorted([*PUBLIC, "/stream/"])


def test_a_signed_in_visitor_lists_nothing() -> None:
    from django.contrib.auth.models import User

    user, _ = User.objects.get_or_create(username="ada", is_staff=True)
    visitor = client()
    visitor.force_login(user)
    codes = browse(visitor, EVERY)
    assert codes["/account/"] == codes["/members/"] == 200
    assert codes["/admin/"] == 200
    assert listed() == []


def test_a_form_with_a_csrf_token_keeps_the_visitor_anonymous() -> None:
    """Django's CSRF cookie is a harmless one by default: the pages visited
    after the contact form are listed too."""
    visitor = client()
    browse(visitor, ["/contact/"])
    assert "csrftoken" in visitor.cookies
    browse(visitor, ["/about/"])
    assert listed() == ["/about/", "/contact/"]


def test_a_streaming_response_streams_and_is_recorded_once_sent() -> None:
    response = client().get("/stream/", secure=True)
    assert response.streaming  # not buffered into content
    chunks = list(response.streaming_content)
    assert len(chunks) == 5
    response.close()
    assert listed() == ["/stream/"]


def test_a_stream_cut_short_records_nothing() -> None:
    response = client().get("/stream/", secure=True)
    next(iter(response.streaming_content))
    response.close()
    assert listed() == []


def test_async_views_under_the_asgi_handler(sitemap_settings: dict[str, Any]) -> None:
    from django.test import AsyncClient, override_settings

    # Django's async test client sends its own Host.
    hosts = {**sitemap_settings, "allowed_hosts": ["testserver"]}

    async def visit() -> list[int]:
        visitor = AsyncClient()
        codes = []
        for path in ("/news/", "/about/", "/stream/", "/live/"):
            response = await visitor.get(path, secure=True)
            if response.streaming and response.is_async:
                async for _ in response.streaming_content:
                    pass
            elif response.streaming:
                list(response.streaming_content)
            codes.append(response.status_code)
        return codes

    with override_settings(SITEMAP=hosts):
        assert asyncio.run(visit()) == [200, 200, 200, 200]
        assert listed() == ["/about/", "/live/", "/news/", "/stream/"]


def test_an_async_stream_cut_short_records_nothing(
    sitemap_settings: dict[str, Any],
) -> None:
    from django.test import AsyncClient, override_settings

    async def visit() -> None:
        response = await AsyncClient().get("/live/", secure=True)
        assert response.is_async  # streamed, not buffered
        chunks = aiter(response.streaming_content)
        await anext(chunks)
        await chunks.aclose()

    hosts = {**sitemap_settings, "allowed_hosts": ["testserver"]}
    with override_settings(SITEMAP=hosts):
        asyncio.run(visit())
        assert listed() == []


def test_the_sitemap_and_robots_txt_are_served() -> None:
    browse(client(), PUBLIC)
    listed()
    visitor = client()
    index = visitor.get("/sitemap.xml", secure=True)
    assert index.status_code == 200
    assert index["Content-Type"].startswith("application/xml")
    root = validate(index.content)
    assert locs(root) == ["https://www.example.com/sitemap-1.xml.gz"]
    robots = visitor.get("/robots.txt", secure=True)
    assert robots.status_code == 200
    assert b"Sitemap: https://www.example.com/sitemap.xml" in robots.content


def test_routes_come_from_the_urlconf_and_sitemap_works_on_views() -> None:
    import re

    from sitemap_middleware.django import get_sitemap

    browse(client(), ["/blog/hello-world/", "/archive/", "/about/"])
    listed()
    sitemap = get_sitemap()
    table = sitemap.table()
    assert table is not None
    assert "blog/<slug:slug>/" in table.views
    assert {"admin/", "accounts/login/", "old-sitemap.xml"} <= table.framework
    xml = b"".join(
        b"".join(sitemap.store.fragments(part.number)) for part in sitemap.store.parts()
    ).decode()
    urls = dict(re.findall(r"<loc>\x00?([^<]*)</loc>(.*?)</url>", xml, re.S))
    assert "<changefreq>weekly</changefreq>" in urls["/blog/hello-world/"]
    assert "<priority>0.3</priority>" in urls["/archive/"]
    assert "<priority>" not in urls["/about/"]


def test_a_bad_setting_is_a_system_check_error_naming_the_key() -> None:
    from django.core.exceptions import ImproperlyConfigured
    from django.test import override_settings

    from sitemap_middleware.django import SitemapMiddleware
    from sitemap_middleware.django.apps import check_settings

    with override_settings(
        SITEMAP={"base_url": "https://www.example.com", "gzip_level": 12}
    ):
        errors = check_settings()
        assert [error.id for error in errors] == ["sitemap_middleware.E001"]
        assert "gzip_level" in errors[0].msg
        with pytest.raises(ImproperlyConfigured, match="gzip_level"):
            SitemapMiddleware(lambda request: None)


def test_harmless_cookies_given_are_checked_as_given() -> None:
    from django.core.exceptions import ImproperlyConfigured
    from django.test import override_settings

    from sitemap_middleware.django import SitemapMiddleware

    bad = {"base_url": "https://www.example.com", "harmless_cookies": "_ga"}
    with (
        override_settings(SITEMAP=bad),
        pytest.raises(ImproperlyConfigured, match="harmless_cookies"),
    ):
        SitemapMiddleware(lambda request: None)


def test_a_missing_setting_and_a_misplaced_middleware_are_reported() -> None:
    from django.conf import settings
    from django.test import override_settings

    from sitemap_middleware.django.apps import check_settings

    rest = settings.MIDDLEWARE[1:]
    with override_settings(SITEMAP=None, MIDDLEWARE=[*rest, settings.MIDDLEWARE[0]]):
        ids = sorted(error.id for error in check_settings())
    assert ids == ["sitemap_middleware.E001", "sitemap_middleware.W002"]
    assert check_settings() == []


def test_a_route_the_middleware_answers_is_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from django.test import override_settings

    from sitemap_middleware.django import get_sitemap

    caplog.set_level(logging.WARNING, "sitemap_middleware")
    with override_settings(ROOT_URLCONF="django_site.urls_sitemap"):
        get_sitemap().learn()
    warned = [r.getMessage() for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(warned) == 1
    assert "'sitemap.xml'" in warned[0]


def test_routes_keys_name_django_s_patterns(
    sitemap_settings: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    import re

    from django.test import override_settings

    from sitemap_middleware.django import get_sitemap

    routes = {"about/": {"priority": 0.9}, "blog/<slug>/": {"priority": 0.1}}
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    with override_settings(SITEMAP={**sitemap_settings, "routes": routes}):
        browse(client(), ["/about/", "/blog/hello-world/"])
        listed()
        store = get_sitemap().store
        xml = b"".join(b"".join(store.fragments(p.number)) for p in store.parts())
    urls = dict(re.findall(r"<loc>\x00?([^<]*)</loc>(.*?)</url>", xml.decode(), re.S))
    assert "<priority>0.9</priority>" in urls["/about/"]
    assert "<priority>" not in urls["/blog/hello-world/"]
    said = [
        r.getMessage() for r in caplog.records if "matches no route" in r.getMessage()
    ]
    assert said and "'blog/<slug:slug>/'" in said[0]  # did you mean


def test_several_sites_each_list_their_own(tmp_path: Any) -> None:
    """The Host selects the site, as with the other adapters; each site's
    sitemap names its own pages only."""
    from django.test import Client, override_settings

    from sitemap_middleware.django import get_sitemap

    config = {
        "sites": {
            "de": {"base_url": "https://example.de", "hosts": ["example.de"]},
            "fr": {"base_url": "https://example.fr", "hosts": ["example.fr"]},
        },
        "store": f"sqlite:///{tmp_path / 'sites.sqlite3'}",
    }
    with override_settings(SITEMAP=config, ALLOWED_HOSTS=["example.de", "example.fr"]):
        browse(Client(HTTP_HOST="example.de"), ["/about/"])
        browse(Client(HTTP_HOST="example.fr"), ["/news/"])
        sitemap = get_sitemap()
        assert sitemap.flush(5.0)
        found = {}
        for name in ("de", "fr"):
            store = sitemap.site(name).store
            found[name] = sorted(
                e.path for p in store.parts() for e in store.entries(p.number)
            )
        index = Client(HTTP_HOST="example.fr").get("/sitemap.xml", secure=True)
    assert found == {"de": ["/about/"], "fr": ["/news/"]}
    assert b"https://example.fr/sitemap-1.xml.gz" in index.content


# A password reset page of the project's own template: no robots meta tag (the
# admin's has one), framework only by its view and route.
RESET_FORM = (
    "<!doctype html><html><head><title>Reset your password</title></head><body>"
    '<h1>Reset</h1><form method="post">{% csrf_token %}{{ form }}</form></body></html>'
)


def own_reset_form() -> Any:
    """override_settings of the project's templates, RESET_FORM among them."""
    from django.conf import settings
    from django.test import override_settings

    engine = settings.TEMPLATES[0]
    loaders = [
        (
            "django.template.loaders.locmem.Loader",
            {"registration/password_reset_form.html": RESET_FORM},
        ),
        "django.template.loaders.filesystem.Loader",
        "django.template.loaders.app_directories.Loader",
    ]
    options = {**engine["OPTIONS"], "loaders": loaders}
    return override_settings(
        TEMPLATES=[{**engine, "APP_DIRS": False, "OPTIONS": options}]
    )


def team_urlconf(i18n: bool = False) -> Any:
    """A URLconf of the about page and Django's auth views under ``team/``
    (the config's default exclusions take ``/accounts/`` out whatever its
    route), within ``i18n_patterns()`` if ``i18n``."""
    from types import ModuleType

    from django.conf.urls.i18n import i18n_patterns
    from django.urls import include, path
    from django_site import views

    patterns = [
        path("about/", views.about),
        path("team/", include("django.contrib.auth.urls")),
    ]
    if i18n:
        patterns = i18n_patterns(*patterns)
    urls = ModuleType("team_urls")
    urls.urlpatterns = patterns  # type: ignore[attr-defined]
    return urls


def test_a_sitemap_built_again_by_override_settings_learns_the_routes(
    sitemap_settings: dict[str, Any], tmp_path: Any
) -> None:
    """The client's handler loaded its middleware under the first config: the
    sitemap of the second learns the routes without it."""
    from django.test import override_settings

    reset = "/team/password_reset/"
    other = {**sitemap_settings, "store": f"sqlite:///{tmp_path / 'other.sqlite3'}"}
    with own_reset_form(), override_settings(ROOT_URLCONF=team_urlconf()):
        visitor = client()
        browse(visitor, [reset])
        with override_settings(SITEMAP=other):
            codes = browse(visitor, ["/about/", reset])
            assert codes == {"/about/": 200, reset: 200}
            assert listed() == ["/about/"]


def test_under_i18n_patterns_each_language_has_its_routes(
    sitemap_settings: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Each language's prefix is a route of its own (a routes key of the
    French one applies, unwarned), and the auth views are framework pages in
    every language, not only in the one active at start-up."""
    import re

    from django.conf import settings
    from django.test import override_settings

    from sitemap_middleware.django import get_sitemap

    chain = list(settings.MIDDLEWARE)
    sessions = chain.index("django.contrib.sessions.middleware.SessionMiddleware")
    chain.insert(sessions + 1, "django.middleware.locale.LocaleMiddleware")
    languages = [("en", "English"), ("fr", "French")]
    routes = {"fr/about/": {"priority": 0.9}}
    caplog.set_level(logging.WARNING, "sitemap_middleware")
    with (
        own_reset_form(),
        override_settings(
            ROOT_URLCONF=team_urlconf(i18n=True),
            MIDDLEWARE=chain,
            LANGUAGE_CODE="en",
            LANGUAGES=languages,
        ),
        override_settings(SITEMAP={**sitemap_settings, "routes": routes}),
    ):
        pages = ["/en/about/", "/fr/about/"]
        resets = ["/en/team/password_reset/", "/fr/team/password_reset/"]
        codes = browse(client(), [*pages, *resets])
        assert set(codes.values()) == {200}
        assert listed() == pages
        store = get_sitemap().store
        xml = b"".join(b"".join(store.fragments(p.number)) for p in store.parts())
    urls = dict(re.findall(r"<loc>\x00?([^<]*)</loc>(.*?)</url>", xml.decode(), re.S))
    assert "<priority>0.9</priority>" in urls["/fr/about/"]
    assert "<priority>" not in urls["/en/about/"]
    said = [r.getMessage() for r in caplog.records if "no route" in r.getMessage()]
    assert said == []


def test_a_partial_request_is_a_variant_the_full_page_is_listed() -> None:
    """``Vary: HX-Request``: the fragment htmx asks for is skipped (``vary``),
    the page without the header listed; request.META is read as WSGI's
    environ is."""
    from django.http import HttpResponse
    from django.test import RequestFactory

    from sitemap_middleware.django import SitemapMiddleware, get_sitemap

    def view(request: Any) -> Any:
        fragment = "HTTP_HX_REQUEST" in request.META
        response = HttpResponse(
            b"<ul><li>one</li></ul>"
            if fragment
            else b"<!doctype html><title>Posts</title><p>all</p>",
            content_type="text/html",
        )
        response["Vary"] = "Accept-Encoding, HX-Request"
        return response

    middleware = SitemapMiddleware(view)
    factory = RequestFactory(HTTP_HOST="www.example.com")
    read(middleware(factory.get("/posts/", secure=True, HTTP_HX_REQUEST="true")))
    assert listed() == []
    assert get_sitemap().stats()["skipped"] == {"vary": 1}
    read(middleware(factory.get("/posts/", secure=True)))
    assert listed() == ["/posts/"]
