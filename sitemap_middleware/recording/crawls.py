"""Search engines' crawls: what the request path queues when a User-Agent claims a
crawler (``Crawl``), and the writer's side: the client's address read through the
trusted proxies, verified off the request path (published IP ranges; reverse DNS
confirmed by a forward lookup, on threads of their own, cached, bounded,
``Verification``), and the visits kept in the writer's batches (``VisitLog``).
"""

from __future__ import annotations

import ipaddress
import queue
import socket
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any, NamedTuple

from werkzeug.http import parse_list_header

from ..config import Config, CrawlerOptions, Network, Resolver
from ..crawlers import host_engine
from ..reasons import Crawls
from ..stores.contract import Store, Visit, Visits
from ..urls import filter_query, normalise_path, strip_secrets, wsgi_path

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Crawls queued for the writer; crawls waiting for their address's lookups;
# lookups under way (those stuck on a slow resolver included): beyond each, a
# crawl is dropped and counted.
MAX_QUEUED_CRAWLS = 10_000
MAX_WAITING = 1000
MAX_LOOKUPS = 32
LOOKUP_THREADS = 4
# How long an address's verdict is kept: an answer, and a lookup that failed.
VERDICT_TTL = 3600.0
UNRESOLVED_TTL = 60.0
# (path, engine) pairs whose last write time the writer keeps, to write each at
# most once a recheck_interval: the most lately written. (A page's last-served
# time needs none: the writer reads a page at most once a recheck_interval.)
WRITES_KEPT = 50_000
# Visits waiting for the store (it failing), the oldest dropped beyond.
MAX_PENDING_VISITS = 100_000


class Crawl(NamedTuple):
    """A response to a request whose User-Agent claims a search engine's
    crawler, as the request path saw it: raw values, nothing parsed."""

    engine: str
    """The engine the User-Agent names."""
    peer: str
    """The address the request came from (``REMOTE_ADDR``, ASGI's client)."""
    forwarded: str
    """The value of the trusted proxies' header (``crawlers.forwarded_header``),
    its field lines joined by ``,``; ``""``: none."""
    path: str
    """As :attr:`Observation.path <.observation.Observation.path>`."""
    query: str
    raw: bool
    status: int
    at: float
    """When the response started (``time.time()``)."""


class CrawlQueue:
    """Crawls waiting for the writer: ``put`` never blocks nor locks (a
    ``deque`` append, its bound checked without a lock)."""

    __slots__ = ("_queue",)

    def __init__(self) -> None:
        self._queue: deque[Crawl] = deque()

    def __len__(self) -> int:
        return len(self._queue)

    def put(self, crawl: Crawl) -> bool:
        """Queue ``crawl``; ``False`` (nothing queued) when full."""
        if len(self._queue) >= MAX_QUEUED_CRAWLS:
            return False
        self._queue.append(crawl)
        return True

    def take(self) -> list[Crawl]:
        popleft, n = self._queue.popleft, len(self._queue)
        return [popleft() for _ in range(n)]


# -- the client's address ----------------------------------------------------------


def client_address(
    peer: str, forwarded: str, header: str, trusted: Iterable[Network]
) -> Address | None:
    """The client's address: the peer's, unless the peer is a trusted proxy;
    then, right to left, the first address of the forwarded header that is
    not a trusted proxy (a client may write anything to the left of what
    the proxies add), or the leftmost when all are. ``None`` when the address
    reached is not one (garbage, ``unknown``, an obfuscated identifier).

    :param header: ``"x-forwarded-for"`` or ``"forwarded"`` (RFC 7239).
    """
    networks = tuple(trusted)
    address = _address(peer)
    if not networks or address is None or not _within(address, networks):
        return address
    hops = _forwarded_for(forwarded) if header == "forwarded" else forwarded.split(",")
    for hop in reversed(hops):
        address = _address(hop)
        if address is None or not _within(address, networks):
            return address
    return address


def _forwarded_for(value: str) -> list[str]:
    """The ``for`` parameter of each element of a ``Forwarded`` value, in
    order (``""`` for an element without one)."""
    found = []
    for element in parse_list_header(value):
        node = ""
        for pair in element.split(";"):
            name, _, text = pair.partition("=")
            if name.strip().lower() == "for":
                node = text.strip().strip('"')
        found.append(node)
    return found


def _address(text: str) -> Address | None:
    """An address as a header spells it: ``1.2.3.4``, ``1.2.3.4:80``,
    ``2001:db8::1``, ``[2001:db8::1]:443``; an IPv4-mapped IPv6 address as
    its IPv4 one."""
    text = text.strip().strip('"')
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text.partition("%")[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def _within(address: Address, networks: Iterable[Network]) -> bool:
    return any(address in network for network in networks)


# -- verification ----------------------------------------------------------------


class SystemResolver:
    """The system's resolver (``socket``)."""

    def reverse(self, address: str) -> str:
        return socket.gethostbyaddr(address)[0]

    def forward(self, host: str) -> list[str]:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        return [str(info[4][0]) for info in infos]


class Unresolved(Exception):
    """The lookups could not say (a resolver that timed out or failed)."""


def confirmed_engine(
    resolver: Resolver, address: Address, options: CrawlerOptions
) -> str | None:
    """The engine whose crawler ``address`` is by DNS: its reverse name in
    the engine's domains, and that name's forward lookup giving the address
    back (a PTR record alone is whatever the address's owner writes).

    :raises Unresolved: a lookup timed out or failed for a reason other than
        the name's absence.
    """
    try:
        host = resolver.reverse(str(address))
        engine = host_engine(host, options.engines)
        if engine is None:
            return None
        back = {_address(found) for found in resolver.forward(host)}
    except TimeoutError as exc:
        raise Unresolved(str(exc)) from exc
    except socket.gaierror as exc:
        if exc.errno in (socket.EAI_AGAIN, getattr(socket, "EAI_SYSTEM", None)):
            raise Unresolved(str(exc)) from exc
        return None
    except (OSError, UnicodeError):  # no such name (herror, or a resolver's own)
        return None
    return engine if address in back else None


class Lookups:
    """Daemon threads, made as lookups need them (up to ``threads``), that run
    the lookups queued to them. Not a ``ThreadPoolExecutor``: its threads
    take no work once the interpreter starts to exit, when the writer's
    last flush still verifies what was queued."""

    def __init__(self, threads: int) -> None:
        self._most = threads
        self._threads: list[threading.Thread] = []
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def submit(self, call: Callable[..., str | None], *args: Any) -> Future[str | None]:
        future: Future[str | None] = Future()
        self._jobs.put((future, call, args))
        if len(self._threads) < self._most:
            thread = threading.Thread(
                target=self._work, name="sitemap-crawler-dns", daemon=True
            )
            thread.start()
            self._threads.append(thread)
        return future

    def close(self) -> None:
        """End the threads once the lookups queued are done."""
        for _ in self._threads:
            self._jobs.put(None)
        self._threads = []

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, call, args = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call(*args))
            except BaseException as exc:  # the writer reads it from the future
                future.set_exception(exc)


class Verdict(NamedTuple):
    crawl: Crawl
    address: Address | None
    reason: str
    """A ``reasons.Crawls`` member."""


class Verifier:
    """Whether a crawl's client is the engine its User-Agent names, without
    ever making the writer wait: an address in the engine's published ranges
    is verified at once; else (with ``dns``) its lookups run on a small pool
    of threads, made on first need, and the crawls from it wait for the
    writer's next :meth:`settle`. Verdicts per address are kept (at most
    ``cache_size``, for ``VERDICT_TTL``; a failure for ``UNRESOLVED_TTL``);
    a lookup that takes longer than ``timeout`` settles its crawls as
    unresolved (its thread's answer, when it comes, is still kept)."""

    def __init__(
        self, options: CrawlerOptions, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._options = options
        self._resolver: Resolver = options.resolver or SystemResolver()
        self._clock = clock
        # address -> (engine, None: not a crawler, or Crawls.UNRESOLVED; until)
        self._cache: OrderedDict[Address, tuple[str | None, float]] = OrderedDict()
        # address -> the lookup under way and when it started
        self._lookups: dict[Address, tuple[Future[str | None], float]] = {}
        self._waiting: dict[Address, list[Crawl]] = {}
        self._waiting_count = 0
        self._pool: Lookups | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Crawls waiting for lookups."""
        return self._waiting_count

    def verify(self, crawl: Crawl, address: Address | None) -> Verdict | None:
        """The verdict on ``crawl`` now, or ``None`` when it waits for its
        address's lookups (a later :meth:`settle` gives it)."""
        if address is None:
            return Verdict(crawl, None, Crawls.UNVERIFIED)
        ranges = self._options.ranges.get(crawl.engine, ())
        if ranges and _within(address, ranges):
            return Verdict(crawl, address, Crawls.VERIFIED)
        if not self._options.dns:
            return Verdict(crawl, address, Crawls.UNVERIFIED)
        now = self._clock()
        cached = self._cache.get(address)
        if cached is not None and cached[1] > now:
            return self._judged(crawl, address, cached[0])
        if address not in self._lookups:
            if len(self._lookups) >= MAX_LOOKUPS or self._waiting_count >= MAX_WAITING:
                return Verdict(crawl, address, Crawls.DROPPED)
            try:
                future = self._start(address)
            except RuntimeError:  # no thread may start (the interpreter exits)
                return Verdict(crawl, address, Crawls.UNRESOLVED)
            self._lookups[address] = (future, now)
        elif self._waiting_count >= MAX_WAITING:
            return Verdict(crawl, address, Crawls.DROPPED)
        self._waiting.setdefault(address, []).append(crawl)
        self._waiting_count += 1
        return None

    def settle(self) -> list[Verdict]:
        """The verdicts on the crawls whose lookups finished or ran out of
        time since the last call; never waits."""
        now = self._clock()
        verdicts: list[Verdict] = []
        for address, (future, started) in list(self._lookups.items()):
            if future.done():
                del self._lookups[address]
                try:
                    found: str | None = future.result()
                    self._keep(address, found, now + VERDICT_TTL)
                except Unresolved:
                    found = Crawls.UNRESOLVED
                    self._keep(address, found, now + UNRESOLVED_TTL)
            elif now - started >= self._options.timeout:
                found = Crawls.UNRESOLVED
                if address in self._waiting:  # once: the thread answers later
                    self._keep(address, found, now + UNRESOLVED_TTL)
            else:
                continue
            for crawl in self._waiting.pop(address, ()):
                self._waiting_count -= 1
                verdicts.append(self._judged(crawl, address, found))
        return verdicts

    def close(self) -> None:
        """Stop the lookups' threads (those stuck in a lookup end with it)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def _judged(self, crawl: Crawl, address: Address, found: str | None) -> Verdict:
        if found == Crawls.UNRESOLVED:
            return Verdict(crawl, address, Crawls.UNRESOLVED)
        verified = found is not None and found == crawl.engine
        return Verdict(
            crawl, address, Crawls.VERIFIED if verified else Crawls.UNVERIFIED
        )

    def _keep(self, address: Address, found: str | None, until: float) -> None:
        cache = self._cache
        cache[address] = (found, until)
        cache.move_to_end(address)
        while len(cache) > self._options.cache_size:
            cache.popitem(last=False)

    def _start(self, address: Address) -> Future[str | None]:
        with self._lock:
            if self._pool is None:
                self._pool = Lookups(LOOKUP_THREADS)
            return self._pool.submit(
                confirmed_engine, self._resolver, address, self._options
            )


# -- the visits kept ---------------------------------------------------------------


class Verification:
    """The writer's part of the crawls: those queued verified and settled once
    their lookups ended, each counted by its verdict, the verified ones kept
    as visits (``visits``). Nothing to do with crawls not kept (``options``
    or ``queued`` ``None``)."""

    def __init__(
        self,
        options: CrawlerOptions | None,
        queued: CrawlQueue | None,
        visits: VisitLog,
        count: Callable[[str], object],
    ) -> None:
        # Crawls are verified only when kept: both options and queue, or none.
        self._verifying: tuple[CrawlerOptions, CrawlQueue, Verifier] | None = None
        if options is not None and queued is not None:
            self._verifying = (options, queued, Verifier(options))
        self._visits = visits
        self._count = count

    def run(self, deadline: float | None = None) -> None:
        """Verify the queued crawls and settle those whose lookups ended.
        Never waits for a lookup, but in a flush (``deadline``), for
        ``crawlers.timeout`` at most."""
        if self._verifying is None:
            return
        options, queued, verifier = self._verifying
        for crawl in queued.take():
            address = client_address(
                crawl.peer,
                crawl.forwarded,
                options.forwarded_header,
                options.trusted_proxies,
            )
            verdict = verifier.verify(crawl, address)
            if verdict is not None:
                self._judged(verdict)
        for verdict in verifier.settle():
            self._judged(verdict)
        if deadline is None:
            return
        until = min(deadline, time.monotonic() + options.timeout + 0.1)
        while len(verifier) and time.monotonic() < until:
            time.sleep(0.01)
            for verdict in verifier.settle():
                self._judged(verdict)

    def close(self) -> None:
        if self._verifying is not None:
            self._verifying[2].close()

    def _judged(self, verdict: Verdict) -> None:
        self._count(verdict.reason)
        if verdict.reason == Crawls.VERIFIED:
            self._visits.crawled(verdict.crawl)


class VisitLog:
    """The visits waiting for the store (:class:`Visits`), each (path, agent)
    written at most once an ``interval``: a verified crawl of each engine, and
    the last time any client was served a page the writer digested. Nothing
    is kept for a store without visits, nor with ``crawlers`` off but the
    last-served times."""

    def __init__(self, config: Config, store: Store) -> None:
        self._store = store if isinstance(store, Visits) else None
        self._config = config
        self._interval = config.recheck_interval
        self._pending: dict[tuple[str, str], Visit] = {}
        self._written: OrderedDict[tuple[str, str], float] = OrderedDict()

    @property
    def kept(self) -> bool:
        return self._store is not None

    def __len__(self) -> int:
        return len(self._pending)

    def due(self, force: bool) -> bool:
        """Visits are waiting."""
        return bool(self._pending)

    def served(self, path: str, at: float, status: int = 200) -> None:
        """A page the writer digested was served at ``at``."""
        self._add(Visit(path, "", int(at), status))

    def crawled(self, crawl: Crawl) -> None:
        """A verified crawl: kept under the stored spelling of its path (a
        path no page may have is not kept)."""
        path = stored_spelling(crawl, self._config)
        if path is not None:
            self._add(Visit(path, crawl.engine, int(crawl.at), crawl.status))

    def _add(self, visit: Visit) -> None:
        if self._store is None:
            return
        key = (visit.path, visit.agent)
        last = self._written.get(key)
        if last is not None and visit.at - last < self._interval:
            return
        held = self._pending.get(key)
        if held is None or held.at <= visit.at:
            self._pending[key] = visit
        pending = self._pending
        if len(pending) > MAX_PENDING_VISITS:
            del pending[next(iter(pending))]

    def write(self) -> None:
        """Write the waiting visits, in one call.

        :raises StoreError: the store failed (they wait for the next).
        """
        if self._store is None or not self._pending:
            return
        visits = list(self._pending.values())
        self._store.visited(visits)
        written = self._written
        for visit in visits:
            if visit.agent:
                key = (visit.path, visit.agent)
                written[key] = visit.at
                written.move_to_end(key)
        while len(written) > WRITES_KEPT:
            written.popitem(last=False)
        self._pending = {}


def stored_spelling(crawl: Crawl, config: Config) -> str | None:
    """The path a crawl is kept under: the normalised path, secrets stripped,
    with the query parameters the config keeps (``None``: no page's path)."""
    wire = crawl.path if crawl.raw else wsgi_path(crawl.path)
    path = normalise_path(wire)
    if path is None:
        return None
    stored = strip_secrets(path)
    if stored is None:
        return None
    query = filter_query(crawl.query, config.query)
    return f"{stored}?{query}" if query else stored
