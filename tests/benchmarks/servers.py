"""Server CPU per request under real servers, a bare app against the same app
wrapped by the sitemap middleware, every request a page never seen before.

Stacks: gunicorn (sync workers) serving a Flask app, and uvicorn serving a
Starlette app. Each answers ``/page/<n>`` with an HTML page of about 2 KiB
that depends on ``n`` alone (its head, ``--head``: ``plain``, a charset and a
title; ``seo``, what a blog's template writes besides: a canonical link, a
description, Open Graph and Twitter cards, a stylesheet and a script);
wrapped, the middleware records it (``sqlite://``
store in a fresh temporary folder by default, as the acceptance tests run),
each one (no limit on new URLs a minute).

A run starts the server, sends 200 warm-up requests (pages outside the
measured ones), notes the CPU its processes have used so far (user + sys of
the server and its workers, from ``/proc/<pid>/stat``), sends ``--urls``
requests (5,000 distinct pages, one connection each, from this process's load
generator: ``--connections`` threads, each sending its next request once its
last is answered, each request's latency noted), then
stops it with SIGTERM (the middleware flushes what it queued) and takes the
CPU of the whole process tree from ``resource.getrusage(RUSAGE_CHILDREN)``
once it has been waited for. The CPU of the measured requests is that total
less what was used before them: start-up and warm-up are left out, the
writes that the requests caused are counted to the end, flush included.

Bare and wrapped runs alternate (bare, wrapped, bare, ...) ``--rounds``
times; the table gives, per stack, the median CPU per request of each and
their ratio (target: wrapped <= 1.25x bare), the median of the runs' 99th
percentile latency and its ratio (target: <= 1.5x), and the median throughput
of the measured requests; the median time the server's garbage collector spent
per measured request and its longest pause in a run (``gc.callbacks`` in the
server: a wrapped app keeps pages for its writer, and what outlives the young
generations is collected only by full collections, which walk the whole heap);
with an SQLite store, the fewest pages a wrapped run left
stored (warm-up included: 200 more than ``--urls`` when every page was kept).
The client's own CPU is not counted, but it shares the machine: on 2 cores a
busy machine shows in every figure.

Run it from the repository root with the project's virtualenv::

    python tests/benchmarks/servers.py                      # 3 rounds, ~2 minutes
    python tests/benchmarks/servers.py --workers 2 --connections 4
    python tests/benchmarks/servers.py --only uvicorn --rounds 5
    python tests/benchmarks/servers.py --store memory://
    python tests/benchmarks/servers.py --head seo

As a module, ``servers:app`` is the server's entry point (``BENCH_STACK``
``wsgi`` or ``asgi``; ``BENCH_STORE`` empty for the bare app). It is a
measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support import load_app  # noqa: E402

WARM_UP = 200
TARGET = 1.25
P99_TARGET = 1.5


# The head of every page (--head): "plain", a charset and a title; "seo", what
# a blog's template writes besides (its canonical link, a description, Open
# Graph and Twitter cards, a stylesheet, a script).
HEADS = {
    "plain": "<meta charset=utf-8><title>Page {n}</title>",
    "seo": (
        '<meta charset="utf-8"><title>Page {n} | Example</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="description" content="What page {n} is about, in a line.">'
        '<link rel="canonical" href="{base}/page/{n}">'
        '<meta property="og:type" content="article">'
        '<meta property="og:title" content="Page {n}">'
        '<meta property="og:description" content="What page {n} is about.">'
        '<meta property="og:url" content="{base}/page/{n}">'
        '<meta name="twitter:card" content="summary">'
        '<link rel="stylesheet" href="/static/site.css">'
        '<script src="/static/site.js" defer></script>'
    ),
}


def body(n: int) -> bytes:
    """The page of ``n``: about 2 KiB of HTML that depends only on ``n`` (and
    on ``BENCH_HEAD``, ``BENCH_BASE_URL``: the same in the server and here)."""
    words = " ".join(f"word{(n * 7 + i) % 997}" for i in range(200))
    head = HEADS[os.environ.get("BENCH_HEAD", "plain")].format(
        n=n, base=os.environ.get("BENCH_BASE_URL", "")
    )
    return (
        f"<!doctype html><html lang=en><head>{head}</head><body><main>"
        f"<h1>Page {n}</h1><p>{words}</p></main></body></html>"
    ).encode()


def _flask(config: dict[str, Any] | None) -> Any:
    from flask import Flask, Response

    flask = Flask(__name__)

    @flask.route("/page/<int:n>")
    def page(n: int) -> Response:
        return Response(body(n), content_type="text/html; charset=utf-8")

    if config is not None:
        from sitemap_middleware import SitemapMiddleware

        flask.wsgi_app = SitemapMiddleware(flask.wsgi_app, config)  # type: ignore[method-assign]
    return flask


def _starlette(config: dict[str, Any] | None) -> Any:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def page(request: Request) -> Response:
        n = int(request.path_params["n"])
        return Response(body(n), media_type="text/html; charset=utf-8")

    middleware = []
    if config is not None:
        from sitemap_middleware import ASGISitemapMiddleware

        middleware.append(Middleware(ASGISitemapMiddleware, config=config))
    return Starlette(routes=[Route("/page/{n:int}", page)], middleware=middleware)


def _watch_collections(path: str) -> None:
    """Note each collection of the garbage collector in ``path``: when it
    ended (the clock the benchmark reads too) and how long it took."""
    import gc

    began = [0.0]
    out = open(path, "a", buffering=1)  # noqa: SIM115 (the process's life)

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        else:
            out.write(f"{time.time()} {time.perf_counter() - began[0]}\n")

    gc.callbacks.append(note)


def _collections(path: str, start: float, end: float) -> list[float]:
    """The collections ``_watch_collections`` noted from ``start`` to ``end``."""
    try:
        lines = Path(path).read_text().split("\n")
    except FileNotFoundError:
        return []
    ended = [tuple(map(float, line.split())) for line in lines if line]
    return [took for at, took in ended if start <= at <= end]


def _app() -> Any:
    if os.environ.get("BENCH_GC_LOG"):
        _watch_collections(os.environ["BENCH_GC_LOG"])
    store = os.environ.get("BENCH_STORE")
    config: dict[str, Any] | None = None
    if store:
        # Every new page recorded, not the default 1,000 a minute: the
        # figure is the cost of recording each page a request brings.
        config = {
            "base_url": os.environ["BENCH_BASE_URL"],
            "store": store,
            "new_urls_per_minute": None,
        }
    return (_flask if os.environ["BENCH_STACK"] == "wsgi" else _starlette)(config)


# --- the client and the server's CPU ---------------------------------------


def get(port: int, n: int) -> None:
    """One request on a connection of its own (gunicorn's sync workers close
    every connection anyway), its page checked."""
    status, data = load_app.get(port, f"/page/{n}")
    if status != 200 or data != body(n):
        raise AssertionError(f"/page/{n}: {status}")


def load(port: int, pages: range, connections: int) -> list[float]:
    """GET each of ``pages`` from ``connections`` threads at once, each
    sending its next request once its last is answered: every request's
    latency, in seconds."""
    pending = iter(pages)
    lock = threading.Lock()
    latencies: list[float] = []
    failures: list[BaseException] = []

    def client() -> None:
        while True:
            with lock:
                n = next(pending, None)
            if n is None:
                return
            started = time.perf_counter()
            try:
                get(port, n)
            except BaseException as exc:  # reported once every thread ends
                failures.append(exc)
                return
            latencies.append(time.perf_counter() - started)

    threads = [threading.Thread(target=client) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return latencies


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def tree_cpu(root: int) -> float:
    """User + sys seconds used so far by ``root`` and its descendants alive
    (and the children they have waited for)."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        # After the command: state ppid ... utime(12) stime(13) cutime cstime.
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(value) for value in fields[11:15])
    total, wanted = 0, {root}
    while wanted:
        pid = wanted.pop()
        total += times.get(pid, 0)
        wanted |= {child for child, parent in parents.items() if parent == pid}
    return total / tick


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Run:
    cpu: float  # seconds of server CPU per measured request
    rate: float  # measured requests a second (wall clock)
    p99: float  # the 99th percentile latency of the measured requests, seconds
    recorded: int  # pages the store holds after the run (sqlite only)
    gc: float  # seconds of garbage collection per measured request
    pause: float  # the longest collection during the measured requests, seconds


def command(server: str, port: int, workers: int) -> list[str]:
    if server == "gunicorn":
        return [
            sys.executable,
            *("-m", "gunicorn", "-k", "sync", "-w", str(workers)),
            *("-b", f"127.0.0.1:{port}", "servers:app"),
        ]
    return [
        sys.executable,
        *("-m", "uvicorn", "--port", str(port), "--no-access-log", "servers:app"),
        *(["--workers", str(workers)] if workers > 1 else []),
    ]


def run(
    server: str,
    wrapped: bool,
    store: str,
    urls: int,
    workers: int,
    connections: int,
    head: str = "plain",
) -> Run:
    port = free_port()
    # The server's pages, and the client's check of each against body().
    os.environ["BENCH_BASE_URL"] = f"http://127.0.0.1:{port}"
    os.environ["BENCH_HEAD"] = head
    with tempfile.TemporaryDirectory() as folder:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]),
            "BENCH_STACK": "wsgi" if server == "gunicorn" else "asgi",
            "BENCH_STORE": store.format(folder=folder) if wrapped else "",
            "BENCH_GC_LOG": f"{folder}/gc.log",
        }
        before = children_cpu()
        with open(f"{folder}/server.log", "wb") as log:
            process = subprocess.Popen(
                command(server, port, workers),
                env=env,
                cwd=folder,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    get(port, urls)
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            for n in range(urls + 1, urls + WARM_UP):
                get(port, n)
            started_cpu = tree_cpu(process.pid)
            started = time.perf_counter()
            window = time.time()
            latencies = load(port, range(urls), connections)
            elapsed = time.perf_counter() - started
            collections = _collections(f"{folder}/gc.log", window, time.time())
        finally:
            process.terminate()  # SIGTERM: an orderly shutdown that flushes
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        total = children_cpu() - before
        if process.returncode not in (0, -15):
            sys.stderr.write(Path(f"{folder}/server.log").read_text()[-2000:])
        recorded = urls
        if wrapped and env["BENCH_STORE"].startswith("sqlite:"):
            from sitemap_middleware import open_store

            with open_store(env["BENCH_STORE"]) as stored:
                recorded = stored.count()
    return Run(
        (total - started_cpu) / urls,
        urls / elapsed,
        percentile(latencies, 0.99),
        recorded,
        sum(collections) / urls,
        max(collections, default=0.0),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=5000, help="pages measured")
    parser.add_argument("--rounds", type=int, default=3, help="bare/wrapped pairs")
    parser.add_argument("--workers", type=int, default=1, help="server workers")
    parser.add_argument(
        "--connections", type=int, default=1, help="the load generator's clients"
    )
    parser.add_argument("--only", default="gunicorn,uvicorn", help="gunicorn,uvicorn")
    parser.add_argument("--head", default="plain", choices=sorted(HEADS))
    parser.add_argument(
        "--store",
        default="sqlite:///{folder}/sitemap.sqlite3",
        help="the wrapped app's store ({folder}: a fresh temporary folder)",
    )
    args = parser.parse_args()
    print(
        f"{args.urls:,} new pages a run, {args.rounds} rounds bare/wrapped,"
        f" {args.workers} worker(s), {args.connections} connection(s),"
        f" store {args.store}, {args.head} heads"
    )
    print(
        f"{'server':<9} {'bare us':>8} {'wrapped us':>10} {'ratio':>6} {'target':>7}"
        f"  {'p99 ms':>6} {'wrapped':>7} {'ratio':>6} {'target':>7}"
        f"  {'bare/s':>7} {'wrapped/s':>9} {'throughput':>10}"
    )
    for server in args.only.split(","):
        runs: dict[bool, list[Run]] = {False: [], True: []}
        for _ in range(args.rounds):
            for wrapped in (False, True):
                runs[wrapped].append(
                    run(
                        server,
                        wrapped,
                        args.store,
                        args.urls,
                        args.workers,
                        args.connections,
                        args.head,
                    )
                )
        cpu = {w: statistics.median(r.cpu for r in runs[w]) for w in runs}
        rate = {w: statistics.median(r.rate for r in runs[w]) for w in runs}
        p99 = {w: statistics.median(r.p99 for r in runs[w]) for w in runs}
        ratio = cpu[True] / cpu[False]
        late = p99[True] / p99[False]
        print(
            f"{server:<9} {cpu[False] * 1e6:>8.0f} {cpu[True] * 1e6:>10.0f}"
            f" {ratio:>5.2f}x <={TARGET}x {'ok' if ratio <= TARGET else '--'}"
            f"  {p99[False] * 1e3:>6.1f} {p99[True] * 1e3:>7.1f} {late:>5.2f}x"
            f" <={P99_TARGET}x {'ok' if late <= P99_TARGET else '--'}"
            f"  {rate[False]:>7.0f} {rate[True]:>9.0f}"
            f" {rate[True] / rate[False] - 1:>+9.0%}"
        )
        gc = {w: statistics.median(r.gc for r in runs[w]) for w in runs}
        pause = {w: statistics.median(r.pause for r in runs[w]) for w in runs}
        print(
            f"{'':<9} garbage collection a request: bare {gc[False] * 1e6:.1f} us,"
            f" wrapped {gc[True] * 1e6:.1f} us; longest pause: bare"
            f" {pause[False] * 1e3:.1f} ms, wrapped {pause[True] * 1e3:.1f} ms"
        )
        for wrapped in (False, True):
            each = " ".join(f"{r.cpu * 1e6:.0f}" for r in runs[wrapped])
            print(f"{'':<9} {'wrapped' if wrapped else 'bare'} runs, us: {each}")
        if args.store.startswith("sqlite:"):
            least = min(r.recorded for r in runs[True])
            print(f"{'':<9} pages stored after a wrapped run: at least {least:,}")


if os.environ.get("BENCH_STACK"):
    app = _app()

if __name__ == "__main__":
    main()
