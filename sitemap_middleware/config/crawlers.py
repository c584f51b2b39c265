"""The ``crawlers`` key: which search engines' crawls are kept, and how a client
claiming to be one is verified (its IP ranges, DNS, the proxies before it)."""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from ..crawlers import ENGINES, Engine
from ..errors import ConfigError
from .checks import flag, known, limit, seconds

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# How long one verification of a crawler's address may take (its reverse and
# forward lookups), and how many addresses' verdicts are kept.
CRAWL_TIMEOUT = 2.0
CRAWL_CACHE = 10_000
FORWARDED_HEADERS = ("x-forwarded-for", "forwarded")


@runtime_checkable
class Resolver(Protocol):
    """The DNS lookups that verify a crawler (``crawlers.resolver``; the
    system's resolver by default). Each may block; the writer runs them on
    threads of their own and waits for none."""

    def reverse(self, address: str) -> str:
        """The host name of an IP address (PTR); ``OSError`` when it has none."""

    def forward(self, host: str) -> Iterable[str]:
        """The IP addresses of a host name; ``OSError`` when it has none."""


@dataclass(frozen=True, slots=True)
class CrawlerOptions:
    """The ``crawlers`` key: which search engines' crawls are kept and how a
    client claiming to be one is verified."""

    engines: tuple[Engine, ...] = tuple(ENGINES.values())
    dns: bool = True
    """Verify by reverse DNS and a forward lookup confirming it."""
    ranges: Mapping[str, tuple[Network, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Engine name -> the networks of its published IP-range file."""
    trusted_proxies: tuple[Network, ...] = ()
    """The proxies whose forwarded header names the client."""
    forwarded_header: str = "x-forwarded-for"
    timeout: float = CRAWL_TIMEOUT
    cache_size: int = CRAWL_CACHE
    resolver: Resolver | None = field(default=None, compare=False)
    """``None``: the system's (``socket``)."""


_CRAWLER_KEYS = dict.fromkeys(
    (
        "engines",
        "dns",
        "ranges",
        "trusted_proxies",
        "forwarded_header",
        "timeout",
        "cache_size",
        "resolver",
    )
)


def crawlers(key: str, value: Any) -> CrawlerOptions | None:
    if value is False or value is None:
        return None
    if value is True:
        return CrawlerOptions()
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"{key!r} must be false (off), true (the defaults) or a dict with"
            f" any of {', '.join(_CRAWLER_KEYS)}, got {value!r}"
        )
    known(value, _CRAWLER_KEYS, f"unknown key {{!r}} in {key!r}")
    names = value.get("engines", list(ENGINES))
    if isinstance(names, str) or not isinstance(names, Iterable):
        names = [names]
    engines = []
    for name in names:
        if name not in ENGINES:
            raise ConfigError(
                f"'{key}.engines' names {name!r}, which is not one of"
                f" {', '.join(map(repr, ENGINES))}"
            )
        engines.append(ENGINES[name])
    ranges = value.get("ranges", {})
    if not isinstance(ranges, Mapping):
        raise ConfigError(
            f"'{key}.ranges' must map an engine name to the path of its IP-range"
            " file, such as {'google': 'googlebot.json'}, got {ranges!r}"
        )
    networks = {}
    for name, where in ranges.items():
        if name not in {engine.name for engine in engines}:
            raise ConfigError(
                f"'{key}.ranges' names {name!r}, which is not one of the engines"
                f" of '{key}.engines'"
            )
        networks[name] = _range_file(f"{key}.ranges.{name}", where)
    dns = flag(f"{key}.dns", value.get("dns", True))
    if not dns and set(networks) != {engine.name for engine in engines}:
        missing = sorted({engine.name for engine in engines} - set(networks))
        raise ConfigError(
            f"'{key}.dns' is false, so every engine needs its IP-range file in"
            f" '{key}.ranges' (none for {', '.join(missing)}); give them, or"
            " list fewer 'engines'"
        )
    header = value.get("forwarded_header", "x-forwarded-for")
    if not isinstance(header, str) or header.lower() not in FORWARDED_HEADERS:
        raise ConfigError(
            f"'{key}.forwarded_header' must be 'X-Forwarded-For' or 'Forwarded'"
            f" (the header the trusted proxies set), got {header!r}"
        )
    timeout = seconds(f"{key}.timeout", value.get("timeout", CRAWL_TIMEOUT))
    if timeout <= 0:
        raise ConfigError(f"'{key}.timeout' must be more than 0 seconds")
    size = limit(f"{key}.cache_size", value.get("cache_size", CRAWL_CACHE))
    if not size:
        raise ConfigError(f"'{key}.cache_size' must be at least 1")
    resolver = value.get("resolver")
    if resolver is not None and not isinstance(resolver, Resolver):
        raise ConfigError(
            f"'{key}.resolver' must have the methods reverse(address) -> host"
            f" and forward(host) -> addresses, got {resolver!r}"
        )
    return CrawlerOptions(
        tuple(engines),
        dns,
        MappingProxyType(networks),
        _networks(f"{key}.trusted_proxies", value.get("trusted_proxies", ())),
        header.lower(),
        float(timeout),
        size,
        resolver,
    )


def _networks(key: str, value: Any) -> tuple[Network, ...]:
    if isinstance(value, str):
        value = [value]
    return tuple(
        _network(
            item,
            f"{key!r} must list IP addresses or networks such as '10.0.0.0/8'"
            f" or '::1' (host bits unset), got {item!r}",
        )
        for item in (value if isinstance(value, Iterable) else [value])
    )


def _network(prefix: Any, wrong: str) -> Network:
    """``prefix`` as a network; a ConfigError saying ``wrong`` (and why) if
    it is not one."""
    try:
        if not isinstance(prefix, str):
            raise TypeError("not a string")
        return ipaddress.ip_network(prefix)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{wrong}: {exc}") from exc


def _range_file(key: str, where: Any) -> tuple[Network, ...]:
    """An engine's published IP ranges: ``{"prefixes": [{"ipv4Prefix":
    "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"}]}``."""
    expected = (
        "the path of a JSON file such as Google's googlebot.json:"
        ' {"prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, ...]}'
    )
    if not isinstance(where, str | os.PathLike):
        raise ConfigError(f"{key!r} must be {expected}, got {where!r}")
    try:
        with open(where, encoding="utf-8") as file:
            data = json.load(file)
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{key!r}: cannot read {where!r} ({exc}): {expected}"
        ) from exc
    prefixes = data.get("prefixes") if isinstance(data, dict) else None
    if not isinstance(prefixes, list):
        raise ConfigError(f"{key!r}: {where!r} has no 'prefixes' list: {expected}")
    return tuple(
        _network(
            item.get("ipv4Prefix", item.get("ipv6Prefix"))
            if isinstance(item, dict)
            else None,
            f"{key!r}: {where!r} holds {item!r}, not an ipv4Prefix or"
            f" ipv6Prefix network: {expected}",
        )
        for item in prefixes
    )
