"""A writer with nothing to write opens nothing: its flush and its stop leave
the store alone (one that is not there is not made), until a page comes."""

from __future__ import annotations

import time
from pathlib import Path

from sitemap_middleware.config import Config
from sitemap_middleware.reasons import RECORD
from sitemap_middleware.recording.observation import Observed
from sitemap_middleware.recording.recorder import Recorder
from sitemap_middleware.routes import Routes
from sitemap_middleware.stores import open_store
from sitemap_middleware.watching.policy import Policy


def _page(config: Config, path: str) -> Observed:
    body = [b"<!doctype html><title>A page</title><p>a page"]
    return Observed(
        action=RECORD,
        key=path,
        path=path,
        query="",
        raw=False,
        route=Routes(config).unknown,
        headers=[("Content-Type", "text/html; charset=utf-8")],
        body=body,
        size=len(body[0]),
        seen=time.time(),
    )


def test_a_writer_with_nothing_to_write_opens_nothing(tmp_path: Path) -> None:
    """A recorder flushed and closed with nothing queued (a command's app
    loaded, asked nothing of its middleware) leaves a store that is not
    there as it is: no file. A page then is written, the store made."""
    path = tmp_path / "s.sqlite3"
    config = Config.from_mapping(
        {"base_url": "https://www.example.com", "store": f"sqlite:///{path}"}
    )
    recorder = Recorder(config, Policy(config), open_store(config.store))
    assert recorder.flush(5.0)
    assert recorder.flush(5.0)
    assert not path.exists()
    recorder.close()
    assert not path.exists()
    again = Recorder(config, Policy(config), open_store(config.store))
    try:
        assert again.flush(5.0)
        again.submit(_page(config, "/a"))
        assert again.flush(5.0)
        assert path.exists()
        assert again.site_stats()["urls"] == 1
    finally:
        again.close()
