"""The Redis wire format (RESP) the Redis store packs its writes in, and the
MULTI/EXEC it sends them in, beside redis-py's pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import redis

# Arguments of one command at most: a page's members or a batch's rows are
# sent in several.
CHUNK = 2000
_MULTI = b"*1\r\n$5\r\nMULTI\r\n"
_EXEC = b"*1\r\n$4\r\nEXEC\r\n"


def execute(conn: Any, commands: Iterable[bytes]) -> None:
    """MULTI, the commands and EXEC on the watching connection.

    The commands are packed by this module, not by redis-py (about 0.7 µs an
    argument, longer than Redis takes to store it, and a bulk load sends six a
    URL), and each is sent once packed, so a batch is never held packed in
    full. Whatever goes wrong before EXEC's reply is read, the connection is
    closed: Redis then drops the transaction, and no reply is left unread.
    """
    try:
        conn.send_packed_command([_MULTI])
        queued = 0
        for command in commands:
            conn.send_packed_command([command])
            queued += 1
        conn.send_packed_command([_EXEC])
        for _ in range(queued + 1):
            conn.read_response()  # +OK, then +QUEUED for each command
        replies = conn.read_response()
    except BaseException:
        conn.disconnect()
        raise
    if replies is None:
        raise redis.WatchError
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply


def command(*args: str | bytes) -> bytes:
    """One command in RESP."""
    return b"*%d\r\n" % len(args) + b"".join(
        [bulk(arg.encode() if isinstance(arg, str) else arg) for arg in args]
    )


def commands(
    command: bytes, key: str, items: list[bytes], width: int
) -> Iterator[bytes]:
    """``command key`` over items of ``width`` packed arguments each, in
    commands of at most CHUNK items."""
    head = bulk(command) + bulk(key.encode())
    for i in range(0, len(items), CHUNK):
        part = items[i : i + CHUNK]
        yield b"*%d\r\n%b%b" % (2 + width * len(part), head, b"".join(part))


def fields(paths: Iterable[str]) -> list[bytes]:
    return [bulk(path.encode()) for path in paths]


def bulk(arg: bytes) -> bytes:
    """One argument in RESP."""
    return b"$%d\r\n%b\r\n" % (len(arg), arg)
