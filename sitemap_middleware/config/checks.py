"""The checks every feature's keys share: lists of strings, flags, numbers, single
lines, regular expressions, and the unknown-key check with its suggestion."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigError

Check = Callable[[str, Any], Any]
"""A key's check: ``check(key, value)`` returns the value as ``Config`` holds it,
or raises a ``ConfigError`` naming ``key``."""


def known(mapping: Mapping[str, Any], keys: Mapping[str, Any], unknown: str) -> None:
    """Refuse a key not in ``keys``, suggesting the closest one for a typo."""
    for key in mapping:
        if key not in keys:
            import difflib  # only a typo needs it

            close = difflib.get_close_matches(str(key), keys, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"{unknown.format(key)}{hint} (valid keys: {', '.join(sorted(keys))})"
            )


def strings(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
        raise ConfigError(f"{key!r} must be a list of strings, got {value!r}")
    for item in value:
        if not isinstance(item, str) or not item:
            raise ConfigError(f"{key!r} must hold non-empty strings, got {item!r}")
    return tuple(value)


def names(key: str, value: Any) -> frozenset[str]:
    return frozenset(strings(key, value))


def patterns(key: str, value: Any) -> tuple[str, ...]:
    """Path globs: ``exclude``, ``include``, the sections a page lists first."""
    checked = strings(key, value)
    for pattern in checked:
        # "*/word/*", the defaults' form, is a whole segment anywhere.
        if not pattern.startswith(("/", "*/")):
            raise ConfigError(
                f"{key!r} patterns are globs on the path and start with '/' (or"
                f" '*/' for a segment anywhere, as '*/admin/*'), got {pattern!r}"
            )
    return checked


def flag(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ConfigError(f"{key!r} must be true or false, got {value!r}")


def number(
    low: float,
    high: float | None = None,
    *,
    whole: bool = False,
    seconds: bool = False,
    off: str = "",
) -> Check:
    """The check of a number from ``low`` to ``high`` (``None``: no bound
    above); ``whole``: an ``int``; ``off``: what ``None`` means, when it is
    allowed. A bool is never a number here, and the value is kept as given."""
    kind = ("a whole number" if whole else "a number") + (
        " of seconds" if seconds else ""
    )
    bounds = f">= {low}" if high is None else f"from {low} to {high}"
    expected = f"{kind} {bounds}" + (f", or None for {off}" if off else "")
    kinds: tuple[type, ...] = (int,) if whole else (int, float)

    def check(key: str, value: Any) -> Any:
        if value is None and off:
            return None
        numeric = isinstance(value, kinds) and not isinstance(value, bool)
        if numeric and low <= value and (high is None or value <= high):
            return value
        raise ConfigError(f"{key!r} must be {expected}, got {value!r}")

    return check


limit = number(0, whole=True, off="no limit")
"""A cap: a whole number >= 0, ``None`` for none."""
seconds = number(0, seconds=True)


def line(key: str, value: Any) -> str:
    if (
        not isinstance(value, str)
        or not value.strip()
        or "\n" in value
        or "\r" in value
    ):
        raise ConfigError(f"{key!r} must be a non-empty single line, got {value!r}")
    return value.strip()


def regexes(key: str, value: Any) -> tuple[re.Pattern[bytes], ...]:
    compiled = []
    for text in strings(key, value):
        try:
            compiled.append(re.compile(text.encode("utf-8")))
        except re.error as exc:
            raise ConfigError(
                f"{key!r}: {text!r} is not a regular expression: {exc}"
            ) from exc
    return tuple(compiled)
