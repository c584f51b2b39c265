"""What the SQLite and PostgreSQL stores share beside the pages: one mixin per
capability (a table beside the pages, its statements written once), and the
dialect that spells them for each database (``dialect.py``).
"""
