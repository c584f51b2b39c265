"""Protocol facts every layer shares: the sitemaps.org limits, the changefreq
words, language tags, W3C datetimes, robots directives, and the few sizes of our
own that more than one module must agree on. Imports nothing of the package.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

# https://www.sitemaps.org/protocol.html#index: at most 50,000 URLs and
# 52,428,800 bytes (50 MiB) uncompressed a sitemap, and as many sitemaps an index.
MAX_URLS_PER_PART = 50_000
MAX_PART_BYTES = 52_428_800
# sitemaps.org: "<loc> ... must be less than 2,048 characters".
MAX_URL_LENGTH = 2047
# https://www.sitemaps.org/protocol.html#changefreqdef
CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
# Google's image extension: "You can include up to 1,000 images for each page."
MAX_IMAGES = 1000
# Alternates kept per page: more than any real set of locales, few enough to
# bound a record.
MAX_ALTERNATES = 100
# xs:language, the type of xhtml:link's hreflang: subtags of 1-8 letters and
# digits joined by hyphens (RFC 5646 §2.1), x-default included; "de_AT" or
# "de,at" are not languages to Google either.
is_language_tag = re.compile(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*").fullmatch

# A W3C datetime's fraction of a second: "one or more digits"
# (https://www.w3.org/TR/NOTE-datetime), where Python 3.10's fromisoformat
# reads three or six.
_FRACTION = re.compile(r"(?<=:\d\d\.)\d+")


def iso_moment(text: str) -> datetime:
    """``datetime.fromisoformat(text)`` as Python 3.11 and later read a W3C
    datetime, on every supported Python: a "Z" zone, a fraction of a second
    of any length (six digits kept).

    :raises ValueError: ``text`` is no ISO 8601 date or datetime.
    """
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        text = _FRACTION.sub(lambda m: m[0][:6].ljust(6, "0"), text, count=1)
        return datetime.fromisoformat(text)


# Google News sitemaps (https://developers.google.com/search/docs/crawling-indexing/
# sitemaps/news-sitemap): "only include URLs for articles that were published
# in the last two days" and "at most 1,000 news:news tags" a sitemap.
NEWS_WINDOW = 2 * 24 * 3600
MAX_NEWS = 1000
# <news:language>: "The ISO 639 language code (2 or 3 letters)", with zh-cn and
# zh-tw for Chinese (sitemap-news.xsd's pattern).
is_news_language = re.compile(r"zh-cn|zh-tw|[a-z]{2,3}").fullmatch
# The Chinese tags of BCP 47 and how Google News spells their script.
_CHINESE = {
    "hans": "zh-cn",
    "cn": "zh-cn",
    "sg": "zh-cn",
    "hant": "zh-tw",
    "tw": "zh-tw",
    "hk": "zh-tw",
    "mo": "zh-tw",
}


def news_language(tag: str) -> str | None:
    """A BCP 47 language tag (``<html lang>``: "en-GB", "zh-Hant-TW") as
    ``<news:language>`` takes it ("en", "zh-tw"), ``None`` for one it cannot
    name (no language, "x-default", "i-klingon", Chinese without a script or
    region)."""
    subtags = tag.strip().lower().replace("_", "-").split("-")
    primary = subtags[0]
    if primary == "zh":
        for subtag in subtags[1:]:
            if subtag in _CHINESE:
                return _CHINESE[subtag]
        return None
    return primary if is_news_language(primary) else None


# Room kept for the escaped base URL in every stored <url> fragment; the config
# refuses longer base URLs, so a part's size is known without knowing the origin.
MAX_ORIGIN_BYTES = 256
# Bytes of a page's body kept for its head and content fingerprint; a change
# further down a very long page goes unnoticed.
BODY_BUDGET = 512 * 1024
# Stored <url> fragments read and joined at once when a part is served: large
# enough that per-run overhead vanishes, small enough to keep memory flat.
RUN = 2000
# At most about this many bytes of fragments (as a part's size counts them,
# each origin at its longest) in a run: a part of large fragments (images,
# alternates) is read in runs shorter than RUN, so that serving it holds as
# little as serving a part of plain ones.
RUN_BYTES = 1024 * 1024


def escape(value: str) -> str:
    """Entity-escape all five XML metacharacters, quotes included (sitemaps.org:
    "all data values in a Sitemap must be entity-escaped")."""
    if "&" in value:
        value = value.replace("&", "&amp;")
    if "<" in value:
        value = value.replace("<", "&lt;")
    if ">" in value:
        value = value.replace(">", "&gt;")
    if "'" in value:
        value = value.replace("'", "&apos;")
    if '"' in value:
        value = value.replace('"', "&quot;")
    return value


def is_noindex(value: str, now: float | None = None) -> bool:
    """True for an ``X-Robots-Tag`` / meta robots value that keeps a page out.

    Directives may carry a user agent (``googlebot: noindex``); any agent's
    ``noindex`` or ``none`` counts, since the sitemap serves every crawler.
    So does an ``unavailable_after`` date that has passed (``now``, epoch
    seconds, the clock's by default): search engines drop the page from then
    on. A date no parser reads is ignored, as Google ignores it.
    """
    lowered = value.lower()
    for directive in lowered.split(","):
        if directive.rpartition(":")[2].strip() in ("noindex", "none"):
            return True
    if "unavailable_after" in lowered:  # rare: read only where written
        after = unavailable_after(value)
        return after is not None and after.timestamp() <= (
            time.time() if now is None else now
        )
    return False


def unavailable_after(value: str) -> datetime | None:
    """The moment of a robots value's first ``unavailable_after`` directive
    (Google reads "RFC 822, RFC 850, and ISO 8601" dates; a date without a
    zone is UTC's), or ``None`` when it has none, or none a parser reads."""
    start = value.lower().find("unavailable_after:")
    if start < 0:
        return None
    pieces = value[start + len("unavailable_after:") :].split(",")
    # An RFC 822 or 850 date may hold a comma ("Fri, 25 Jun 2010 ..."):
    # the first piece, then the first two joined, are tried.
    for text in (pieces[0], ",".join(pieces[:2])):
        text = text.strip()
        try:
            moment = iso_moment(text)
        except ValueError:
            try:
                moment = parsedate_to_datetime(text)
            except (TypeError, ValueError, IndexError):
                continue
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment
    return None
