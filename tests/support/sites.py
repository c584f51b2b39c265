"""The behaviour apps: one table of routes served by Flask (WSGI) and by Starlette
(ASGI), each wrapped by the middleware, behind one client API."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote_to_bytes

from support.helpers import Reply

from sitemap_middleware import Entry

# The config every test site starts from.
BASE = {"base_url": "http://localhost", "store": "memory://"}
HTML = "text/html; charset=utf-8"
JWT_PATH = "/verify/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-123"


def html(title: str, head: str = "") -> bytes:
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{title}</title>{head}</head><body><main><h1>{title}</h1>"
        f"<p>Some words about {title}.</p></main></body></html>"
    ).encode()


# path -> (status, headers, body chunks); bodies with several chunks stream.
ROUTES: dict[str, tuple[int, dict[str, str], list[bytes]]] = {
    "/": (200, {"Content-Type": HTML}, [html("Home")]),
    "/about": (200, {"Content-Type": HTML}, [html("About")]),
    "/blog/café": (200, {"Content-Type": HTML}, [html("Café")]),
    "/blog/it's": (200, {"Content-Type": HTML}, [html("It's")]),
    "/a&b": (200, {"Content-Type": HTML}, [html("A and B")]),
    "/search": (200, {"Content-Type": HTML}, [html("Search")]),
    "/xhtml": (200, {"Content-Type": "application/xhtml+xml"}, [html("X")]),
    "/json": (200, {"Content-Type": "application/json"}, [b'{"a": 1}']),
    "/private": (200, {"Content-Type": HTML, "Cache-Control": "private"}, [html("P")]),
    "/no-store": (200, {"Content-Type": HTML, "Cache-Control": "no-store"}, [b"x"]),
    "/cookie": (200, {"Content-Type": HTML, "Set-Cookie": "a=1"}, [html("C")]),
    "/vary": (200, {"Content-Type": HTML, "Vary": "Cookie"}, [html("V")]),
    "/vary-any": (200, {"Content-Type": HTML, "Vary": "*"}, [html("V")]),
    "/noindex": (200, {"Content-Type": HTML, "X-Robots-Tag": "noindex"}, [b"n"]),
    "/bot-none": (
        200,
        {"Content-Type": HTML, "X-Robots-Tag": "googlebot: none"},
        [html("N")],
    ),
    "/download": (
        200,
        {"Content-Type": HTML, "Content-Disposition": "attachment; filename=a.html"},
        [html("D")],
    ),
    "/old": (301, {"Location": "/about"}, [b""]),
    "/gone": (410, {"Content-Type": HTML}, [html("Gone")]),
    "/error": (500, {"Content-Type": HTML}, [html("Error")]),
    "/account": (200, {"Content-Type": HTML}, [html("Your account")]),
    "/admin/": (200, {"Content-Type": HTML}, [html("Admin")]),
    "/api/posts": (200, {"Content-Type": "application/json"}, [b"[]"]),
    "/stream": (200, {"Content-Type": HTML}, [b"<html><body>", b"one ", b"two</body>"]),
    "/events": (200, {"Content-Type": "text/event-stream"}, [b"data: 1\n\n"] * 3),
    "/canonical-self": (
        200,
        {"Content-Type": HTML},
        [html("S", '<link rel="canonical" href="http://localhost/%63anonical-self">')],
    ),
    "/canonical-other": (
        200,
        {"Content-Type": HTML},
        [html("O", '<link rel="canonical" href="/about">')],
    ),
    "/canonical-foreign": (
        200,
        {"Content-Type": HTML},
        [
            html(
                "F",
                "<link rel=canonical href='https://evil.example/canonical-foreign'>",
            )
        ],
    ),
    "/draft": (
        200,
        {"Content-Type": HTML},
        [html("Draft", '<meta name="robots" content="noindex, follow">')],
    ),
    "/p;jsessionid=1A2B": (200, {"Content-Type": HTML}, [html("P")]),
    JWT_PATH: (200, {"Content-Type": HTML}, [html("Verify")]),
}


def _spec(path: str) -> tuple[int, dict[str, str], list[bytes]]:
    return ROUTES.get(path, (404, {"Content-Type": HTML}, [html("Not found")]))


def flask_app(config: dict[str, Any], robots: bytes | None = None) -> Any:
    from flask import Flask, Response

    from sitemap_middleware import SitemapMiddleware

    app = Flask(__name__)

    @app.route("/", defaults={"path": ""}, methods=["GET", "HEAD", "POST"])
    @app.route("/<path:path>", methods=["GET", "HEAD", "POST"])
    def page(path: str) -> Response:
        if path == "robots.txt" and robots is not None:
            return Response(robots, content_type="text/plain; charset=utf-8")
        status, headers, chunks = _spec("/" + path)
        body: Any = iter(chunks) if len(chunks) > 1 else chunks[0]
        response = Response(body, status=status, headers=headers)
        if "Content-Type" not in headers:
            del response.headers["Content-Type"]
        return response

    app.wsgi_app = SitemapMiddleware(app.wsgi_app, config)  # type: ignore[method-assign]
    return app


def starlette_app(config: dict[str, Any], robots: bytes | None = None) -> Any:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket

    from sitemap_middleware import ASGISitemapMiddleware

    async def page(request: Request) -> Response:
        path = request.url.path
        if path == "/robots.txt" and robots is not None:
            return Response(robots, media_type="text/plain")
        status, headers, chunks = _spec(path)
        if len(chunks) > 1:

            async def stream() -> Iterator[bytes]:  # type: ignore[misc]
                for chunk in chunks:
                    yield chunk

            return StreamingResponse(stream(), status, headers)
        return Response(chunks[0], status, headers)

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text(await websocket.receive_text())
        await websocket.close()

    return Starlette(
        routes=[
            WebSocketRoute("/ws", echo),
            Route("/{path:path}", page, methods=["GET", "HEAD", "POST"]),
        ],
        middleware=[Middleware(ASGISitemapMiddleware, config=config)],
    )


class Site:
    """A wrapped app and a client for it, the same API on both stacks."""

    def __init__(self, stack: str, app: Any) -> None:
        self.stack = stack
        self.app = app
        self.state: dict[str, int] = {}
        if stack == "wsgi":
            from werkzeug.test import Client

            self.middleware = app.wsgi_app
            # No cookie jar: tests send their own Cookie headers.
            self._client: Any = Client(app, use_cookies=False)
        else:
            from starlette.testclient import TestClient

            from sitemap_middleware.starlette import get_sitemap

            self._client = TestClient(app, base_url="http://localhost")
            self._client.__enter__()  # run the lifespan
            self.middleware = get_sitemap(app)

    @property
    def store(self) -> Any:
        return self.middleware.store

    def request(
        self, method: str, path: str, headers: dict[str, str] | None = None
    ) -> Reply:
        if self.stack == "wsgi":
            response = self._client.open(path, method=method, headers=headers or {})
            body = response.get_data()
            response.close()
            return Reply(response.status_code, response.headers, body)
        response = self._client.request(
            method, path, headers=headers, follow_redirects=False
        )
        # No cookie jar either: a cookie one response set is not sent again.
        self._client.cookies.clear()
        return Reply(response.status_code, response.headers, response.content)

    def get(self, path: str, headers: dict[str, str] | None = None) -> Reply:
        return self.request("GET", path, headers)

    def head(self, path: str, headers: dict[str, str] | None = None) -> Reply:
        return self.request("HEAD", path, headers)

    def websocket(self, path: str) -> Any:
        return self._client.websocket_connect(path)

    def visit(self, *paths: str) -> None:
        """GET each of ``paths`` (each must answer 200) and wait until recorded."""
        for path in paths:
            assert self.get(path).status == 200
        self.recorded()

    def fetch(self, wire: str, headers: list[tuple[str, str]] | None = None) -> int:
        """GET ``wire`` (the request target as sent: escapes are escapes, other
        characters one byte each) through the wrapped app, as a server would pass
        it on: WSGI gets the decoded ``PATH_INFO`` (latin-1 over the bytes) and the
        Host header values joined with commas; ASGI gets ``raw_path`` and every
        header line. No client normalises the target. Returns the status."""
        target, _, query = wire.partition("?")
        fields = headers if headers is not None else [("Host", "localhost")]
        if not any(name.lower() == "host" for name, _ in fields):
            fields = [("Host", "localhost"), *fields]
        raw = target.encode("latin-1")
        if self.stack == "wsgi":
            from werkzeug.test import EnvironBuilder

            environ = EnvironBuilder(path="/").get_environ()
            environ["PATH_INFO"] = unquote_to_bytes(raw).decode("latin-1")
            environ["QUERY_STRING"] = query
            environ.pop("HTTP_HOST", None)  # EnvironBuilder's own
            for name, value in fields:
                # A server joins repeated lines with commas (werkzeug's does).
                key = "HTTP_" + name.upper().replace("-", "_")
                environ[key] = f"{environ[key]},{value}" if key in environ else value
            seen: list[str] = []
            body = self.app(environ, lambda status, *_: seen.append(status))
            try:
                b"".join(body)
            finally:
                if hasattr(body, "close"):
                    body.close()
            return int(seen[0][:3])

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": unquote_to_bytes(raw).decode("utf-8", "replace"),
            "raw_path": raw,
            "root_path": "",
            "query_string": query.encode("latin-1"),
            "headers": [
                (name.lower().encode("latin-1"), value.encode("latin-1"))
                for name, value in fields
            ],
            "client": ("127.0.0.1", 50000),
            "server": ("localhost", 80),
        }
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        asyncio.run(self.app(scope, receive, send))
        return int(sent[0]["status"])

    def entries(self) -> dict[str, Entry]:
        """Stored path -> entry, in page order, after flushing the recorder."""
        return stored_entries(self.middleware)

    def recorded(self) -> list[str]:
        """The stored paths, in page order, after flushing the recorder."""
        return list(self.entries())

    def skipped(self) -> dict[str, int]:
        """The requests not recorded so far, by reason."""
        return dict(self.middleware.stats()["skipped"])

    def close(self) -> None:
        if self.stack == "asgi":
            self._client.__exit__(None, None, None)
        self.middleware.close()


def stored_entries(middleware: Any) -> dict[str, Entry]:
    """Stored path -> entry of a middleware's store, in page order, after
    flushing its recorder."""
    assert middleware.flush(5.0)
    store = middleware.store
    return {
        entry.path: entry
        for part in store.parts()
        for entry in store.entries(part.number)
    }


def make_site(stack: str, config: dict[str, Any], robots: bytes | None = None) -> Site:
    build = flask_app if stack == "wsgi" else starlette_app
    return Site(stack, build(config, robots))


# The routed apps: real routes (templates, a decorator, a mount or blueprint, a
# view that opts out) on both stacks. Flask spells the templates "/blog/<slug>",
# Starlette "/blog/{slug}"; ``state["version"]`` goes into every page's body.


def routed_flask_app(config: dict[str, Any], state: dict[str, int]) -> Any:
    from flask import Blueprint, Flask, Response, request

    from sitemap_middleware import sitemap, skip
    from sitemap_middleware.flask import Sitemap

    app = Flask(__name__)
    app.config["SITEMAP"] = config

    def page(title: str, status: int = 200) -> Response:
        body = html(f"{title} v{state['version']}")
        return Response(body, status=status, content_type=HTML)

    @app.route("/about")
    def about() -> Response:
        return page("About")

    @app.route("/search")
    def search() -> Response:
        return page("Search")

    @app.route("/blog/<slug>")
    @sitemap(changefreq="weekly", priority=0.7)
    def post(slug: str) -> Response:
        return page(slug)

    @app.route("/drafts/<slug>")
    @sitemap(exclude=True)
    def draft(slug: str) -> Response:
        return page(slug)

    @app.route("/products/<path:slug>")
    def product(slug: str) -> Response:
        return page(slug)

    @app.route("/preview/<slug>")
    def preview(slug: str) -> Response:
        if request.args.get("skip"):
            skip(request)
        return page(slug, int(request.args.get("status", state.get("status", 200))))

    docs = Blueprint("docs", __name__, url_prefix="/docs")

    @docs.route("/<name>")
    def doc(name: str) -> Response:
        return page(name)

    app.register_blueprint(docs)
    Sitemap(app)
    return app


def routed_starlette_app(config: dict[str, Any], state: dict[str, int]) -> Any:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    from sitemap_middleware import ASGISitemapMiddleware, sitemap, skip

    def page(title: str, status: int = 200) -> Response:
        return Response(html(f"{title} v{state['version']}"), status, media_type=HTML)

    async def about(request: Request) -> Response:
        return page("About")

    async def search(request: Request) -> Response:
        return page("Search")

    @sitemap(changefreq="weekly", priority=0.7)
    async def post(request: Request) -> Response:
        return page(request.path_params["slug"])

    @sitemap(exclude=True)
    async def draft(request: Request) -> Response:
        return page(request.path_params["slug"])

    async def product(request: Request) -> Response:
        return page(request.path_params["slug"])

    async def preview(request: Request) -> Response:
        if request.query_params.get("skip"):
            skip(request)
        status = int(request.query_params.get("status", state.get("status", 200)))
        return page(request.path_params["slug"], status)

    async def doc(request: Request) -> Response:
        return page(request.path_params["name"])

    return Starlette(
        routes=[
            Route("/about", about),
            Route("/search", search),
            Route("/blog/{slug}", post),
            Route("/drafts/{slug}", draft),
            Route("/products/{slug:path}", product),
            Route("/preview/{slug}", preview),
            Mount("/docs", routes=[Route("/{name}", doc)]),
        ],
        middleware=[Middleware(ASGISitemapMiddleware, config=config)],
    )


def make_routed_site(stack: str, config: dict[str, Any]) -> Site:
    """A routed app on ``stack``; ``site.state["version"]`` changes every page,
    ``site.state["status"]`` the status of /preview/<slug> (as ``?status=`` does)."""
    state = {"version": 1}
    build = routed_flask_app if stack == "wsgi" else routed_starlette_app
    site = Site(stack, build(config, state))
    site.state = state
    return site
