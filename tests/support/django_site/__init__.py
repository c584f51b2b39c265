"""A small Django project as its users write one: public pages, a blog route
with a converter, a class-based view, a contact form with a CSRF token, a
``login_required`` page, the admin and Django's login view, a streaming page, an
async view, and the project's django.contrib.sitemaps at /old-sitemap.xml.
Its store and base URL come from the environment (SITEMAP_TEST_STORE)."""
