"""Instructions the sitemap middleware adds per request, counted with callgrind.

Each variant runs in its own process under ``valgrind --tool=callgrind``, once with
N requests and once with 5N; the difference divided by 4N is the cost of one
request, start-up and warm-up cancelling out. The app is a do-nothing WSGI app or
a do-nothing ASGI app; the variants are the bare app, a *minimal* middleware (what
any recorder must do: classify the request from method, path and headers, read the
status and headers once, and one set lookup for a known page) and the sitemap
middleware on a ``memory://`` store. Two cases:

json   a JSON response at ``/items/<n>``: not recorded.
known  one HTML page recorded before the counted requests and served again:
       a known, fresh page.
new    an HTML page never seen at ``/pages/<n>``: a recording, handed to the
       writer. Only the request thread's instructions are counted (callgrind's
       ``--separate-threads``), so the writer's work on the page is left out.

The table gives instructions per request added to the bare app and the ratio to
the minimal middleware's; the targets: json <= 1.6x, known <= 1.7x, new <= 2x
(1.5x the stretch for the first two). Run from the repository root::

    python tests/benchmarks/instructions.py            # N = 2000, ~2 minutes
    python tests/benchmarks/instructions.py --n 500    # quicker, a little noisier
    python tests/benchmarks/instructions.py --only wsgi --case known  # one figure

``new`` varies by about 1k instructions between runs (the writer thread takes
the GIL from the request thread at times), the other cases by less. With
``--stopped`` the writer thread is never started: what is queued stays queued
(the garbage collector walks it, as a lagging writer's backlog), and every run
counts the same::

    python tests/benchmarks/instructions.py --n 1000 --stopped

A measurement, not a test: the exit status is 0 whatever the figures. ``--child``
is the entry point of the measured processes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's package, whatever is installed

from callgrind import counted  # noqa: E402

CONFIG: dict[str, Any] = {"base_url": "http://localhost", "store": "memory://"}
HTML = (
    b"<!doctype html><html><head><title>t</title></head>"
    b"<body><main>Hi</main></body></html>"
)
JSON = b'{"ok": true}'
PLAIN_HEADERS = [("Content-Type", "application/json"), ("Content-Length", "12")]
PAGE_HEADERS = [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", "85")]
VARIANTS = ("bare", "minimal", "sitemap")
CASES = ("json", "known", "new")
# A browser's User-Agent, as most requests carry one: the middleware looks it
# up (a crawler's claim is noted).
AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36"
    " (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
)
TARGETS = {"json": 1.6, "known": 1.7, "new": 2.0}  # x the minimal middleware
STACKS = ("wsgi", "asgi")


# -- the apps and the minimal middleware ---------------------------------------


def wsgi_app(
    environ: dict[str, Any], start_response: Callable[..., Any]
) -> list[bytes]:
    if environ["PATH_INFO"].startswith("/items/"):
        start_response("200 OK", PLAIN_HEADERS)
        return [JSON]
    start_response("200 OK", PAGE_HEADERS)
    return [HTML]


async def asgi_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["path"].startswith("/items/"):
        headers, body = _ASGI_PLAIN, JSON
    else:
        headers, body = _ASGI_PAGE, HTML
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _encoded(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode(), v.encode()) for k, v in headers]


_ASGI_PLAIN = _encoded(PLAIN_HEADERS)
_ASGI_PAGE = _encoded(PAGE_HEADERS)


class MinimalWSGI:
    """The least a recorder can do per request."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        self.known = {"/page"}

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        path = environ["PATH_INFO"]
        if (
            environ["REQUEST_METHOD"] != "GET"
            or path.startswith("/admin/")
            or "HTTP_AUTHORIZATION" in environ
            or "HTTP_COOKIE" in environ
        ):
            return self.app(environ, start_response)  # type: ignore[no-any-return]
        known = self.known

        def watching(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            html = False
            for name, value in headers:
                if name.lower() == "content-type":
                    html = value.startswith("text/html")
            if status[:3] == "200" and html and path in known:
                pass  # a known page: nothing to do
            return start_response(status, headers, exc_info)

        return self.app(environ, watching)  # type: ignore[no-any-return]


class MinimalASGI:
    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        self.known = {"/page"}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope["path"]
        if (
            scope["type"] != "http"
            or scope["method"] != "GET"
            or path.startswith("/admin/")
        ):
            await self.app(scope, receive, send)
            return
        for name, _ in scope["headers"]:
            if name in (b"authorization", b"cookie"):
                await self.app(scope, receive, send)
                return
        known = self.known

        async def watching(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                html = False
                for name, value in message["headers"]:
                    if name == b"content-type":
                        html = value.startswith(b"text/html")
                if message["status"] == 200 and html and path in known:
                    pass
            await send(message)

        await self.app(scope, receive, watching)


# -- one measured process ------------------------------------------------------


def _build(stack: str, variant: str) -> Any:
    if stack == "wsgi":
        if variant == "bare":
            return wsgi_app
        if variant == "minimal":
            return MinimalWSGI(wsgi_app)
        from sitemap_middleware import SitemapMiddleware

        return SitemapMiddleware(wsgi_app, CONFIG)
    if variant == "bare":
        return asgi_app
    if variant == "minimal":
        return MinimalASGI(asgi_app)
    from sitemap_middleware import ASGISitemapMiddleware

    return ASGISitemapMiddleware(asgi_app, CONFIG)


def _environ(path: str) -> dict[str, Any]:
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "80",
        "HTTP_HOST": "localhost",
        "HTTP_ACCEPT": "text/html",
        "HTTP_USER_AGENT": AGENT,
        "wsgi.url_scheme": "http",
    }


def _scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"localhost"),
            (b"accept", b"text/html"),
            (b"user-agent", AGENT.encode()),
        ],
    }


def child(stack: str, variant: str, case: str, n: int, stopped: bool) -> None:
    if stopped:
        from sitemap_middleware.recording.recorder import Recorder

        # The first request starts the writer through this: it never runs.
        Recorder.start = lambda self: None  # type: ignore[method-assign]
    app = _build(stack, variant)
    if case == "json":
        paths = [f"/items/{i}" for i in range(n)]
    elif case == "new":
        paths = [f"/pages/{i}" for i in range(n)]
    else:
        paths = ["/page"] * n

    def start_response(status: str, headers: Any, exc_info: Any = None) -> Any:
        return None

    if stack == "wsgi":

        def one(path: str) -> None:
            body = app(_environ(path), start_response)
            for _ in body:
                pass
            close = getattr(body, "close", None)
            if close is not None:
                close()

        if case == "known":
            one("/page")
            if variant == "sitemap":
                app.flush()
        for path in paths:
            one(path)
    else:

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Any) -> None:
            pass

        async def run() -> None:
            if case == "known":
                await app(_scope("/page"), receive, send)
                if variant == "sitemap":
                    app.flush()
            for path in paths:
                await app(_scope(path), receive, send)

        asyncio.run(run())
    if case == "new":
        # The writer's backlog is not the request's cost: leave without the
        # exit hook's flush, which would digest the queued pages on this thread.
        sys.stdout.flush()
        os._exit(0)
    if variant == "sitemap":
        stats = app.stats()
        if case == "known":
            assert stats["seen"].get("fresh", 0) == n, stats
        app.close()


# -- the driver ----------------------------------------------------------------


def _instructions(stack: str, variant: str, case: str, n: int, stopped: bool) -> int:
    # The request thread's only: the writer's work on a page is left out.
    more = ["--stopped"] if stopped else []
    args = ("--child", stack, variant, case, str(n), *more)
    return counted(__file__, *args, first_thread=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--child", nargs=4, metavar=("STACK", "VARIANT", "CASE", "N"))
    parser.add_argument("--only", choices=STACKS, help="one stack")
    parser.add_argument(
        "--case", choices=CASES, action="append", help="a case (repeatable)"
    )
    parser.add_argument(
        "--stopped", action="store_true", help="never start the writer thread"
    )
    args = parser.parse_args()
    if args.child:
        stack, variant, case, n = args.child
        child(stack, variant, case, int(n), args.stopped)
        return
    n = args.n
    stopped = ", the writer stopped" if args.stopped else ""
    print(f"instructions per request (callgrind, {n} and {5 * n} requests{stopped})")
    header = f"{'stack':6} {'case':6} {'bare':>8} {'+minimal':>9} {'+sitemap':>9}"
    print(f"{header}  ratio  target")
    for stack in [args.only] if args.only else STACKS:
        for case in args.case or CASES:
            per = {}
            for variant in VARIANTS:
                low = _instructions(stack, variant, case, n, args.stopped)
                high = _instructions(stack, variant, case, 5 * n, args.stopped)
                per[variant] = (high - low) / (4 * n)
            minimal = per["minimal"] - per["bare"]
            ours = per["sitemap"] - per["bare"]
            ratio = ours / minimal
            target = TARGETS[case]
            print(
                f"{stack:6} {case:6} {per['bare']:8.0f} {minimal:+9.0f} {ours:+9.0f}"
                f"  {ratio:4.2f}x  <={target}x {'ok' if ratio <= target else '--'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
