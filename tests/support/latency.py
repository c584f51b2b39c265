"""A TCP proxy that delays every chunk each way: a store far away, for the tests
that hold a request's wait bounded whatever the store's latency."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator


class LatencyProxy:
    """Listens on a free local port and forwards each connection to
    ``target``, every chunk delayed by ``delay`` seconds in each direction
    (chunks keep their order; a round trip costs ``2 * delay``)."""

    def __init__(self, target: tuple[str, int], delay: float) -> None:
        self.delay = delay
        self._target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = [self._listener]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._target)
            self._sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(
                    target=self._pipe, args=(source, sink), daemon=True
                ).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        # Each chunk leaves ``delay`` after it arrived: a link's latency, not
        # a slow server's (chunks in flight overlap).
        queue: list[tuple[float, bytes]] = []
        ready = threading.Condition()

        def send() -> None:
            while True:
                with ready:
                    while not queue:
                        ready.wait()
                    due, chunk = queue.pop(0)
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                if not chunk:
                    with contextlib.suppress(OSError):
                        sink.shutdown(socket.SHUT_WR)
                    return
                try:
                    sink.sendall(chunk)
                except OSError:
                    return

        threading.Thread(target=send, daemon=True).start()
        while True:
            try:
                chunk = source.recv(65536)
            except OSError:
                chunk = b""
            with ready:
                queue.append((time.monotonic() + self.delay, chunk))
                ready.notify()
            if not chunk:
                return

    def close(self) -> None:
        self._closed = True
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()


@contextlib.contextmanager
def latency_proxy(target: tuple[str, int], delay: float) -> Iterator[LatencyProxy]:
    proxy = LatencyProxy(target, delay)
    try:
        yield proxy
    finally:
        proxy.close()
