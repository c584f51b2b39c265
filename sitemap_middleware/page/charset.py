"""A page's character encoding, sniffed as HTML does (a byte order mark, the
Content-Type charset, a <meta> in the first KiB), and its bytes decoded in it,
so that the head and the title read the same text.
"""

from __future__ import annotations

import codecs
import functools
import re

# HTML, "prescan a byte stream to determine its encoding": a <meta> charset
# counts in the first 1024 bytes only (where HTML requires it to be).
PRESCAN_BYTES = 1024

# A byte order mark and the encoding it names (HTML, "BOM sniff").
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META_CHARSET = re.compile(
    rb"<meta\b[^>]*?\bcharset\s*=\s*[\"']?\s*([A-Za-z0-9_.:()+-]+)", re.IGNORECASE
)
# Codecs that are no character encoding of the web, though Python names them:
# read as one, a page could say what no browser reads in it (UTF-7 decodes
# "+ADw-" as "<"; the WHATWG Encoding Standard maps it to nothing).
_NOT_WEB = frozenset(
    {
        "utf-7",
        "idna",
        "punycode",
        "unicode-escape",
        "raw-unicode-escape",
        "undefined",
        "charmap",
    }
)


def encoding_of(charset: str | None, start: bytes) -> str:
    """The Python codec a page is read with, in the order of HTML's
    "encoding sniffing algorithm": a byte order mark, else ``charset`` (the
    ``Content-Type`` header's), else a ``<meta charset>`` or ``<meta
    http-equiv="Content-Type" content="...; charset=...">`` within the first
    :data:`PRESCAN_BYTES`, else UTF-8. A charset no codec knows counts as
    none. Never raises."""
    for bom, name in _BOMS:
        if start.startswith(bom):
            return name
    if charset is not None:
        found = _codec(charset)
        if found is not None:
            # HTML: a "utf-16" label without a byte order mark is little-endian.
            return "utf-16-le" if found == "utf-16" else found
    match = _META_CHARSET.search(start, 0, PRESCAN_BYTES)
    if match is not None:
        found = _codec(match.group(1).decode("ascii"))
        if found is not None:
            # HTML, "prescan": a page read in ASCII to find its <meta> is no
            # UTF-16 page, whatever the tag says.
            return "utf-8" if found.startswith("utf-16") else found
    return "utf-8"


# The codecs the WHATWG Encoding Standard reads a label's pages with, where
# Python's codec of that name is narrower: browsers read each label as the
# superset its sites write in (ISO-8859-1 and ASCII as windows-1252,
# Shift_JIS with the NEC and IBM characters of windows-31j, EUC-KR as
# windows-949, GB2312 and GBK as GB18030, Big5 with HKSCS), so a page
# labelled with the narrower name holds characters only the wider one reads.
_WHATWG = {
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "iso8859-9": "cp1254",
    "tis-620": "cp874",
    "iso8859-11": "cp874",
    "shift_jis": "cp932",
    "euc_kr": "cp949",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "big5": "big5hkscs",
}
# Labels of the Encoding Standard that Python does not know by that name.
_LABELS = {
    "windows-31j": "cp932",
    "x-sjis": "cp932",
    "x-euc-jp": "euc_jp",
    "x-gbk": "gb18030",
    "windows-874": "cp874",
    "x-cp1252": "cp1252",
    "x-mac-cyrillic": "mac-cyrillic",
    "iso-8859-8-i": "iso8859-8",
    "unicode-1-1-utf-8": "utf-8",
}


@functools.lru_cache(maxsize=64)
def _codec(label: str) -> str | None:
    """The codec of a charset label, or ``None`` (unknown, not text, not
    the web's), read as browsers read it (:data:`_WHATWG`)."""
    label = label.strip()
    label = _LABELS.get(label.lower(), label)
    try:
        name = codecs.lookup(label).name
        "<".encode(name)  # LookupError for a codec of bytes to bytes (base64)
    except (LookupError, ValueError):  # ValueError: a NUL in the label
        return None
    if name in _NOT_WEB or name.startswith("utf-32"):
        return None
    return _WHATWG.get(name, name)


@functools.lru_cache(maxsize=64)
def ascii_compatible(encoding: str) -> bool:
    """Whether ``encoding`` writes the ASCII of markup as ASCII bytes, so
    that the markup can be searched for in the undecoded bytes."""
    probe = "<meta name=robots content=noindex>&#;_:"
    try:
        return probe.encode(encoding) == probe.encode("ascii")
    except (UnicodeError, LookupError):
        return False


def decode(data: bytes, encoding: str) -> str:
    """``data`` as text in ``encoding`` (from :func:`encoding_of`), a byte
    it cannot read replaced, a UTF-8 byte order mark dropped (it is not
    text, HTML "decode"). Never raises."""
    if encoding == "utf-8":
        # utf-8-sig: a byte order mark is not text (HTML, "decode").
        return data.decode("utf-8-sig", "replace")
    try:
        text = data.decode(encoding, "replace")
    except (UnicodeError, LookupError):  # a codec without "replace"
        return data.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text
