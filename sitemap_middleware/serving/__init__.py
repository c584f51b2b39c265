"""Serving: the documents the middleware answers itself (index, parts, text parts,
robots.txt, the site map page, the IndexNow key file), as ``Response`` values."""
