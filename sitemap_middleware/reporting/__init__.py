"""What the store says about the sitemap's health, for people and for monitoring:
the health report (``health.py``) and its Prometheus collector (``metrics.py``).
"""
