"""The demo site on Flask, recorded by the ``Sitemap`` extension.

Run: ``python examples/flask_app.py`` (serves http://127.0.0.1:8000, or ``$PORT``).
``demo_content`` is a plain top-level import: running a file puts ``examples/`` on
``sys.path``, and tests that import the apps add that folder themselves.
"""

from __future__ import annotations

from typing import Any

import demo_content
from flask import Blueprint, Flask, abort, current_app, jsonify, redirect, request
from flask.typing import ResponseReturnValue

from sitemap_middleware import site_map, sitemap
from sitemap_middleware.flask import Sitemap, get_sitemap

# The middleware serves a site map for people at /site-map, and /llms.txt;
# /pages is the same map rendered by the app inside its own layout.
DEFAULTS: dict[str, Any] = {
    "base_url": "http://127.0.0.1:8000",
    "html_sitemap": "/site-map",
    "llms_txt": True,
}

site = Blueprint("site", __name__)


@site.get("/")
def home() -> str:
    return demo_content.home_page()


@site.get("/about")
def about() -> str:
    return demo_content.about_page()


@site.get("/blog/")
def blog() -> str:
    return demo_content.blog_page()


@site.get("/blog/<slug>")
@sitemap(params=demo_content.post_params)
def post(slug: str) -> str:
    page = demo_content.post_page(slug)
    if page is None:
        abort(404)
    return page


@site.get("/pages")
def pages() -> str:
    try:
        mapped = site_map(
            get_sitemap(current_app),
            page=request.args.get("page", 1, type=int),
        )
    except LookupError:
        abort(404)
    return demo_content.site_map_page(mapped)


@site.get("/search")
def search() -> str:
    return demo_content.search_page(request.args.get("q", ""))


@site.get("/account")
def account() -> ResponseReturnValue:
    if demo_content.SESSION_COOKIE not in request.cookies:
        return redirect("/login", 302)
    return demo_content.account_page()


@site.get("/login")
def login() -> str:
    return demo_content.login_page()


@site.post("/login")
def sign_in() -> ResponseReturnValue:
    response = redirect("/account", 303)
    response.set_cookie(**demo_content.SESSION_COOKIE_ARGS)
    return response


@site.get("/admin/")
def admin() -> str:
    return demo_content.admin_page()


@site.get("/api/posts")
def api_posts() -> ResponseReturnValue:
    return jsonify(demo_content.posts_json())


@site.get("/draft")
def draft() -> str:
    return demo_content.draft_page()


@site.get("/old")
def old() -> ResponseReturnValue:
    return redirect("/about", 301)


@site.get("/gone")
def gone() -> ResponseReturnValue:
    return demo_content.gone_page(), 410


@site.get("/en/")
def english() -> str:
    return demo_content.language_page("en", current_app.config["SITEMAP"]["base_url"])


@site.get("/de/")
def german() -> str:
    return demo_content.language_page("de", current_app.config["SITEMAP"]["base_url"])


@site.app_errorhandler(404)
def not_found(error: Exception) -> ResponseReturnValue:
    return demo_content.not_found_page(), 404


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """Build the app; ``config`` overrides the sitemap defaults key by key."""
    # The store lives in examples/instance however the app is started: as a
    # script from the checkout, or imported by "sitemap-middleware --app".
    app = Flask(__name__, instance_path=str(demo_content.INSTANCE))
    app.config["SITEMAP"] = {**DEFAULTS, **(config or {})}
    app.register_blueprint(site)
    Sitemap(app)
    return app


def main() -> None:
    """Warm the store by crawling the site once in process, then serve it."""
    base_url = demo_content.local_base_url()
    app = create_app({"base_url": base_url})
    client = app.test_client()

    def fetch(path: str) -> tuple[int, str, bytes]:
        # Closing the response is what tells the middleware it was sent in full.
        with client.get(path, base_url=base_url) as response:
            return response.status_code, response.content_type, response.data

    visited = demo_content.crawl(fetch)
    sitemap = app.extensions["sitemap"]
    sitemap.flush()
    print(demo_content.banner(base_url, visited, sitemap))
    app.run(host=demo_content.HOST, port=demo_content.port())


if __name__ == "__main__":
    main()
