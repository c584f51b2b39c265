"""The request watcher both adapters share. From a request's facts, then the app's
status and headers, then the body chunks as they pass, it decides whether the
response records a page, removes one or neither, and counts why; it never touches
the response itself.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ..reasons import DEPENDS, RECORD, REMOVE, Seen, Skipped
from ..recording.observation import Headers, Observed
from ..recording.recorder import Recorder
from ..routes import SKIP_KEY, Route, Routes
from ..sitemaps import BODY_BUDGET
from .policy import Policy

logger = logging.getLogger("sitemap_middleware")
# The actions of a response that the watcher acts on (any other is a reason).
_ACTING = frozenset({RECORD, REMOVE, DEPENDS})

State = Mapping[str, Any]
"""The WSGI environ or the ASGI scope: where the app and its router leave notes."""
Found = tuple[str | None, object] | None
"""A route's template and view (either may be unknown), or nothing known."""
RouteFinder = Callable[[State, str], Found]
"""From the state and the mount prefix the middleware saw: the template and the
view of the route that served the request, if known (a view without a template:
an app mounted below a prefix, such as static files)."""
Locator = Callable[[State, str, str], "tuple[str, str, bool]"]
"""From the state, the decoded path and the mount prefix the middleware saw: the
path as it came (the wire form, and whether it is raw) and the query string.
Asked only of a response that records, removes or depends on the request."""
CookieReader = Callable[[State], str]
"""From the state: every ``Cookie`` line of the request joined with ``"; "``.
Asked only of a response whose action depends on the request's cookies."""
HeaderReader = Callable[[State, str], bool]
"""From the state and a lower-case header name: whether the request carries
that header (with any value). Asked only of a response that varies on it."""


def environ_key(name: str) -> str:
    """The key of a request header in a CGI-style environ (WSGI's, Django's
    ``request.META``): ``HTTP_`` and the name, but the two headers CGI keeps
    without it (RFC 3875 §4.1.18)."""
    key = name.upper().replace("-", "_")
    return key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else "HTTP_" + key


def environ_header(environ: State, name: str) -> bool:
    """:data:`HeaderReader` of a CGI-style environ (:func:`environ_key`)."""
    return environ_key(name) in environ


class Watcher:
    """The watching rules of one middleware, shared by all its requests.

    Before the app runs, the adapter asks ``request_skip(method, path, host,
    authorization, cookie)`` (:meth:`Policy.request_skip`; ``cookie`` is every
    ``Cookie`` line joined with ``"; "``) and ``count()``s a reason it gives;
    it calls :meth:`start` when the app starts its response (or asks
    ``action`` itself, then :meth:`started`) and, for a page to record, the
    returned :class:`Recording`'s ``body`` and ``end``. ``path`` is always
    the decoded path below the mount point.
    """

    def __init__(
        self,
        policy: Policy,
        routes: Routes,
        recorder: Recorder,
        locate: Locator,
        find_route: RouteFinder,
        cookie: CookieReader,
        route_stays: bool = False,
    ) -> None:
        self._routes = routes
        self.route_stays = route_stays
        """Whether the route find_route reads stays in the state once the
        response is sent (ASGI's scope, where Starlette's router leaves it):
        then the writer reads it; else (Flask's request leaves the environ
        with the response) the request path does, as the response starts."""
        self._cookie = cookie
        self._cookie_action = policy.cookie_action
        self._varied = policy.varied
        self.header: HeaderReader = environ_header
        """Whether the request carries a header: the adapter whose state is
        no CGI-style environ sets its own (ASGI's scope)."""
        self._redirect_action = policy.redirect_action
        self._recorder = recorder
        self._locate = locate
        self._find_route = find_route
        self._request_skip = policy.request_skip
        # The first request of any kind starts the writer, then leaves the
        # policy's own method in its place: later requests pay nothing for it.
        self.request_skip: Callable[[str, str, str | bytes, bool, str], str | None] = (
            self._first_request
        )
        recorder.on_reset(self._arm)
        # What started() asks of a response, and what an adapter that settles
        # a page itself asks (see started()): the policy's action, the keys
        # recorded lately and the known pages' counter.
        self.action = policy.response_action
        self.recent = recorder.fresh
        self.fresh = recorder.tally[Seen.FRESH]
        self.count = recorder.count
        # Hands a page sent in full to the writer (never blocks).
        self.put = recorder.put
        self._tally = recorder.tally
        self.query_key = "QUERY_STRING"
        """The key of the state that holds the query string (the adapter sets
        its own): a fresh page passes only without one, and one ``get`` of
        this key is all it costs to know."""

    def _arm(self) -> None:
        self.request_skip = self._first_request
        self.put = self._recorder.put  # a forked child's own queue

    def _first_request(self, *request: Any) -> str | None:
        """:meth:`Policy.request_skip` of ``request``, once the writer thread
        is started: its periodic wake checks why nothing is recorded
        (``hints``) whichever rule skips every request, the Host included,
        within seconds."""
        self.request_skip = self._request_skip
        self._recorder.start()
        return self._request_skip(*request)

    def start(
        self,
        state: State,
        path: str,
        status: int,
        headers: Headers,
        root: str = "",
        recording: Recording | None = None,
    ) -> Recording | None:
        """The app has started its response: a :class:`Recording` to feed the
        body to, or ``None`` when nothing more is to be seen (what it decided,
        a removal included, is settled and counted). An adapter that keeps
        its request in a recording of its own passes it, its ``state``,
        ``key``, ``_watcher`` and a ``root`` set: it is the one returned, none
        is built, and its ``body`` is the adapter's to set before a chunk is
        noted (WSGI's list body is the app's own list: no list is made)."""
        # A bound method held in an attribute is called from a local: Python
        # 3.11 specializes that call, not a method call of the attribute.
        action_of = self.action
        action = action_of(status, headers)
        return self.started(action, state, path, status, headers, root, recording)

    def started(
        self,
        action: str,
        state: State,
        path: str,
        status: int,
        headers: Headers,
        root: str = "",
        recording: Recording | None = None,
    ) -> Recording | None:
        """:meth:`start` once the policy's ``action`` on the response is
        known. The WSGI and ASGI adapters ask it themselves, and settle a page
        whose route stays in the state as the ``RECORD`` branch below does
        (a known page counted, a new one's fields set): a frame fewer on
        every page served. Any other answer comes here."""
        if action != RECORD:  # a page is asked first: most answers are
            if action not in _ACTING:
                next(self._tally[action])  # count(action), without a call
                return None
            try:
                if action == DEPENDS:
                    action = self._depends(state, path, status, headers, root)
                    if action != RECORD and action != REMOVE:
                        self.count(action)
                        return None
                if action == REMOVE:
                    self._remove(state, path, headers, root)
                    return None
            except Exception:
                # A bug here must not reach the app's response (invariant 15).
                logger.exception("sitemap watcher failed on %r", path)
                return None
        # One frame from here on for a page: this runs for every page served,
        # and each Python call costs a fresh page about a tenth of what it adds.
        try:
            if path in self.recent and not state.get(self.query_key):
                next(self.fresh)  # count(Seen.FRESH), without a call
                return None
            # A page to note: what the request path must keep (the state,
            # which the writer reads the rest from once the page is sent:
            # Recording.settle). Its fields set here, not by an __init__:
            # its frame would be a third of what building it costs.
            if recording is None:
                recording = _Built()
                recording.state = state
                recording.key = path
                recording.root = root
                recording._watcher = self
                recording.body = []
            recording.headers = headers
            recording.size = 0
            recording.done = False
            if not self.route_stays:
                recording.found = self._find_route(state, root)
            return recording
        except Exception:
            # A bug here must not reach the app's response (invariant 15).
            logger.exception("sitemap watcher failed on %r", path)
            return None

    def _remove(self, state: State, path: str, headers: Headers, root: str) -> None:
        """Hand over the removal of the page a response says is gone (the
        view may have opted out)."""
        if SKIP_KEY in state:  # the view called skip()
            self.count(Skipped.OPTED_OUT)
            return
        wire, query, raw = self._locate(state, path, root)
        found = self._find_route(state, root)
        routes = self._routes
        if found is None or found[0] is None:
            route = routes.any
        else:
            route = routes.resolve(*found)
        key = _key(path, query, route)
        # A page going away is removed even from an excluded route: it may
        # have been recorded before the route was excluded.
        self._recorder.submit(
            Observed(REMOVE, key, wire, query, raw, route, headers, [], 0, 0.0)
        )

    def settle(self, recording: Recording) -> str | None:
        """A page sent in full, on the writer's thread: its spelling and route
        read from the request's state, or why it is not recorded after all
        (the view called ``skip()``; a kept query recorded lately). The
        request path left these here: a page's route, path rules and
        exclusions are the writer's to judge (``refusal.refuse``), counted
        alike."""
        state = recording.state
        if SKIP_KEY in state:
            return Skipped.OPTED_OUT
        path = recording.key
        root = recording.root
        wire, query, raw = self._locate(state, path, root)
        stays = self.route_stays
        found = self._find_route(state, root) if stays else recording.found
        routes = self._routes
        route = routes.unknown if found is None else routes.resolve(*found)
        recording.located = (wire, query, raw, route)
        key = recording.key = _key(path, query, route)
        if key is not path and key in self.recent:
            return Seen.FRESH  # its path alone was asked on the request path
        return None

    def _depends(
        self, state: State, path: str, status: int, headers: Headers, root: str
    ) -> str:
        """The action of a response that depends on the request: a temporary
        redirect (where to), or a page setting a cookie or varying on cookies
        (which were sent) or on another request header (a request carrying
        it, such as htmx's ``HX-Request``, gets a variant: not the page a
        crawler gets)."""
        if status == 200:
            header = self.header
            for name in self._varied(headers):
                if name != "cookie" and header(state, name):
                    return Skipped.VARY
            return self._cookie_action(self._cookie(state), headers)
        wire, _, raw = self._locate(state, path, root)
        return self._redirect_action(headers, wire, raw)


def _key(path: str, query: str, route: Route) -> str:
    """The recent-pages cache key of a response: its path, and its query when
    the route keeps one (dropped parameters would make one page look like
    many)."""
    return f"{path}?{query}" if query and route.query else path


class Recording:
    """One page being sent: the body chunks are noted (references, up to the
    body budget) and the page is handed to the recorder once the response has
    been sent in full, as itself: it is the :class:`Observation` the writer
    reads, once it has settled it (:meth:`settle`)."""

    __slots__ = (
        "_watcher",
        "body",
        "done",
        "found",
        "headers",
        "key",
        "located",
        "seen",
        "size",
        "state",
    )

    action = RECORD
    root = ""
    """The mount prefix the middleware saw (ASGI's ``root_path``): kept in
    a slot by the recordings that may have one (ASGI's, the watcher's own),
    not by WSGI's, which has none (a slot the garbage collector walks in
    every page queued)."""
    # Set without an __init__ frame: the request's, by the adapter that
    # builds it or by Watcher.start; key becomes the cache key in settle().
    state: State
    key: str
    # By Watcher.start, as the response starts.
    _watcher: Watcher
    headers: Headers
    found: Found  # unless the route stays in the state
    # Whether the page is sent in full or cut short (None: an adapter's
    # own, before the response starts).
    done: bool | None
    # As the body passes; seen once it is sent in full.
    body: list[bytes]
    size: int
    seen: float
    # By settle(), in the writer: one slot, not four, for the garbage
    # collector walks each slot of every page queued (a lagging writer's
    # backlog) on the request thread.
    located: tuple[str, str, bool, Route]

    @property
    def path(self) -> str:
        """The wire form if ``raw``, else latin-1 over the UTF-8 bytes."""
        return self.located[0]

    @property
    def query(self) -> str:
        return self.located[1]

    @property
    def raw(self) -> bool:
        return self.located[2]

    @property
    def route(self) -> Route:
        return self.located[3]

    def settle(self) -> str | None:
        """Read the rest of the page from the request's state (the writer's
        thread, before anything else): ``None``, or why it is not recorded
        after all."""
        return self._watcher.settle(self)

    def note(self, chunk: bytes) -> None:
        """Note a body chunk as it passes."""
        if self.size < BODY_BUDGET and chunk:
            self.body.append(chunk)
            self.size += len(chunk)

    def through(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """``chunks`` passed on, each noted (up to the body budget; a call per
        chunk costs a page more than noting it); the page is handed over
        once the last one has been taken and asked past."""
        body = self.body
        size = self.size
        for chunk in chunks:
            if size < BODY_BUDGET and chunk:
                body.append(chunk)
                size += len(chunk)
            yield chunk
        self.size = size
        self.end(True)

    def end(self, complete: bool) -> None:
        """The response is over: sent in full, or cut short (nothing recorded).
        Only the first call counts."""
        if self.done:
            return
        self.done = True
        if not complete:
            self._watcher.count(Skipped.INCOMPLETE)
            return
        self.seen = time.time()
        self._watcher.put(self)


class _Built(Recording):
    """A recording the watcher builds itself (Django's responses), with its
    request's mount prefix."""

    __slots__ = ("root",)

    root: str
