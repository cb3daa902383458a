"""Load the settings at process start, and turn a configuration mistake into one plain line.

Every entry point (manage.py, the WSGI app, the Celery app) calls ``load_settings`` first, so
an operator sees ``FormFlow cannot start: SECRET_KEY must be set: ...`` instead of a traceback.
"""

from __future__ import annotations

import os
import sys


def load_settings() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings

    from config.env import ConfigError

    try:
        settings.INSTALLED_APPS  # noqa: B018 (reading one setting loads them all)
    except ConfigError as error:
        sys.stderr.write(f"FormFlow cannot start: {error}\n")
        sys.stderr.flush()
        raise SystemExit(1) from None
