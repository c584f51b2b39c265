"""Well-known tracking parameters: query parameters that campaign and ad tools add to
links and that no page answers differently to. A URL with only these on top of its
stored spelling counts as the bare page. Imports nothing of the package.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import unquote_plus

# Parameters that say where a visitor came from, not which page they asked
# for: analytics campaign tags and the click ids ad networks append. A
# response to "/pricing?utm_source=x" is the page at "/pricing". Names compare
# without case.
TRACKING_PREFIXES: Final = (
    "utm_",  # Google Analytics campaigns (utm_source, utm_medium, ...)
    "mtm_",  # Matomo campaigns
    "pk_",  # Piwik campaigns
    "hsa_",  # HubSpot ads
)
TRACKING_PARAMETERS: Final = frozenset(
    {
        "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "gad_source",  # Google Ads
        "_ga", "_gl",  # Google Analytics cross-domain linking
        "srsltid",  # Google Merchant Center
        "fbclid",  # Meta
        "msclkid",  # Microsoft Advertising
        "mc_cid", "mc_eid",  # Mailchimp
        "yclid", "ysclid",  # Yandex
        "igshid",  # Instagram shares
        "ref_src", "ref_url",  # Twitter / X embeds
        "twclid",  # X ads
        "ttclid",  # TikTok
        "li_fat_id",  # LinkedIn
        "_hsenc", "_hsmi",  # HubSpot e-mails
        "mkt_tok",  # Marketo e-mails
        "oly_anon_id", "oly_enc_id",  # Omeda
        "vero_id", "vero_conv",  # Vero e-mails
        "s_kwcid",  # Adobe Advertising
        "epik",  # Pinterest
        "rb_clickid",  # Rakuten
        "wickedid",  # Wicked Reports
    }
)  # fmt: skip


def is_tracking(name: str) -> bool:
    """Whether a (decoded) parameter name is a well-known tracking parameter."""
    name = name.lower()
    return name in TRACKING_PARAMETERS or name.startswith(TRACKING_PREFIXES)


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
