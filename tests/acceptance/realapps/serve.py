"""A real server (gunicorn or uvicorn) for one of these apps, on a free port and on
the checkout's package, that can be stopped in order and started again on the same
port, store and data; and the sitemap it serves, read as a consumer reads it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from support.helpers import NS, free_port, gunzip_once, stop_server, validate

ACCEPTANCE = Path(__file__).resolve().parents[1]
ROOT = Path(__file__).resolve().parents[3]
HOST = "127.0.0.1"
COMMANDS = {
    # Two workers as a real deployment has; each records in its own process.
    "gunicorn": ["-m", "gunicorn", "-w", "2", "-b", HOST + ":{port}", "entry:app"],
    "uvicorn": ["-m", "uvicorn", "--host", HOST, "--port", "{port}", "entry:app"],
    # The werkzeug development server: one process, as `flask run` starts it.
    "flask": [
        "-m",
        "flask",
        "--app",
        "entry:app",
        "run",
        "--host",
        HOST,
        "--port",
        "{port}",
    ],
}


@dataclass
class Server:
    """``factory`` ("realapps.flaskr:create_app") is called with ``settings`` plus
    the sitemap's dict under "SITEMAP" and a database file under "DATABASE"."""

    kind: str
    factory: str
    folder: Path
    settings: dict[str, Any] = field(default_factory=dict)
    sitemap: dict[str, Any] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    def start(self) -> None:
        module, _, name = self.factory.partition(":")
        settings = {
            **self.settings,
            "DATABASE": str(self.folder / "app.sqlite3"),
            "SITEMAP": {
                "base_url": self.base,
                "store": f"sqlite:///{self.folder}/sitemap.sqlite3",
                **self.sitemap,
            },
        }
        (self.folder / "entry.py").write_text(
            f"import json\nfrom {module} import {name}\n"
            f"app = {name}(json.loads({json.dumps(settings)!r}))\n"
        )
        argv = [part.format(port=self.port) for part in COMMANDS[self.kind]]
        with self.log.open("ab") as output:
            self.process = subprocess.Popen(
                [sys.executable, *argv],
                cwd=self.folder,
                # The checkout's package, whatever the environment has installed.
                env={
                    **os.environ,
                    "PYTHONPATH": os.pathsep.join(
                        map(str, [self.folder, ACCEPTANCE, ROOT])
                    ),
                },
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text()
            try:
                # robots.txt is the middleware's own: asking records nothing.
                if httpx.get(f"{self.base}/robots.txt").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"{self.kind} did not start:\n{self.log.read_text()}")

    def stop(self) -> None:
        """SIGTERM: the orderly shutdown that flushes every worker's queue."""
        if self.process is None:
            return
        process, self.process = self.process, None
        stop_server(process, 20)
        assert process.returncode in (0, -signal.SIGTERM), self.log.read_text()

    def restart(self) -> None:
        self.stop()
        self.start()

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.base, timeout=10, **kwargs)

    @contextmanager
    def browsed(self, *visits: Callable[[Server], None]) -> Iterator[dict[str, Listed]]:
        """Started, browsed by each of ``visits`` in turn, restarted (every
        worker's queue flushed): the sitemap it then serves; stopped after."""
        self.start()
        try:
            for visit in visits:
                visit(self)
            self.restart()
            yield listed(self)
        finally:
            self.stop()


@dataclass(frozen=True)
class Listed:
    """One ``<url>`` of a sitemap part."""

    changefreq: str | None
    images: tuple[str, ...]


def listed(server: Server) -> dict[str, Listed]:
    """Path -> entry for every URL of every part the index lists, each document
    validated against its schemas; {} when the index answers 404 (nothing stored)."""
    with server.client() as client:
        index = client.get("/sitemap.xml")
        if index.status_code == 404:
            return {}
        assert index.status_code == 200, index
        assert index.headers["content-type"] == "application/xml; charset=utf-8"
        entries: dict[str, Listed] = {}
        for part_url in validate(index.content).iterfind(".//sm:loc", NS):
            part = client.get(urlsplit(part_url.text).path)
            assert part.status_code == 200, part
            assert part.headers["content-type"] == "application/gzip"
            for url in validate(gunzip_once(part.content)).iterfind("sm:url", NS):
                loc = url.findtext("sm:loc", namespaces=NS)
                assert loc is not None and loc.startswith(server.base + "/"), loc
                path = loc[len(server.base) :]
                assert path not in entries, f"{path} listed twice"
                images = tuple(
                    urlsplit(image.text or "").path
                    for image in url.iterfind("image:image/image:loc", NS)
                )
                entries[path] = Listed(
                    url.findtext("sm:changefreq", namespaces=NS), images
                )
        return entries
