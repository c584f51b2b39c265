"""Watching: the rules a request and its response headers meet on the request path
(``policy``), and the watcher both adapters share (``watcher``)."""
