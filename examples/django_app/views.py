"""The demo's views: the pages of ``demo_content``, as the Flask demo serves them."""

from __future__ import annotations

import demo_content
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    JsonResponse,
)
from django.views.decorators.csrf import csrf_exempt

from sitemap_middleware import site_map, sitemap
from sitemap_middleware.django import get_sitemap


def home(request: HttpRequest) -> HttpResponse:
    return HttpResponse(demo_content.home_page())


def about(request: HttpRequest) -> HttpResponse:
    return HttpResponse(demo_content.about_page())


def blog(request: HttpRequest) -> HttpResponse:
    return HttpResponse(demo_content.blog_page())


@sitemap(params=demo_content.post_params)
def post(request: HttpRequest, slug: str) -> HttpResponse:
    page = demo_content.post_page(slug)
    if page is None:
        raise Http404(slug)
    return HttpResponse(page)


def pages(request: HttpRequest) -> HttpResponse:
    try:
        number = int(request.GET.get("page", "1"))
        mapped = site_map(get_sitemap(), page=number)
    except (LookupError, ValueError):
        raise Http404("no such page") from None
    return HttpResponse(demo_content.site_map_page(mapped))


def search(request: HttpRequest) -> HttpResponse:
    return HttpResponse(demo_content.search_page(request.GET.get("q", "")))


def account(request: HttpRequest) -> HttpResponse:
    if demo_content.SESSION_COOKIE not in request.COOKIES:
        return HttpResponseRedirect("/login")
    return HttpResponse(demo_content.account_page())


@csrf_exempt  # the demo's sign-in form, as the other demos', has no token
def login(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return HttpResponse(demo_content.login_page())
    response = HttpResponseRedirect("/account", status=303)
    response.set_cookie(**demo_content.SESSION_COOKIE_ARGS)
    return response


def admin(request: HttpRequest) -> HttpResponse:
    return HttpResponse(demo_content.admin_page())


def api_posts(request: HttpRequest) -> JsonResponse:
    return JsonResponse(demo_content.posts_json(), safe=False)


def draft(request: HttpRequest) -> HttpResponse:
    return HttpResponse(demo_content.draft_page())


def old(request: HttpRequest) -> HttpResponse:
    return HttpResponseRedirect("/about", status=301)


def gone(request: HttpRequest) -> HttpResponse:
    return HttpResponse(demo_content.gone_page(), status=410)


def language(request: HttpRequest, lang: str) -> HttpResponse:
    from django.conf import settings

    base_url = settings.SITEMAP["base_url"]
    return HttpResponse(demo_content.language_page(lang, base_url))


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return HttpResponse(demo_content.not_found_page(), status=404)
