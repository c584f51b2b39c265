"""Apps shaped like real open-source applications, each installing the middleware as
the README's quick starts say; tests/acceptance/test_real_apps.py serves them with
gunicorn and uvicorn and checks that their sitemap lists exactly their public pages."""
