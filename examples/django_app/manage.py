"""The demo's manage.py: ``python django_app/manage.py runserver`` from examples/."""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    # examples/ holds demo_content and this project.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "django_app.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
