"""The demo site on Django: the pages of the Flask demo (``demo_content``),
recorded by ``sitemap_middleware.django``.

Run from ``examples/``: ``python django_app/manage.py runserver 127.0.0.1:8000``
(or ``gunicorn django_app.wsgi``, ``uvicorn django_app.asgi:application``), and
``python django_app/manage.py sitemap seed`` to list every page at once.
"""
