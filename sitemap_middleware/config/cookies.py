"""Which request cookies make a request private (invariant 22): the harmless
ones any visitor carries, and the checks of ``session_cookies`` and
``harmless_cookies``."""

from __future__ import annotations

import re
from typing import Any

from ..errors import ConfigError
from .checks import names, strings

# Request cookies that say nothing about who the visitor is: the analytics and
# consent cookies that tools set on anonymous visitors. Any other cookie makes
# a request private (invariant 22), unless ``session_cookies`` names the ones
# that do. A trailing "*" matches a prefix. Names as the tools set them:
# Google Analytics (_ga, _ga_<container>, _gid, _gat and _gat_<id>, and the
# legacy urchin __utma/__utmb/__utmc/__utmt/__utmz), Google Ads' conversion
# linker (_gcl_au, _gcl_aw, ...), the Meta pixel (_fbp, _fbc), Hotjar (_hjid,
# _hjSession_<id>, ...), Microsoft Clarity (_clck, _clsk), Matomo (_pk_id.*,
# _pk_ses.*, _pk_ref.*), Osano's cookieconsent (cookieconsent_status),
# OneTrust (OptanonConsent, OptanonAlertBoxClosed), Cookiebot (CookieConsent)
# and the IAB TCF v2 consent string (euconsent-v2).
DEFAULT_HARMLESS_COOKIES = (
    "_ga",
    "_ga_*",
    "_gid",
    "_gat*",
    "__utm*",
    "_gcl_*",
    "_fbp",
    "_fbc",
    "_hj*",
    "_clck",
    "_clsk",
    "_pk_*",
    "cookieconsent_status",
    "OptanonConsent",
    "OptanonAlertBoxClosed",
    "CookieConsent",
    "euconsent-v2",
)


def cookies(key: str, value: Any) -> frozenset[str]:
    # "*": a visitor with any cookie at all may see a personal page (the
    # paranoid mode of an app whose cookies are not known).
    if value == "*":
        return frozenset({"*"})
    if isinstance(value, str):
        raise ConfigError(
            f"{key!r} must be a list of cookie names, or '*' for any cookie, "
            f"got {value!r}"
        )
    named = names(key, value)
    for name in sorted(named):
        if not _is_cookie_name(name):
            raise ConfigError(
                f"{key!r} holds cookie names as browsers send them (letters, "
                f"digits and !#$%&'*+-.^_`|~), got {name!r}"
            )
    return named


# A cookie name is an RFC 9110 §5.6.2 token (RFC 6265 §4.1.1).
_is_cookie_name = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+").fullmatch


def harmless(key: str, value: Any) -> tuple[str, ...]:
    named = strings(key, value)
    for name in named:
        if not _is_cookie_name(name) or "*" in name[:-1]:
            raise ConfigError(
                f"{key!r} holds cookie names, or a prefix followed by '*' "
                f"(such as '_ga_*'), got {name!r}"
            )
    return named
