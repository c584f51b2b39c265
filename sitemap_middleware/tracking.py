"""Well-known tracking parameters: query parameters that campaign and ad tools add to
links and that no page answers differently to. A URL with only these on top of its
stored spelling counts as the bare page. Imports nothing of the package.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote_plus

# Any parameter starting with "utm_" (Google Analytics campaign tags: utm_source,
# utm_medium, utm_campaign, utm_term, utm_content, utm_id...), and these click and
# mail identifiers.
TRACKING_PREFIX: Final = "utm_"
TRACKING: Final = frozenset(
    {
        "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "_ga", "_gl",  # Google
        "fbclid",  # Meta
        "msclkid",  # Microsoft Advertising
        "twclid",  # X
        "ttclid",  # TikTok
        "li_fat_id",  # LinkedIn
        "yclid", "ysclid",  # Yandex
        "igshid",  # Instagram
        "mc_cid", "mc_eid",  # Mailchimp
        "_hsenc", "_hsmi",  # HubSpot
        "mkt_tok",  # Marketo
    }
)  # fmt: skip


def is_tracking(name: str) -> bool:
    """Whether a (decoded) parameter name is a well-known tracking parameter."""
    name = name.lower()
    return name.startswith(TRACKING_PREFIX) or name in TRACKING


def untracked(query: str) -> str:
    """A raw query string without its tracking parameters (and empty pieces,
    which carry none), the rest exactly as spelled: ``&``-separated, as
    ``urllib.parse.parse_qsl`` reads it."""
    if not query:
        return query
    return "&".join(
        piece
        for piece in query.split("&")
        if piece and not is_tracking(unquote_plus(piece.partition("=")[0]))
    )


def only_tracking(query: str) -> bool:
    """Whether every parameter of a raw query string is a tracking parameter."""
    return not untracked(query)
