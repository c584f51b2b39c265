"""The project's views: function-based, class-based, sync and async."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.template import engines
from django.views import View

from sitemap_middleware import sitemap

POSTS = ("hello-world", "second-post")


def page(title: str, body: str = "") -> str:
    return (
        f"<!doctype html><html><head><title>{title}</title></head>"
        f"<body><h1>{title}</h1>{body}</body></html>"
    )


def home(request: HttpRequest) -> HttpResponse:
    return HttpResponse(page("Home"))


def about(request: HttpRequest) -> HttpResponse:
    return HttpResponse(page("About"))


@sitemap(changefreq="weekly", params=lambda: ({"slug": slug} for slug in POSTS))
def post(request: HttpRequest, slug: str) -> HttpResponse:
    return HttpResponse(page(slug.replace("-", " ").title()))


@sitemap(priority=0.3)
class Archive(View):
    def get(self, request: HttpRequest) -> HttpResponse:
        return HttpResponse(page("Archive"))


_CONTACT = engines["django"].from_string(
    "<!doctype html><html><head><title>Contact</title></head><body>"
    '<form method="post">{% csrf_token %}<input name="message">'
    "<button>Send</button></form></body></html>"
)


def contact(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return HttpResponse(page("Thanks"))
    return HttpResponse(_CONTACT.render(request=request))


@login_required
def account(request: HttpRequest) -> HttpResponse:
    return HttpResponse(page(f"Account of {request.user}"))


@login_required
def members(request: HttpRequest) -> HttpResponse:
    """A page for members only, at a path no default exclusion names."""
    return HttpResponse(page(f"Members' news for {request.user}"))


def parts(title: str) -> list[str]:
    """A page in five chunks, as a streaming view sends it."""
    head = f"<!doctype html><html><head><title>{title}</title></head><body>"
    return [head, *(f"<p>part {n}</p>" for n in range(3)), "</body></html>"]


HTML = "text/html; charset=utf-8"


def stream(request: HttpRequest) -> StreamingHttpResponse:
    def chunks() -> Iterator[str]:
        yield from parts("Stream")

    return StreamingHttpResponse(chunks(), content_type=HTML)


async def live(request: HttpRequest) -> StreamingHttpResponse:
    """A page streamed by an async generator, as an ASGI project streams."""

    async def chunks() -> AsyncIterator[str]:
        for part in parts("Live"):
            yield part

    return StreamingHttpResponse(chunks(), content_type=HTML)


async def news(request: HttpRequest) -> HttpResponse:
    return HttpResponse(page("News"))
