"""The demo site on FastAPI, recorded by ``ASGISitemapMiddleware``.

Run: ``python examples/fastapi_app.py`` (serves http://127.0.0.1:8000, or ``$PORT``).
``demo_content`` is a plain top-level import: running a file puts ``examples/`` on
``sys.path``, and tests that import the apps add that folder themselves.
"""

from __future__ import annotations

from typing import Annotated, Any

import demo_content
import starlette_app
from fastapi import APIRouter, Cookie, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from sitemap_middleware import site_map, sitemap
from sitemap_middleware.starlette import add_sitemap, get_sitemap

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

# The HTML pages stay out of the OpenAPI schema; the docs live under /api/
# (the middleware finds FastAPI's own pages wherever they are, and never
# records them).
pages = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)
api = APIRouter(prefix="/api")


@pages.get("/")
async def home() -> str:
    return demo_content.home_page()


@pages.get("/about")
async def about() -> str:
    return demo_content.about_page()


@pages.get("/blog/")
async def blog() -> str:
    return demo_content.blog_page()


@pages.get("/blog/{slug}")
@sitemap(params=demo_content.post_params)
async def post(slug: str) -> str:
    page = demo_content.post_page(slug)
    if page is None:
        raise HTTPException(404)
    return page


@pages.get("/pages")
def all_pages(request: Request, page: int = 1) -> str:
    # A plain def: FastAPI runs it in a thread, as the store read needs.
    try:
        mapped = site_map(get_sitemap(request.app), page=page)
    except LookupError:
        raise HTTPException(404) from None
    return demo_content.site_map_page(mapped)


@pages.get("/search")
async def search(q: str = "") -> str:
    return demo_content.search_page(q)


@pages.get("/account")
async def account(
    session: Annotated[str | None, Cookie(alias=demo_content.SESSION_COOKIE)] = None,
) -> Response:
    if session is None:
        return RedirectResponse("/login", 302)
    return HTMLResponse(demo_content.account_page())


@pages.get("/login")
async def login() -> str:
    return demo_content.login_page()


@pages.post("/login")
async def sign_in() -> Response:
    response = RedirectResponse("/account", 303)
    response.set_cookie(**demo_content.SESSION_COOKIE_ARGS)
    return response


@pages.get("/admin/")
async def admin() -> str:
    return demo_content.admin_page()


@api.get("/posts")
async def api_posts() -> list[dict[str, str]]:
    return demo_content.posts_json()


@pages.get("/draft")
async def draft() -> str:
    return demo_content.draft_page()


@pages.get("/old")
async def old() -> Response:
    return RedirectResponse("/about", 301)


@pages.get("/gone")
async def gone() -> Response:
    return HTMLResponse(demo_content.gone_page(), 410)


@pages.get("/en/")
async def english(request: Request) -> str:
    return demo_content.language_page("en", request.app.state.base_url)


@pages.get("/de/")
async def german(request: Request) -> str:
    return demo_content.language_page("de", request.app.state.base_url)


async def not_found(request: Request, exc: Exception) -> Response:
    return HTMLResponse(demo_content.not_found_page(), 404)


def create_app(config: dict[str, Any] | None = None) -> FastAPI:
    """Build the app; ``config`` overrides the sitemap defaults key by key.
    ``add_sitemap`` checks the config here: a mistake stops the factory, not
    the first request."""
    config = demo_content.with_store_folder({**DEFAULTS, **(config or {})})
    app = FastAPI(
        title=demo_content.SITE_NAME,
        docs_url="/api/docs",
        redoc_url=None,
        openapi_url="/api/openapi.json",
        exception_handlers={404: not_found},
    )
    app.include_router(pages)
    app.include_router(api)
    add_sitemap(app, config)
    app.state.base_url = config["base_url"]
    return app


def main() -> None:
    """Warm the store by crawling the site once in process, then serve it."""
    starlette_app.main(create_app)


if __name__ == "__main__":
    main()
