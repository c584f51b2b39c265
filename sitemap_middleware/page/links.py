"""The grammar of the HTTP ``Link`` header (RFC 8288): its link-values, each a
target and its parameters, read within a budget; what they mean is the head
scanner's business.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator


def link_values(
    values: Iterable[str | bytes], budget: int
) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """(target, parameters) of every link-value of the field lines, at most
    ``budget`` characters of them all; a link the budget cuts is left out.
    Lines are bytes (ASGI) or latin-1 text (WSGI). Never raises."""
    left = budget
    for value in values:
        if left <= 0:
            return
        text = _field_text(value)
        cut = len(text) > left
        text = text[:left]
        left -= len(text)
        for target, params, end in _links(text):
            if cut and end == len(text):
                break  # the budget cut this link: its parameters may be partial
            yield target, params


# RFC 8288 Appendix B.2-B.4. werkzeug's header helpers do not fit: its
# parse_list_header splits at commas inside <...>, and parse_options_header
# ends the value at the first ";" even inside <...>, drops "rel = x" (RFC 8288
# allows whitespace around "=") and keeps the last of repeated parameters
# where RFC 8288 §3.3 keeps the first rel.
_OWS = re.compile(r"[ \t]*")
_PARAM_NAME = re.compile(r"[^ \t=;,]*")
_TOKEN_VALUE = re.compile(r"[^;,]*")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)(?:"|\\?\Z)', re.DOTALL)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _field_text(value: str | bytes) -> str:
    """A field line's bytes as text: UTF-8 when they are, as a browser reads
    a Location header and as the head's hrefs are read; latin-1 otherwise."""
    if isinstance(value, bytes):
        raw = value
    else:
        try:
            raw = value.encode("latin-1")
        except UnicodeEncodeError:  # not bytes held as latin-1: text already
            return value
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _links(text: str) -> Iterator[tuple[str, list[tuple[str, str]], int]]:
    """The link-values of a field value: (target, parameters, end offset).

    Reading stops at anything that is not a link-value (Appendix B.2).
    """
    i, n = _skip(_OWS, text, 0), len(text)
    while True:
        # Commas separate link-values, and empty list elements are allowed
        # (RFC 9110 §5.6.1).
        while i < n and text[i] == ",":
            i = _skip(_OWS, text, i + 1)
        if i >= n or text[i] != "<":
            return
        close = text.find(">", i + 1)
        if close < 0:
            return
        params, end = _params(text, close + 1)
        yield text[i + 1 : close], params, end
        i = end


def _params(text: str, i: int) -> tuple[list[tuple[str, str]], int]:
    """The ``; name=value`` parameters from ``i`` to the end of the link-value
    (Appendix B.3): names lower-cased, values unquoted."""
    params: list[tuple[str, str]] = []
    n = len(text)
    while True:
        i = _skip(_OWS, text, i)
        if i >= n or text[i] != ";":
            return params, i
        start = _skip(_OWS, text, i + 1)
        i = _skip(_PARAM_NAME, text, start)
        name = text[start:i].lower()
        i = _skip(_OWS, text, i)
        value = ""
        if i < n and text[i] == "=":
            start = _skip(_OWS, text, i + 1)
            quoted = _QUOTED.match(text, start)
            if quoted is not None:
                value = _ESCAPE.sub(r"\1", quoted.group(1))
                i = quoted.end()
            else:
                i = _skip(_TOKEN_VALUE, text, start)
                value = text[start:i]
        params.append((name, value))


def _skip(pattern: re.Pattern[str], text: str, i: int) -> int:
    """The offset past what ``pattern`` matches at ``i`` (it may match nothing)."""
    match = pattern.match(text, i)
    return i if match is None else match.end()


def param(params: list[tuple[str, str]], name: str) -> str | None:
    """The first value of a parameter: later ones are ignored (RFC 8288 §3.3
    says so for rel)."""
    for key, value in params:
        if key == name:
            return value
    return None
