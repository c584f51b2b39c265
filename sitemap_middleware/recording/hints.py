"""Why nothing is listed: when every page a process saw was skipped at one step
for one configuration reason, one warning names the reason and the setting.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

from ..reasons import GROUP, RECORDED, Skipped

logger = logging.getLogger("sitemap_middleware")

# Skips of one reason before it is worth a warning: a few requests of a health
# check or a crawler's probe are not a site.
WARN_AFTER = 20

# The reasons worth a warning, the step that decides them, and what to change.
HINTS: dict[str, tuple[int, str]] = {
    Skipped.HOST: (
        1,
        "every request came for a host outside 'allowed_hosts' (by default the "
        "host of 'base_url'): set 'base_url' to the site's public URL, or add "
        "the Host the server sees (behind a proxy, its own) to 'allowed_hosts'",
    ),
    Skipped.SESSION: (
        1,
        "every request carried a cookie that may sign a visitor in (any but "
        "the harmless ones, or those 'session_cookies' names): browse signed "
        "out, or name a cookie that never signs anyone in in 'harmless_cookies'",
    ),
    Skipped.EXCLUDED: (
        1,
        "every path matched 'exclude' (its defaults included): change 'exclude'",
    ),
    Skipped.NOT_INCLUDED: (
        1,
        "no path matched 'include': change 'include' or leave it out",
    ),
    Skipped.VARY: (
        2,
        "every page answered with 'Vary: Cookie' to a request carrying cookies "
        "that 'session_cookies' does not name, so each may be a personal "
        "variant: add those cookies to 'harmless_cookies' if they change "
        "nothing, or leave 'session_cookies' out",
    ),
    Skipped.SET_COOKIE: (
        2,
        "every page set a cookie while 'skip_set_cookie' is true (or the "
        "request carried a cookie 'session_cookies' does not name): leave "
        "'skip_set_cookie' out if what the site sets an anonymous visitor "
        "signs no one in (a form's CSRF token, an A/B or consent cookie)",
    ),
    Skipped.PRIVATE: (
        2,
        "every page answered with 'Cache-Control: private' or 'no-store': "
        "only what a shared cache may keep is listed; send 'public' (or no "
        "Cache-Control) on public pages",
    ),
    Skipped.ENCODED: (
        2,
        "every page was compressed (Content-Encoding) before the sitemap "
        "middleware saw it: put the compression middleware outside it",
    ),
    Skipped.NOT_HTML: (
        2,
        "no response was HTML (Content-Type text/html or application/xhtml+xml)",
    ),
    Skipped.GONE: (
        2,
        "every page answered as gone: a 404, a redirect to a login page, or an"
        " 'X-Robots-Tag: noindex' header (a staging site's, a proxy's): drop the"
        " header where the site is public",
    ),
    Skipped.NOINDEX: (
        3,
        "every page said noindex (a robots meta tag or X-Robots-Tag), as a "
        "staging site does: a sitemap lists only what may be indexed",
    ),
    Skipped.CANONICAL_OTHER: (
        3,
        "every page named another URL as its canonical (on a staging site, "
        "often production's): a sitemap lists only pages that are their own "
        "canonical; set 'base_url' to the canonicals' site",
    ),
    Skipped.HEAD_TOO_LONG: (
        3,
        "every page's <head> went on past the 64 KiB that is read (inline "
        "styles, scripts or icons), and a noindex may follow: move them to "
        "files or below the head",
    ),
}
# What a request reaches after each step: counted there, it got past the
# steps before. Step 1 is the request, step 2 the response's status and
# headers, step 3 the route and the body (read in the writer).
_STEP2 = {
    Skipped.STATUS,
    Skipped.GONE,
    Skipped.SET_COOKIE,
    Skipped.PRIVATE,
    Skipped.VARY,
    Skipped.ENCODED,
    Skipped.ATTACHMENT,
    Skipped.NOT_HTML,
}
_STEP1 = {
    Skipped.METHOD,
    Skipped.AUTHORIZATION,
    Skipped.SESSION,
    Skipped.HOST,
    Skipped.EXCLUDED,
    Skipped.NOT_INCLUDED,
    Skipped.OWN_ENDPOINT,
}


# Reasons that say a page got past every step: a skip in the writer, a drop
# at a cap, a page seen again (the re-check's totals and errors say nothing).
_PAGES = {RECORDED} | {
    reason for reason, group in GROUP.items() if group in ("skipped", "dropped")
}
_SEEN = {reason for reason, group in GROUP.items() if group == "seen"}


def _step(reason: str) -> int:
    if reason in _STEP1:
        return 1
    if reason in _STEP2:
        return 2
    return 3 if reason in _PAGES or reason in _SEEN else 0


class Hints:
    """Checks the counts (``totals()``, by reason) and warns once per reason;
    quiet for good once the process has recorded a page."""

    def __init__(self, totals: Callable[[], Counter[str]]) -> None:
        self._totals = totals
        self._warned: set[str] = set()
        self.quiet = False

    def check(self) -> None:
        """Warn about the reason every page was skipped for, if any."""
        if self.quiet:
            return
        counts = self._totals()
        if counts[RECORDED] or any(counts[reason] for reason in _SEEN):
            self.quiet = True
            return
        for reason, (step, advice) in HINTS.items():
            skipped = counts[reason]
            if skipped < WARN_AFTER or reason in self._warned:
                continue
            passed = any(n for r, n in counts.items() if _step(r) > step)
            rivals = (counts[r] for r, (s, _) in HINTS.items() if s == step)
            if passed or skipped < max(rivals):
                continue
            self._warned.add(reason)
            logger.warning(
                "nothing recorded yet: %d requests were skipped as %r and none"
                " got further; %s (stats() and site_stats() count every reason)",
                skipped,
                reason,
                advice,
            )
