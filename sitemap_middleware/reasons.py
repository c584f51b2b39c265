"""One vocabulary for what recording decides: the two actions, and every reason a
response is not recorded, each in the ``stats()`` group it is counted under.
Plain strings (a dict lookup on the request path costs what a str hash costs).
"""

from __future__ import annotations

from typing import Final

# What a response does to the store.
RECORD: Final = "record"
REMOVE: Final = "remove"
DEPENDS: Final = "depends"
"""Not decided from the status and headers alone: the watcher asks the policy
again with what it needs of the request (never counted)."""


class Skipped:
    """Why a response neither adds nor removes a page (``stats()["skipped"]``)."""

    # The request, before the app answers.
    METHOD: Final = "method"
    AUTHORIZATION: Final = "authorization"
    SESSION: Final = "session"
    HOST: Final = "host"
    EXCLUDED: Final = "excluded"
    NOT_INCLUDED: Final = "not_included"
    OWN_ENDPOINT: Final = "own_endpoint"
    # The response's status and headers.
    STATUS: Final = "status"
    NOT_HTML: Final = "not_html"
    GONE: Final = "gone"
    """Answered as a page gone (404, 410, a permanent redirect, 401, a
    ``noindex`` header, a redirect to a login page) at a URL the store does
    not hold: nothing to add, nothing to remove."""
    SET_COOKIE: Final = "set_cookie"
    PRIVATE: Final = "private"
    VARY: Final = "vary"
    ATTACHMENT: Final = "attachment"
    ENCODED: Final = "encoded"
    # The route and the view.
    ROUTE_EXCLUDED: Final = "route_excluded"
    OPTED_OUT: Final = "opted_out"
    FRAMEWORK: Final = "framework"
    """One of the framework's own pages, found from the app: FastAPI's docs,
    ReDoc, OAuth2 redirect and OpenAPI pages, Flask's static routes,
    Starlette's ``StaticFiles`` mounts."""
    # The body, read in the writer.
    NOINDEX: Final = "noindex"
    CANONICAL_OTHER: Final = "canonical_other"
    HREFLANG_INCOMPLETE: Final = "hreflang_incomplete"
    HREFLANG_MISMATCH: Final = "hreflang_mismatch"
    HEAD_TOO_LONG: Final = "head_too_long"
    """The head goes on past what the scanner reads: a noindex may follow."""
    # The URL.
    BAD_PATH: Final = "bad_path"
    """Not a path a page has: a control character, bytes that are not UTF-8, an
    empty segment (``//admin``); a page served to a target with a dot segment
    (``/docs/../x``: browsers resolve them, and the app routed it as sent)."""
    NOT_EXACT: Final = "not_exact"
    """A removal (301/308/404/410, noindex, a canonical elsewhere) from a
    request whose target was not exactly the stored spelling of its URL (dot
    segments, percent-encoding, a stripped matrix parameter, a dropped query
    parameter): nothing removed (invariant 19)."""
    SECRET: Final = "secret"
    TOO_LONG: Final = "too_long"
    UNSTORABLE: Final = "unstorable"
    """A value no sitemap may hold (the entry's fragment does not render)."""
    # The exchange itself.
    INCOMPLETE: Final = "incomplete"
    """The client left mid-body."""
    NO_RESPONSE: Final = "no_response"
    """The app never started a response."""
    FILE_BODY: Final = "file_body"
    """A ``wsgi.file_wrapper`` body, left for the server to send itself."""


class Dropped:
    """Why a page that could be recorded was not (``stats()["dropped"]``)."""

    QUEUE_FULL: Final = "queue_full"
    STORE_DOWN: Final = "store_down"
    READ_ONLY: Final = "read_only"
    CAP: Final = "cap"
    ROUTE_CAP: Final = "route_cap"
    RATE: Final = "rate"


class Seen:
    """Why a recordable page was not written again (``stats()["seen"]``)."""

    FRESH: Final = "fresh"
    """Recorded by this process within ``recheck_interval``: not read."""
    UNCHANGED: Final = "unchanged"
    """Read, and nothing to write."""
    QUERY_DROPPED: Final = "query_dropped"
    """Served to a query the stored URL does not keep (``?q=x``, or tracking
    parameters alone: ``?utm_source=x``) while the page is stored: another
    page's content, or one that may print the parameters, so nothing written
    (invariant 12)."""
    OTHER_SPELLING: Final = "other_spelling"
    """Served to another spelling of a stored page's path (dot segments,
    percent-encoding, a stripped matrix parameter): nothing written."""


class Errors:
    """Failures, retried later (``stats()["errors"]``)."""

    STORE: Final = "store"
    """The store failed (an outage): the writes stay pending."""
    BUG: Final = "bug"
    """An unexpected exception in the recorder: logged with its traceback; the
    observation or entry that raised it is dropped, the rest goes on."""


class Crawls:
    """What became of a request whose User-Agent names a search engine's
    crawler (``stats()["crawls"]``), decided in the writer."""

    VERIFIED: Final = "verified"
    """The client is the engine's: its address is in the engine's published
    ranges, or its reverse DNS name is the engine's and resolves back to it."""
    UNVERIFIED: Final = "unverified"
    """A claim the client's address does not back (a spoofed User-Agent, an
    address that cannot be read): counted, never stored."""
    UNRESOLVED: Final = "unresolved"
    """The lookups failed or took longer than ``crawlers.timeout``: not stored."""
    DROPPED: Final = "dropped"
    """Beyond a bound (the queue, the lookups waiting): not looked at."""


# The totals, counted under their own name at the top of stats().
RECORDED: Final = "recorded"
REMOVED: Final = "removed"
# The re-check of stored pages after a change of config (invariant 21): pages
# it removed, pages it wrote again (changefreq, priority), pages it moved to
# their section's part (sections.py) and pages it read.
PRUNED: Final = "pruned"
RESTYLED: Final = "restyled"
MOVED: Final = "moved"
RECHECKED: Final = "rechecked"
# URLs an IndexNow endpoint accepted (indexnow.py).
PUSHED: Final = "pushed"
# What the decisions log says of a page written, of one removed, and of one not
# admitted (a cap or the rate: counted under its reason in stats()).
NOTED_RECORDED: Final = "recorded"
NOTED_REMOVED: Final = "removed"
NOTED_NOT_ADMITTED: Final = "not_admitted"


def _group(kind: type, name: str) -> dict[str, str]:
    return {
        value: name
        for key, value in vars(kind).items()
        if key.isupper() and isinstance(value, str)
    }


# reason -> its stats() group ("" for the totals).
GROUP: Final[dict[str, str]] = {
    **_group(Skipped, "skipped"),
    **_group(Dropped, "dropped"),
    **_group(Seen, "seen"),
    **_group(Errors, "errors"),
    **_group(Crawls, "crawls"),
    RECORDED: "",
    REMOVED: "",
    PRUNED: "",
    RESTYLED: "",
    MOVED: "",
    RECHECKED: "",
    PUSHED: "",
}
GROUPS: Final = ("skipped", "dropped", "seen", "errors", "crawls")
