"""Config errors: every bad key or value is a ConfigError that says what to fix."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from sitemap_middleware import (
    ASGISitemapMiddleware,
    Config,
    ConfigError,
    SitemapMiddleware,
)
from sitemap_middleware.config import (
    DEFAULT_EXCLUDE,
    DEFAULT_HARMLESS_COOKIES,
    KEYS,
    Lists,
    RouteOptions,
)
from sitemap_middleware.stores.memory import MemoryStore

BASE = {"base_url": "https://www.example.com", "store": "memory://"}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"base_ur": "x"}, "did you mean 'base_url'"),
        ({"exlude": ["/x"]}, "did you mean 'exclude'"),
        ({"colour": 1}, "unknown sitemap config key 'colour'"),
        ({"base_url": "www.example.com"}, "'base_url' must be an absolute http(s) URL"),
        ({"base_url": "/relative"}, "'base_url' must be an absolute"),
        ({"base_url": "ftp://example.com"}, "'base_url' must be an absolute"),
        ({"base_url": 42}, "'base_url' must be an absolute"),
        ({"base_url": "https://example.com/?a=1"}, "no user, query or fragment"),
        ({"base_url": "https://u:p@example.com"}, "no user, query or fragment"),
        ({"base_url": "https://example.com:99999"}, "invalid host or port"),
        ({"priority": 1.5}, "'priority' must be a number from 0.0 to 1.0"),
        ({"priority": -0.1}, "'priority' must be a number from 0.0 to 1.0"),
        ({"priority": "high"}, "'priority' must be a number"),
        ({"priority": True}, "'priority' must be a number"),
        ({"changefreq": "fortnightly"}, "'changefreq' must be one of always, hourly"),
        ({"exclude": "/admin"}, "'exclude' must be a list of strings"),
        ({"exclude": ["admin"]}, "start with '/'"),
        ({"include": [3]}, "'include' must hold non-empty strings"),
        ({"query": "page"}, "'query' must be a list of strings"),
        ({"query": ["page", "token"]}, "'token', which looks like a credential"),
        ({"allowed_hosts": None}, "'allowed_hosts' must be a list"),
        ({"cache_max_age": -1}, "'cache_max_age' must be a whole number"),
        ({"cache_max_age": 1.5}, "'cache_max_age' must be a whole number"),
        ({"robots": True}, "'robots' must be a dict"),
        ({"robots": {"generate": "yes"}}, "'robots.generate' must be true or false"),
        ({"robots": {"line": []}}, "unknown key 'line' in 'robots'"),
        ({"robots": {"lines": ["a\nb"]}}, "single lines"),
        ({"store": "sitemap.db"}, "'store' must be a store URI"),
        ({"gzip_level": 0}, "'gzip_level' must be a whole number from 1 to 9"),
        ({"gzip_level": "6"}, "'gzip_level' must be a whole number from 1 to 9"),
        ({"lastmod_source": "header"}, "'lastmod_source' must be one of 'declared'"),
        ({"fingerprint_ignore": "x"}, "'fingerprint_ignore' must be a list"),
        ({"fingerprint_ignore": ["(unclosed"]}, "is not a regular expression"),
        ({"base_url": "https://example.com/" + "p" * 300}, "at most 256 characters"),
        ({"store": "mongodb://x"}, "unknown store scheme 'mongodb'"),
        ({"store": "memory://?part_size=0"}, "part_size"),
        ({"store": "memory://?part_size=big"}, "'part_size' must be a int"),
        ({"store": "memory://?colour=1"}, "unknown option 'colour'"),
        ({"store": "sqlite://host/x.db"}, "SQLite URIs have an empty host"),
        (
            {"recheck_interval": "soon"},
            "'recheck_interval' must be a number of seconds",
        ),
        ({"stale_after": -1}, "'stale_after' must be a number of seconds >= 0"),
        ({"stale_after": "30d"}, "'stale_after' must be a number of seconds"),
        (
            {"stale_after": 60},
            "'stale_after' (60 s) must be at least 'recheck_interval' (300 s)",
        ),
        (
            {"stale_after": 3600, "recheck_interval": 7200},
            "'stale_after' (3600 s) must be at least 'recheck_interval' (7200 s)",
        ),
        ({"session_cookies": "all"}, "'session_cookies' must be a list of cookie"),
        ({"session_cookies": ["my session"]}, "cookie names as browsers send them"),
        ({"harmless_cookies": "_ga"}, "'harmless_cookies' must be a list"),
        ({"harmless_cookies": ["*_ga"]}, "a prefix followed by '*'"),
        ({"harmless_cookies": ["a b"]}, "a prefix followed by '*'"),
        ({"default_exclude": ["/login/*"]}, "put patterns of your own in 'exclude'"),
        ({"default_exclude": "*/admin/*"}, "'default_exclude' must be a list"),
        ({"images": "no"}, "'images' must be true or false"),
        ({"skip_set_cookie": "yes"}, "'skip_set_cookie' must be true or false"),
        ({"max_urls": -1}, "'max_urls' must be a whole number >= 0, or None"),
        ({"max_urls": "many"}, "'max_urls' must be a whole number"),
        ({"new_urls_per_minute": 1.5}, "'new_urls_per_minute' must be a whole"),
        ({"routes": ["/blog/<slug>"]}, "'routes' must be a dict of route template"),
        ({"routes": {"blog/<slug>": {}}}, "route templates as the app declares"),
        ({"routes": {"/x": "weekly"}}, "routes['/x'] must be a dict of options"),
        (
            {"routes": {"/x": {"prio": 0.5}}},
            "unknown key 'prio' in routes['/x']; did you mean 'priority'?",
        ),
        ({"routes": {"/x": {"priority": 2}}}, "routes['/x'].priority\" must be"),
        ({"routes": {"/x": {"changefreq": "often"}}}, "must be one of always"),
        ({"routes": {"/x": {"exclude": "yes"}}}, "must be true or false"),
        ({"routes": {"/x": {"max_urls": 1.5}}}, "must be a whole number >= 0"),
        ({"routes": {"/x": {"query": "page"}}}, "must be a list of strings"),
        ({"routes": {"/x": {"query": ["sig"]}}}, "looks like a credential"),
        ({"news": ["/news/*"]}, "'news' must be a dict with 'pages'"),
        ({"news": {}}, "'news' names no articles"),
        ({"news": {"page": ["/n/*"]}}, "unknown key 'page' in 'news'; did you mean"),
        ({"news": {"pages": ["news/*"]}}, "'news.pages': 'news/*' must start with"),
        ({"news": {"pages": [""]}}, "'news.pages' must hold non-empty strings"),
        ({"news": {"sections": ["posts"]}}, "names 'posts', which the 'sections'"),
        ({"news": {"pages": ["/n/*"], "name": ""}}, "'news.name' must be a non-empty"),
        ({"news": {"pages": ["/n/*"], "name": "A\nB"}}, "single line"),
        ({"news": {"pages": ["/n/*"], "name": "A\x07B"}}, "must be visible text"),
        ({"news": {"pages": ["/n/*"], "language": "en-GB"}}, "ISO 639 language"),
        ({"news": {"pages": ["/n/*"], "language": "EN"}}, "ISO 639 language"),
        ({"news": {"pages": ["/n/*"], "language": "zh"}}, "'zh-cn' / 'zh-tw'"),
        ({"news": {"pages": ["/n/*"], "language": 1}}, "'news.language' must be"),
    ],
)
@pytest.mark.parametrize("middleware", [SitemapMiddleware, ASGISitemapMiddleware])
def test_bad_config(overrides: dict[str, Any], message: str, middleware: Any) -> None:
    """Each mistake raises ConfigError at construction, naming key and fix."""
    with pytest.raises(ConfigError) as info:
        middleware(lambda *a: None, {**BASE, **overrides})
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_stale_after() -> None:
    """30 days by default; any age from a recheck_interval on."""
    assert Config.from_mapping(BASE).stale_after == 30 * 86_400
    assert Config.from_mapping({**BASE, "stale_after": 300}).stale_after == 300
    config = Config.from_mapping({**BASE, "recheck_interval": 10, "stale_after": 10.5})
    assert config.stale_after == 10.5


def test_every_key_that_decides_listing_is_a_field() -> None:
    """The config digest reads the field of each key the table says lists."""
    fields = {field.name for field in dataclasses.fields(Config)}
    listing = {key.name for key in KEYS.values() if key.lists is not Lists.NO}
    assert listing <= fields
    assert listing >= {"exclude", "include", "query", "routes", "sections"}


def test_base_url_required() -> None:
    with pytest.raises(ConfigError, match="needs 'base_url'"):
        Config.from_mapping({})


def test_config_must_be_a_dict() -> None:
    with pytest.raises(ConfigError, match="must be a dict"):
        Config.from_mapping(["base_url"])  # type: ignore[arg-type]


def test_defaults_and_normalisation() -> None:
    """base_url is normalised; defaults fill the rest; the result is frozen."""
    config = Config.from_mapping(
        {"base_url": "HTTPS://Bücher.Example:443/shop/", "exclude": ["/private/*"]}
    )
    assert config.base_url == "https://xn--bcher-kva.example/shop"
    assert config.allowed_hosts == ("xn--bcher-kva.example",)
    assert config.exclude == (*DEFAULT_EXCLUDE, "/private/*")
    assert config.store == "sqlite:///sitemap.sqlite3"
    assert config.changefreq is None and config.priority is None
    # Any cookie but the harmless ones identifies (the default was ["session"]).
    assert config.routes == {} and config.session_cookies is None
    assert config.harmless_cookies == DEFAULT_HARMLESS_COOKIES
    assert config.default_exclude == DEFAULT_EXCLUDE and config.images is True
    assert config.skip_set_cookie is False
    assert config.max_urls == 1_000_000 and config.new_urls_per_minute == 1000
    with pytest.raises(AttributeError):
        config.base_url = "x"  # type: ignore[misc]


def test_port_and_ipv6_kept() -> None:
    assert Config.from_mapping({"base_url": "http://127.0.0.1:8000"}).base_url == (
        "http://127.0.0.1:8000"
    )
    config = Config.from_mapping({"base_url": "http://[::1]:8000/"})
    assert config.base_url == "http://[::1]:8000"
    assert config.allowed_hosts == ("::1",)


def test_routes_and_limits() -> None:
    """routes become frozen RouteOptions; limits may be None; "*" is any cookie."""
    config = Config.from_mapping(
        {
            **BASE,
            "routes": {
                "/blog/<slug>": {"changefreq": "weekly", "max_urls": 50_000},
                "/search": {"query": ["page"], "exclude": False},
            },
            "max_urls": None,
            "new_urls_per_minute": None,
            "session_cookies": "*",
        }
    )
    assert dict(config.routes) == {
        "/blog/<slug>": RouteOptions(changefreq="weekly", max_urls=50_000),
        "/search": RouteOptions(exclude=False, query=frozenset({"page"})),
    }
    assert config.max_urls is None and config.new_urls_per_minute is None
    assert config.session_cookies == {"*"}
    with pytest.raises(TypeError):
        config.routes["/x"] = RouteOptions()  # type: ignore[index]


@pytest.mark.parametrize(
    "base_url",
    [
        "https://exa mple.com",
        "https://www.example.com/a\x01b",
        "https://www.example.com/a b",
        "https://www.example.com\t/a",
        "https://www.example.com/\x7f",
        "https://www.example.com/<x>",
        'https://www.example.com/"x"',
        "https://www.example.com/{x}",
        "https://www.example.com/a\\b",
        "https://www.exa<mple.com",
        "https://",
        "https:///path",
        "https://:443",
        "https://[x",  # urllib raises ValueError
        "https://[::1",
        "https://[x]",  # bracketed, no address
        "https://www.example.com\uff0fa",  # a host NFKC changes
        "https://www..example.com",
        "https://-x.example.com",
        "https://www.exa_mple.com",
        "https://www.example.com:0",
        "https://www.example.com:http",
        "https://" + "a" * 64 + ".example.com",
        "https://www.example.com/a%00b",  # a control character, encoded
        "https://www.example.com/%FF",  # not UTF-8
    ],
)
def test_base_url_must_be_a_url(base_url: str) -> None:
    """What would make every <loc> unparsable is refused, naming the key."""
    with pytest.raises(ConfigError, match="'base_url'"):
        Config.from_mapping({**BASE, "base_url": base_url})


@pytest.mark.parametrize(
    "base_url",
    [
        "https://u@www.example.com",
        "https://@www.example.com",  # an empty user part is a user part
        "https://www.example.com/?",  # an empty query is a query
        "https://www.example.com/#",
        "https://www.example.com/shop#top",
    ],
)
def test_base_url_holds_no_user_query_or_fragment(base_url: str) -> None:
    with pytest.raises(ConfigError, match="'base_url' must hold no user, query"):
        Config.from_mapping({**BASE, "base_url": base_url})


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("https://www.example.com:443/", "https://www.example.com"),
        ("http://www.example.com:80", "http://www.example.com"),
        ("https://www.example.com:8443/a/", "https://www.example.com:8443/a"),
        ("  https://www.example.com  ", "https://www.example.com"),
        ("https://www.example.com/%7Eshop/", "https://www.example.com/~shop"),
        ("https://www.example.com/a/./b/../c", "https://www.example.com/a/c"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("http://[0:0::1]", "http://[::1]"),
        ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
    ],
)
def test_base_url_canonical_form(given: str, stored: str) -> None:
    assert Config.from_mapping({**BASE, "base_url": given}).base_url == stored


def test_public_ids_route_option() -> None:
    config = Config.from_mapping(
        {**BASE, "routes": {"/orders/<id>": {"public_ids": True}}}
    )
    assert config.routes["/orders/<id>"] == RouteOptions(public_ids=True)
    with pytest.raises(ConfigError, match=r"routes\['/x'\].public_ids\" must be"):
        Config.from_mapping({**BASE, "routes": {"/x": {"public_ids": "yes"}}})


def test_llms_txt_and_section_labels() -> None:
    """llms_txt is off by default, True serves /llms.txt capped at 100 links a
    section, a dict sets its path, sections and cap; section_labels name the
    sections the config defines (and "default"), listing nothing by
    themselves: no key of either is in the re-check's digest."""
    plain = Config.from_mapping(BASE)
    assert (plain.llms_txt, dict(plain.section_labels)) == (None, {})
    on = Config.from_mapping({**BASE, "llms_txt": True})
    assert (on.llms_txt, on.llms_txt_sections, on.llms_txt_max_links) == (
        "/llms.txt",
        None,
        100,
    )
    assert "/llms.txt" in on.documents.gate
    config = Config.from_mapping(
        {
            **BASE,
            "sections": {"posts": ["/blog/<slug>"]},
            "section_labels": {"posts": " From the blog ", "default": "Pages"},
            "llms_txt": {"path": "/ai.txt", "sections": ["posts"], "max_links": None},
        }
    )
    assert dict(config.section_labels) == {"posts": "From the blog", "default": "Pages"}
    assert (config.llms_txt, config.llms_txt_sections) == ("/ai.txt", ("posts",))
    assert config.llms_txt_max_links is None
    assert KEYS["llms_txt"].lists is Lists.NO
    assert KEYS["section_labels"].lists is Lists.NO
    with pytest.raises(ConfigError, match="did you mean 'llms_txt'"):
        Config.from_mapping({**BASE, "llm_txt": True})


def test_news_config() -> None:
    """The news key names the articles by route, path glob or section; the
    publication's name and language are optional; it turns on the news
    sitemap's path."""
    assert Config.from_mapping(BASE).news is None
    assert "/sitemap-news.xml" not in Config.from_mapping(BASE).documents.gate
    config = Config.from_mapping(
        {
            **BASE,
            "sections": {"posts": ["/blog/<slug>"]},
            "news": {
                "pages": ["/news/<int:id>", "/20*"],
                "sections": ["posts"],
                "name": " The Daily ",
                "language": "zh-tw",
            },
        }
    )
    news = config.news
    assert news is not None
    assert (news.name, news.language) == ("The Daily", "zh-tw")
    holds = news.holds
    assert holds(config.sections, "/news/3", "/news/<int:id>")
    assert holds(config.sections, "/2026/12/a?x=1", None)
    assert holds(config.sections, "/blog/a", "/blog/<slug>")
    assert not holds(config.sections, "/about", "/about")
    assert not holds(config.sections, "/news/3", "/about")
    assert config.documents.match("/sitemap-news.xml") is not None
    single = Config.from_mapping({**BASE, "news": {"pages": "/news/*"}}).news
    assert single is not None and (single.name, single.language) == (None, None)
    assert Config.from_mapping({**BASE, "news": None}).news is None


@pytest.mark.parametrize(
    ("sections", "message"),
    [
        (["/blog/*"], "'sections' must map a section name to a list of route"),
        ({"Posts": ["/blog/*"]}, "section name 'Posts' must be a short lower-case"),
        ({"a b": ["/x"]}, "section name 'a b' must be a short lower-case word"),
        ({"x" * 41: ["/x"]}, "must be a short lower-case word"),
        ({"default": ["/x"]}, "'default' is the section of pages no section names"),
        ({"posts": []}, "'sections.posts' names no route template or path glob"),
        ({"posts": ["blog/*"]}, "'sections.posts': 'blog/*' must start with '/'"),
        ({"posts": [3]}, "'sections.posts'"),
    ],
)
def test_a_bad_sections_key_says_what_to_fix(sections: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        Config.from_mapping({**BASE, "sections": sections})


def test_sections_decide_a_page_by_route_then_glob_in_config_order() -> None:
    sections = Config.from_mapping(
        {
            **BASE,
            "sections": {
                "posts": ["/blog/<slug>", "/news/*"],
                "legal": "/terms",
                "everything": ["/*"],
            },
        }
    ).sections
    assert sections.names == ("posts", "legal", "everything", "")
    assert sections.of("/blog/hello", "/blog/<slug>") == "posts"
    assert sections.of("/news/2024/a?page=2", None) == "posts"
    assert sections.of("/terms", None) == "legal"
    # A route known and not named: a path equal to a template does not count.
    assert sections.of("/terms", "/<page>") == "everything"
    assert Config.from_mapping(BASE).sections.of("/blog/x", "/blog/<slug>") == ""


@pytest.mark.parametrize(
    ("crawlers", "message"),
    [
        ("yes", "'crawlers' must be false (off), true (the defaults) or a dict"),
        ({"engine": ["google"]}, "unknown key 'engine' in 'crawlers'; did you mean"),
        ({"engines": ["google", "altavista"]}, "names 'altavista', which is not"),
        ({"dns": "no"}, "'crawlers.dns' must be true or false"),
        ({"dns": False}, "every engine needs its IP-range file"),
        ({"ranges": ["googlebot.json"]}, "'crawlers.ranges' must map an engine"),
        (
            {"engines": ["bing"], "ranges": {"google": "x.json"}},
            "'crawlers.ranges' names 'google', which is not one of the engines",
        ),
        ({"ranges": {"google": "/no/such/file.json"}}, "cannot read '/no/such/"),
        ({"ranges": {"google": 3}}, "'crawlers.ranges.google' must be the path"),
        ({"trusted_proxies": ["10.0.0.1/8"]}, "host bits unset"),
        ({"trusted_proxies": ["proxy.local"]}, "'crawlers.trusted_proxies' must"),
        ({"trusted_proxies": 10}, "'crawlers.trusted_proxies' must list"),
        ({"forwarded_header": "X-Real-IP"}, "'X-Forwarded-For' or 'Forwarded'"),
        ({"timeout": 0}, "'crawlers.timeout' must be more than 0 seconds"),
        ({"timeout": "2s"}, "'crawlers.timeout' must be a number of seconds"),
        ({"cache_size": 0}, "'crawlers.cache_size' must be at least 1"),
        ({"resolver": lambda ip: "x"}, "'crawlers.resolver' must have the methods"),
    ],
)
def test_bad_crawlers(crawlers: Any, message: str) -> None:
    """Each mistake in the crawlers key names it and the expected form."""
    with pytest.raises(ConfigError) as info:
        Config.from_mapping({**BASE, "crawlers": crawlers})
    assert message in str(info.value)


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        '{"prefix": []}',
        '{"prefixes": [{"ipv4Prefix": "66.249.64.0/33"}]}',
        '{"prefixes": [{"ipv5Prefix": "66.249.64.0/27"}]}',
        '{"prefixes": ["66.249.64.0/27"]}',
    ],
)
def test_bad_range_file(content: str, tmp_path: Any) -> None:
    """A range file that is not the engines' published form is refused at
    once, naming the key, the file and the form."""
    where = tmp_path / "googlebot.json"
    where.write_text(content)
    with pytest.raises(ConfigError) as info:
        Config.from_mapping({**BASE, "crawlers": {"ranges": {"google": str(where)}}})
    assert "'crawlers.ranges.google'" in str(info.value)
    assert '{"prefixes": [{"ipv4Prefix"' in str(info.value)


def test_crawlers_defaults_and_forms(tmp_path: Any) -> None:
    """On by default with DNS verification of every engine; false turns it
    off; range files are read once into networks."""
    import ipaddress
    import json

    from sitemap_middleware.crawlers import ENGINES

    default = Config.from_mapping(BASE).crawlers
    assert default is not None and default.dns and not default.ranges
    assert [e.name for e in default.engines] == list(ENGINES)
    assert default.trusted_proxies == () and default.resolver is None
    assert Config.from_mapping({**BASE, "crawlers": False}).crawlers is None
    assert Config.from_mapping({**BASE, "crawlers": True}).crawlers == default
    where = tmp_path / "googlebot.json"
    where.write_text(
        json.dumps(
            {
                "creationTime": "2024-01-01T00:00:00",
                "prefixes": [
                    {"ipv4Prefix": "66.249.64.0/27"},
                    {"ipv6Prefix": "2001:4860:4801:10::/64"},
                ],
            }
        )
    )
    options = Config.from_mapping(
        {
            **BASE,
            "crawlers": {
                "engines": ["google"],
                "dns": False,
                "ranges": {"google": where},
                "trusted_proxies": ["10.0.0.0/8", "::1"],
                "forwarded_header": "Forwarded",
            },
        }
    ).crawlers
    assert options is not None and [e.name for e in options.engines] == ["google"]
    assert options.ranges["google"] == (
        ipaddress.ip_network("66.249.64.0/27"),
        ipaddress.ip_network("2001:4860:4801:10::/64"),
    )
    assert options.trusted_proxies == (
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("::1"),
    )
    assert options.forwarded_header == "forwarded"


TWO_SITES = {
    "de": {"base_url": "https://example.de", "hosts": ["example.de", "www.example.de"]},
    "fr": {"base_url": "https://example.fr"},
}

AT = ["EXAMPLE.de"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"sites": []}, "'sites' must be a dict of site name"),
        ({"sites": {"DE": TWO_SITES["de"]}}, "lower-case letters and digits"),
        ({"sites": {"de_1": TWO_SITES["de"]}}, "got 'de_1'"),
        ({"sites": {"de": "https://example.de"}}, "'sites.de' must be a dict"),
        ({"sites": {"de": {"hosts": ["example.de"]}}}, "'sites.de' needs 'base_url'"),
        ({"sites": {"de": {"base_url": "example.de"}}}, "'sites.de.base_url' must be"),
        (
            {"sites": {"de": {"base_url": "https://example.de", "host": []}}},
            "unknown key 'host' in 'sites.de'; did you mean 'hosts'?",
        ),
        (
            {"sites": {"de": {"base_url": "https://example.de", "hosts": "x.de"}}},
            "'sites.de.hosts' must be a list",
        ),
        (
            {"sites": {"de": {"base_url": "https://x.de", "hosts": ["x.de:443"]}}},
            "without port, '*' or a leading dot, got 'x.de:443'",
        ),
        (
            {"sites": {"de": {"base_url": "https://x.de", "hosts": [".x.de"]}}},
            "got '.x.de'",
        ),
        (
            {
                "sites": {
                    **TWO_SITES,
                    "at": {"base_url": "https://x.at", "hosts": ["EXAMPLE.de"]},
                }
            },
            "host 'example.de' is in the hosts of both 'de' and 'at'",
        ),
        (
            {
                "sites": {
                    **TWO_SITES,
                    "at": {"base_url": "https://example.de", "hosts": ["x.at"]},
                }
            },
            "'de' and 'at' in 'sites' have the same base_url 'https://example.de'",
        ),
        (
            {
                "sites": {
                    "de": {"base_url": "https://example.de", "hosts": ["www.x.de"]},
                    "fr": {"base_url": "https://example.fr", "hosts": ["example.de"]},
                }
            },
            "host 'example.de' of the base_url of 'de' is in the hosts of 'fr'",
        ),
        (
            {"sites": TWO_SITES, "allowed_hosts": ["example.de"]},
            "'allowed_hosts' and 'sites' do not go together",
        ),
        (
            {"sites": TWO_SITES, "base_url": "https://example.fr"},
            "is not the base_url of the first of 'sites' ('de'",
        ),
        (
            {"sites": TWO_SITES, "store": MemoryStore()},
            "with several 'sites', 'store' must be a store URI",
        ),
    ],
)
def test_bad_sites(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        Config.from_mapping(config)
    assert message in str(info.value)


def test_sites() -> None:
    """The first site is the default: base_url and allowed_hosts are its own,
    and it keeps the store as named; each other site gets its listing."""
    config = Config.from_mapping(
        {"sites": TWO_SITES, "store": "sqlite:///s.db?part_size=10"}
    )
    assert config.base_url == "https://example.de"
    assert config.allowed_hosts == ("example.de", "www.example.de")
    assert [site.name for site in config.sites] == ["de", "fr"]
    de, fr = config.for_site("de"), config.for_site("fr")
    assert (de.base_url, de.store, de.site) == (
        "https://example.de",
        "sqlite:///s.db?part_size=10",
        "de",
    )
    assert (fr.base_url, fr.allowed_hosts) == ("https://example.fr", ("example.fr",))
    assert fr.store == "sqlite:///s.db?part_size=10&site=fr"
    # base_url may repeat the default site's.
    same = Config.from_mapping({"sites": TWO_SITES, "base_url": "https://EXAMPLE.de/"})
    assert same.base_url == "https://example.de"


def test_each_site_has_its_own_listing(tmp_path: Any) -> None:
    """The store option 'site' names a listing apart from the default one."""
    from sitemap_middleware.stores import open_store

    base = f"sqlite:///{tmp_path}/s.db"
    assert open_store(f"{base}?site=fr").path == f"{tmp_path}/s.site-fr.db"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="option 'site' must be a site name"):
        open_store(f"{base}?site=../x")
