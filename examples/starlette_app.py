"""The demo site on Starlette, recorded by ``ASGISitemapMiddleware``.

Run: ``python examples/starlette_app.py`` (serves http://127.0.0.1:8000, or ``$PORT``).
``demo_content`` is a plain top-level import: running a file puts ``examples/`` on
``sys.path``, and tests that import the apps add that folder themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import demo_content
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from sitemap_middleware import site_map, sitemap
from sitemap_middleware.starlette import get_sitemap, middleware

# The middleware serves a site map for people at /site-map, and /llms.txt;
# /pages is the same map rendered by the app inside its own layout. The store is
# examples/instance/sitemap.sqlite3 however the app is started, as for the Flask
# demo.
DEFAULTS: dict[str, Any] = {
    "base_url": "http://127.0.0.1:8000",
    "store": demo_content.STORE,
    "html_sitemap": "/site-map",
    "llms_txt": True,
}


async def home(request: Request) -> Response:
    return HTMLResponse(demo_content.home_page())


async def about(request: Request) -> Response:
    return HTMLResponse(demo_content.about_page())


async def blog(request: Request) -> Response:
    return HTMLResponse(demo_content.blog_page())


@sitemap(params=demo_content.post_params)
async def post(request: Request) -> Response:
    page = demo_content.post_page(request.path_params["slug"])
    if page is None:
        raise HTTPException(404)
    return HTMLResponse(page)


def pages(request: Request) -> Response:
    # A plain def: Starlette runs it in a thread, as the store read needs.
    page = request.query_params.get("page", "1")
    try:
        mapped = site_map(get_sitemap(request.app), page=int(page))
    except (LookupError, ValueError):
        raise HTTPException(404) from None
    return HTMLResponse(demo_content.site_map_page(mapped))


async def search(request: Request) -> Response:
    return HTMLResponse(demo_content.search_page(request.query_params.get("q", "")))


async def account(request: Request) -> Response:
    if demo_content.SESSION_COOKIE not in request.cookies:
        return RedirectResponse("/login", 302)
    return HTMLResponse(demo_content.account_page())


async def login(request: Request) -> Response:
    if request.method == "GET":
        return HTMLResponse(demo_content.login_page())
    response = RedirectResponse("/account", 303)
    response.set_cookie(**demo_content.SESSION_COOKIE_ARGS)
    return response


async def admin(request: Request) -> Response:
    return HTMLResponse(demo_content.admin_page())


async def api_posts(request: Request) -> Response:
    return JSONResponse(demo_content.posts_json())


async def draft(request: Request) -> Response:
    return HTMLResponse(demo_content.draft_page())


async def old(request: Request) -> Response:
    return RedirectResponse("/about", 301)


async def gone(request: Request) -> Response:
    return HTMLResponse(demo_content.gone_page(), 410)


async def english(request: Request) -> Response:
    return HTMLResponse(demo_content.language_page("en", request.app.state.base_url))


async def german(request: Request) -> Response:
    return HTMLResponse(demo_content.language_page("de", request.app.state.base_url))


async def not_found(request: Request, exc: Exception) -> Response:
    return HTMLResponse(demo_content.not_found_page(), 404)


routes = [
    Route("/", home),
    Route("/about", about),
    Route("/blog/", blog),
    Route("/blog/{slug}", post),
    Route("/pages", pages),
    Route("/search", search),
    Route("/account", account),
    Route("/login", login, methods=["GET", "POST"]),
    Route("/admin/", admin),
    Route("/api/posts", api_posts),
    Route("/draft", draft),
    Route("/old", old),
    Route("/gone", gone),
    Route("/en/", english),
    Route("/de/", german),
]


def create_app(config: dict[str, Any] | None = None) -> Starlette:
    """Build the app; ``config`` overrides the sitemap defaults key by key.
    ``middleware(config)`` checks the config here: a mistake stops the
    factory, not the first request."""
    config = demo_content.with_store_folder({**DEFAULTS, **(config or {})})
    app = Starlette(
        routes=routes,
        middleware=[middleware(config)],
        exception_handlers={404: not_found},
    )
    app.state.base_url = config["base_url"]
    return app


def main(factory: Callable[[dict[str, Any]], Any] = create_app) -> None:
    """Warm the store by crawling the site once in process, then serve it.

    ``factory`` builds the app: the FastAPI example serves itself with this too.
    """
    # Imported here: only the script needs it, and it may warn on import.
    from starlette.testclient import TestClient

    base_url = demo_content.local_base_url()
    app = factory({"base_url": base_url})
    with TestClient(app, base_url=base_url) as client:

        def fetch(path: str) -> tuple[int, str, bytes]:
            response = client.get(path, follow_redirects=False)
            content_type = response.headers.get("content-type", "")
            return response.status_code, content_type, response.content

        visited = demo_content.crawl(fetch)
        sitemap = get_sitemap(app)
        sitemap.flush()
    print(demo_content.banner(base_url, visited, sitemap))
    uvicorn.run(app, host=demo_content.HOST, port=demo_content.port())


if __name__ == "__main__":
    main()
