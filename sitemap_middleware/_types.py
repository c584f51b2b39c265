"""Type aliases for the two server protocols, so that no framework is imported."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Protocol

Environ = dict[str, Any]
ResponseHeaders = list[tuple[str, str]]


class StartResponse(Protocol):
    def __call__(
        self, status: str, headers: ResponseHeaders, exc_info: Any = ..., /
    ) -> Callable[[bytes], object]: ...


WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
