"""Per-request cost of the sitemap middleware on its hot path, bare vs wrapped.

A minimal Flask app (WSGI) and a minimal FastAPI app (ASGI), whose routes return
pre-encoded bytes, are called in process (no sockets, no server) once bare and
once wrapped by the middleware (``memory://`` store), in short alternating
batches. Bare and wrapped share one app instance: the wrapped variant is the
middleware around the very callable the bare one calls (Flask's ``wsgi_app``;
for FastAPI, the middleware stack below the sitemap middleware). Each batch runs
with the garbage collector off and gives a mean time per
request; the table shows, per stack and case, the median of those batch means for
each variant, the overhead in microseconds, the ratio and the target:

a        JSON (``application/json``, not recorded) over thousands of distinct
         paths ``/items/<n>``: the request passes the policy and the
         response-header check. Target: <= 1.03x bare.
a-excl   the same under the excluded prefix ``/api/``: skipped from the path
         alone. Target: <= 1.03x bare.
b        an HTML page of about 32 KiB seen for the first time (a new path every
         request): the body is noted and queued; the writer thread scans its
         head and digests it. ``flush()`` runs between batches, outside the
         timed region, so the queue never fills. Target: <= bare + digest
         + 5 us, digest being ``hashlib.sha1(body).digest()`` timed on the same
         body in the same run.
c        the same 200 HTML pages served again and again after a warm-up pass and
         a flush, so the middleware knows them (its recent-pages cache).
         Target: <= 1.06x bare.

The lines after the table give what ``stats()`` counted (drops, fresh hits) and
the writer's cost per page (time in ``flush()``, off the request path here but
competing for the GIL in a server).

Every request carries a browser's User-Agent, as nearly all traffic does: the
middleware looks each one up (a request without one costs the WSGI adapter an
exception, about a microsecond, to spare the others a test).

Run it from the repository root with the project's virtualenv::

    python tests/benchmarks/hot_path.py            # full run, 1-2 minutes
    python tests/benchmarks/hot_path.py --quick    # about 15 seconds
    python tests/benchmarks/hot_path.py --only flask:c --rounds 300

Each stack and case runs up to ``--rounds`` rounds or ``--budget`` seconds.

It is a measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's package, whatever is installed

from sitemap_middleware import SitemapMiddleware  # noqa: E402
from sitemap_middleware.asgi import ASGISitemapMiddleware  # noqa: E402
from sitemap_middleware.starlette import get_sitemap  # noqa: E402

BATCH = 200  # requests per timed batch
KNOWN_PAGES = 200  # the pages of case c
FULL_ROUNDS = 150  # bare + wrapped batch pairs per stack and case
QUICK_ROUNDS = 30
# Seconds per stack and case after which no new round starts (once MIN_ROUNDS
# are done): case b's flushes cost what the writer thread costs, which may be a
# lot more than the requests themselves.
FULL_BUDGET = 20.0
QUICK_BUDGET = 2.5
MIN_ROUNDS = 5
# No rate limit: case (b) measures the writing of thousands of new pages.
CONFIG: dict[str, Any] = {
    "base_url": "http://localhost",
    "store": "memory://",
    "new_urls_per_minute": None,
}

JSON = "application/json"
HTML = "text/html; charset=utf-8"
JSON_BODY = (
    b'{"id": 4711, "name": "Widget", "price": {"amount": "19.90", "currency": '
    b'"EUR"}, "tags": ["garden", "tools"], "stock": 37, "updated": '
    b'"2024-05-01T10:00:00Z"}'
)

# A browser's User-Agent, as nearly every request carries one (the middleware
# looks it up: a crawler's claim is noted).
AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36"
    " (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
)


def html_page(size: int = 32 * 1024) -> bytes:
    """A plausible article page (head, navigation, text, footer) of ``size``
    bytes give or take a paragraph."""
    head = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>Pruning fruit trees in late winter | Field Notes</title>\n"
        '<meta name="description" content="When and how to prune apple and pear '
        'trees, with the tools you need and the mistakes to avoid.">\n'
        '<link rel="stylesheet" href="/static/site.3f9a1c.css">\n'
        '<script defer src="/static/site.8b2e4d.js"></script>\n'
        '<meta property="og:title" content="Pruning fruit trees in late winter">\n'
        '<meta property="og:image" content="/static/img/orchard.jpg">\n'
        "</head>\n<body>\n"
    )
    nav = "".join(
        f'<li><a href="/section/{n}">Section {n}</a></li>\n' for n in range(1, 21)
    )
    words = [
        "the",
        "orchard",
        "branches",
        "buds",
        "spur",
        "leader",
        "cut",
        "angle",
        "sap",
        "frost",
        "ladder",
        "saw",
        "shears",
        "growth",
        "fruit",
        "wood",
        "light",
        "air",
        "canopy",
        "tree",
        "winter",
        "spring",
    ]
    paragraphs: list[str] = []
    text_size = 0
    n = 0
    while text_size < size - 2200:
        sentence = " ".join(words[(n * 7 + i * 3) % len(words)] for i in range(60))
        paragraph = (
            f'<h2 id="step-{n}">Step {n}</h2>\n<p class="body">{sentence.capitalize()}'
            f'. See <a href="/blog/pruning-{n}">part {n}</a> and '
            f'<img src="/static/img/step-{n}.jpg" alt="Step {n}" width="640" '
            f'height="480"> for the detail.</p>\n'
        )
        paragraphs.append(paragraph)
        text_size += len(paragraph)
        n += 1
    foot = (
        '<footer><p>&copy; 2024 Field Notes. <a href="/about">About</a> '
        '<a href="/contact">Contact</a></p></footer>\n</body>\n</html>\n'
    )
    page = (
        f'{head}<header><nav><ul class="menu">\n{nav}</ul></nav></header>\n'
        f"<main><article>\n<h1>Pruning fruit trees in late winter</h1>\n"
        f"{''.join(paragraphs)}</article></main>\n{foot}"
    )
    return page.encode("utf-8")


HTML_BODY = html_page()


# -- the two stacks -------------------------------------------------------------


def make_flask() -> tuple[Any, Any, Any]:
    """A minimal Flask app (routes returning pre-built responses); returns the
    bare WSGI callable, the same callable wrapped, and the middleware."""
    from flask import Flask, Response

    app = Flask(__name__)
    as_json = Response(JSON_BODY, content_type=JSON)
    as_html = Response(HTML_BODY, content_type=HTML)

    @app.get("/items/<int:n>")
    def item(n: int) -> Response:
        return as_json

    @app.get("/api/items/<int:n>")
    def api_item(n: int) -> Response:
        return as_json

    @app.get("/pages/<int:n>")
    def page(n: int) -> Response:
        return as_html

    middleware = SitemapMiddleware(app.wsgi_app, CONFIG)
    return app.wsgi_app, middleware, middleware


def make_fastapi() -> tuple[Any, Any, Any]:
    """A minimal FastAPI app; returns its middleware stack below the sitemap
    middleware (bare), the sitemap middleware on top of it, and the latter."""
    from fastapi import FastAPI
    from fastapi.responses import Response

    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/items/{n}")
    async def item(n: int) -> Response:
        return Response(content=JSON_BODY, media_type=JSON)

    @app.get("/api/items/{n}")
    async def api_item(n: int) -> Response:
        return Response(content=JSON_BODY, media_type=JSON)

    @app.get("/pages/{n}")
    async def page(n: int) -> Response:
        return Response(content=HTML_BODY, media_type=HTML)

    app.add_middleware(ASGISitemapMiddleware, config=CONFIG)
    from starlette.testclient import TestClient

    with TestClient(app):  # start-up builds the middleware stack
        middleware = get_sitemap(app)
    return middleware.app, middleware, middleware


def _start_response(
    status: str, headers: list[tuple[str, str]], exc_info: Any = None
) -> Callable[[bytes], object]:
    return _write


def _write(data: bytes) -> None:
    pass


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _send(message: dict[str, Any]) -> None:
    pass


class WSGIStack:
    name = "flask"
    make = staticmethod(make_flask)

    def __init__(self) -> None:
        from werkzeug.test import EnvironBuilder

        self._builder = EnvironBuilder
        self._environs: dict[str, dict[str, Any]] = {}

    def requests(self, paths: Iterable[str], keep: bool = False) -> list[Any]:
        """Fresh environ dicts for ``paths`` (apps may mutate them)."""
        environs = []
        for path in paths:
            environ = self._environs.get(path)
            if environ is None:
                builder = self._builder(
                    path=path,
                    base_url="http://localhost",
                    headers={"User-Agent": AGENT},
                )
                environ = builder.get_environ()
                if keep:
                    self._environs[path] = environ
            environs.append(environ.copy())
        return environs

    def run(self, app: Any, environs: list[Any]) -> int:
        """Serve every request in full; the batch's time in nanoseconds."""
        start_response = _start_response
        start = time.perf_counter_ns()
        for environ in environs:
            body = app(environ, start_response)
            for _ in body:
                pass
            close = getattr(body, "close", None)
            if close is not None:
                close()
        return time.perf_counter_ns() - start

    def close(self) -> None:
        pass


class ASGIStack:
    name = "fastapi"
    make = staticmethod(make_fastapi)

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._scopes: dict[str, dict[str, Any]] = {}

    def requests(self, paths: Iterable[str], keep: bool = False) -> list[Any]:
        """Fresh scope dicts for ``paths`` (the router adds keys to them)."""
        scopes = []
        for path in paths:
            scope = self._scopes.get(path)
            if scope is None:
                scope = {
                    "type": "http",
                    "asgi": {"version": "3.0", "spec_version": "2.3"},
                    "http_version": "1.1",
                    "method": "GET",
                    "scheme": "http",
                    "path": path,
                    "raw_path": path.encode("ascii"),
                    "query_string": b"",
                    "root_path": "",
                    "headers": [
                        (b"host", b"localhost"),
                        (b"user-agent", AGENT.encode()),
                    ],
                    "server": ("localhost", 80),
                    "client": ("127.0.0.1", 50000),
                }
                if keep:
                    self._scopes[path] = scope
            scopes.append(dict(scope))
        return scopes

    def run(self, app: Any, scopes: list[Any]) -> int:
        """Serve every request in one event loop; the batch's time in ns."""
        return self._loop.run_until_complete(self._run(app, scopes))

    @staticmethod
    async def _run(app: Any, scopes: list[Any]) -> int:
        receive, send = _receive, _send
        start = time.perf_counter_ns()
        for scope in scopes:
            await app(scope, receive, send)
        return time.perf_counter_ns() - start

    def close(self) -> None:
        self._loop.close()


Stack = WSGIStack | ASGIStack


# -- the cases --------------------------------------------------------------------


@dataclass
class Case:
    name: str
    title: str
    paths: Callable[[int], list[str]]  # round number -> the batch's paths
    ratio: float | None = None  # target: wrapped <= ratio * bare
    slack_us: float | None = None  # target: wrapped <= bare + digest + slack
    flush: bool = False  # flush the recorder after each wrapped batch
    known: bool = False  # same pages every round: warm up, keep the requests


def _numbered(prefix: str, offset: int = 0) -> Callable[[int], list[str]]:
    def paths(round_: int) -> list[str]:
        first = offset + round_ * BATCH
        return [f"{prefix}{n}" for n in range(first, first + BATCH)]

    return paths


CASES = [
    Case("a", "JSON, not recorded", _numbered("/items/"), ratio=1.03),
    Case("a-excl", "JSON, excluded path", _numbered("/api/items/"), ratio=1.03),
    Case("b", "new HTML page", _numbered("/pages/", 10_000), slack_us=5.0, flush=True),
    Case(
        "c",
        "known HTML page",
        lambda round_: [f"/pages/{n % KNOWN_PAGES}" for n in range(BATCH)],
        ratio=1.06,
        known=True,
    ),
]


# -- measuring ------------------------------------------------------------------


@dataclass
class Result:
    stack: str
    case: Case
    bare: list[float] = field(default_factory=list)  # us per request, per batch
    wrapped: list[float] = field(default_factory=list)
    digest: list[float] = field(default_factory=list)
    flush: list[float] = field(default_factory=list)  # us per page flushed
    stats: dict[str, Any] = field(default_factory=dict)
    fresh_before: int = 0

    @property
    def bare_us(self) -> float:
        return statistics.median(self.bare)

    @property
    def wrapped_us(self) -> float:
        return statistics.median(self.wrapped)

    @property
    def digest_us(self) -> float:
        return statistics.median(self.digest) if self.digest else 0.0

    @property
    def overhead_us(self) -> float:
        return self.wrapped_us - self.bare_us

    @property
    def spread_us(self) -> float:
        """Half the interquartile range of the per-round paired differences."""
        diffs = [w - b for w, b in zip(self.wrapped, self.bare, strict=True)]
        if len(diffs) < 4:
            return 0.0
        quartiles = statistics.quantiles(diffs, n=4)
        return (quartiles[2] - quartiles[0]) / 2

    @property
    def target(self) -> str:
        if self.case.ratio is not None:
            return f"<= {self.case.ratio:.2f}x"
        return f"<= +{self.digest_us:.1f}+{self.case.slack_us:.0f} us"

    @property
    def passed(self) -> bool:
        if self.case.ratio is not None:
            return self.wrapped_us <= self.case.ratio * self.bare_us
        assert self.case.slack_us is not None
        return self.wrapped_us <= self.bare_us + self.digest_us + self.case.slack_us


def timed(stack: Stack, app: Any, requests: list[Any]) -> float:
    """One batch with the collector off; microseconds per request."""
    gc.disable()
    try:
        elapsed = stack.run(app, requests)
    finally:
        gc.enable()
    return elapsed / len(requests) / 1000


def time_digest(body: bytes, count: int = BATCH) -> float:
    """``hashlib.sha1(body).digest()``, microseconds per call."""
    sha1 = hashlib.sha1
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(count):
            sha1(body).digest()
        elapsed = time.perf_counter_ns() - start
    finally:
        gc.enable()
    return elapsed / count / 1000


def measure(stack: Stack, case: Case, rounds: int, budget: float) -> Result:
    # One app: "wrapped" is the middleware around the very callable "bare" is,
    # so that the two differ by the middleware alone.
    bare, wrapped, middleware = stack.make()
    result = Result(stack.name, case)

    # Warm up both apps (imports, routing caches, the ASGI middleware stack, the
    # writer thread) on paths outside the measured ones.
    warm = case.paths(0 if case.known else rounds)
    for app in (bare, wrapped):
        stack.run(app, stack.requests(warm, keep=case.known))
    middleware.flush(None)
    if case.known:  # the warm-up pass recorded them: the next ones are fresh
        recorded = middleware.stats()["recorded"]
        if recorded < KNOWN_PAGES:
            print(f"warning: warm-up recorded {recorded} pages", file=sys.stderr)
    result.fresh_before = middleware.stats()["seen"].get("fresh", 0)

    deadline = time.perf_counter() + budget
    for round_ in range(rounds):
        if round_ >= MIN_ROUNDS and time.perf_counter() > deadline:
            break
        paths = case.paths(round_)
        batches = [(bare, result.bare), (wrapped, result.wrapped)]
        if round_ % 2:
            batches.reverse()  # neither variant always runs first
        for app, times in batches:
            requests = stack.requests(paths, keep=case.known)
            times.append(timed(stack, app, requests))
            if app is wrapped and case.flush:
                # Every request queued a new page: the writer's cost per page
                # (a lower bound if its own timer took some of them already).
                start = time.perf_counter_ns()
                middleware.flush(None)
                elapsed = time.perf_counter_ns() - start
                result.flush.append(elapsed / len(requests) / 1000)
        if case.slack_us is not None:
            result.digest.append(time_digest(HTML_BODY))

    middleware.flush(None)
    result.stats = middleware.stats()
    middleware.close()
    return result


# -- reporting ------------------------------------------------------------------


def report(results: list[Result]) -> None:
    header = (
        f"{'stack':<8} {'case':<7} {'n':>3} {'bare us':>8} {'wrapped':>8} "
        f"{'overhead':>9} {'+/-':>5} {'ratio':>6}  {'target':<18} result"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r.stack:<8} {r.case.name:<7} {len(r.bare):3} {r.bare_us:8.2f} "
            f"{r.wrapped_us:8.2f} {r.overhead_us:+9.2f} {r.spread_us:5.2f} "
            f"{r.wrapped_us / r.bare_us:6.3f}  {r.target:<18} "
            f"{'PASS' if r.passed else 'MISS'}"
        )
    print()
    print("; ".join(f"{c.name}: {c.title}" for c in CASES))
    print(f"n: rounds of one bare and one wrapped batch of {BATCH} requests")
    print("+/-: half the interquartile range of the per-round differences (us)")
    for r in results:
        skipped, dropped, seen = (r.stats[k] for k in ("skipped", "dropped", "seen"))
        label = f"{r.stack} {r.case.name}:"
        if r.case.name.startswith("a"):
            print(f"{label:<15} skipped {dict(skipped)}")
        elif r.case.name == "b":
            flush = statistics.median(r.flush) if r.flush else 0.0
            print(
                f"{label:<15} recorded {r.stats['recorded']}, "
                f"dropped {sum(dropped.values())} {dict(dropped)}, "
                f"digest {r.digest_us:.2f} us ({len(HTML_BODY)} B body), "
                f"writer {flush:.1f} us/page in flush()"
            )
        else:
            fresh = seen.get("fresh", 0)
            print(
                f"{label:<15} seen.fresh {r.fresh_before} -> {fresh} "
                f"(+{fresh - r.fresh_before}), recorded {r.stats['recorded']}, "
                f"dropped {sum(dropped.values())}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Per-request cost of the sitemap middleware, bare vs wrapped."
    )
    parser.add_argument("--quick", action="store_true", help="a ~15 s run")
    parser.add_argument("--rounds", type=int, help="batch pairs per stack and case")
    parser.add_argument(
        "--budget", type=float, help="seconds per stack and case (default 20)"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="STACK[:CASE]",
        help="run only these (flask, fastapi; a, a-excl, b, c); repeatable",
    )
    args = parser.parse_args(argv)
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else FULL_ROUNDS)
    budget = args.budget or (QUICK_BUDGET if args.quick else FULL_BUDGET)
    warnings.simplefilter("ignore")  # framework deprecations are not our subject

    stacks: list[Stack] = [WSGIStack(), ASGIStack()]
    wanted = [tuple(item.split(":", 1)) for item in args.only or []]
    print(
        f"python {sys.version.split()[0]}, up to {rounds} rounds of {BATCH} "
        f"requests per variant or {budget:g} s per case, HTML body {len(HTML_BODY)} B"
    )
    started = time.perf_counter()
    results = []
    for stack in stacks:
        for case in CASES:
            if wanted and not any(
                w[0] == stack.name and (len(w) == 1 or w[1] == case.name)
                for w in wanted
            ):
                continue
            results.append(measure(stack, case, rounds, budget))
        stack.close()
    print(f"measured in {time.perf_counter() - started:.0f} s\n")
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
